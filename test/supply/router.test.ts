/**
 * The supply API against a seeded devnet, every upstream read through the fault proxy: figures equal
 * the chain's truth, the cache and single-flight save upstream reads, every fault fails closed with
 * the right status / code / headers in both modes, nothing failed is cached, the next good read recovers.
 */
import { zeroAddress } from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MemoryTtlCache } from "../../api/cache/ttlCache";
import type { AppDepsInput } from "../../api/deps";
import { silentLogger } from "../../api/observability/logger";
import { TOTAL_LOCKED_CLAIM_CALLDATA, TOTAL_SUPPLY_CALLDATA } from "../../api/supply/reads";
import { formatWei2 } from "../../api/supply/wei";
import { DEVNET_ABIS, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { chainSupplyAt } from "../support/chainTruth";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";
import { ethCallSelector, type RpcFault } from "../support/rpcProxy";

let d: ReadsDevnet;
/** Short server-side TTL and read deadline, so the tests need not wait 5 minutes or 5 seconds. */
const TTL_MS = 400;
const DEADLINE_MS = 300;
/** Short failure backoff, so recovery is seen quickly. */
const BACKOFF_MS = 150;

const isTotalSupplyCall = (m: string, p: unknown[]) => ethCallSelector(m, p) === TOTAL_SUPPLY_CALLDATA;
const isLockedCall = (m: string, p: unknown[]) => ethCallSelector(m, p) === TOTAL_LOCKED_CLAIM_CALLDATA;

function app(over: Partial<AppDepsInput> = {}) {
  return d.app({
    logger: silentLogger,
    supply: {
      cache: new MemoryTtlCache(),
      ttlMs: TTL_MS,
      rpcTimeoutMs: DEADLINE_MS,
      failureBackoffMs: BACKOFF_MS,
    },
    ...over,
  });
}

async function get(a: ReturnType<typeof app>, path: string) {
  const res = await a.request(path);
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The chain's own figures, straight from anvil (not through the proxy), at one block. */
const truth = () => chainSupplyAt(d);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  d = await startReadsDevnet();
});
afterAll(async () => {
  await d?.stop();
});
beforeEach(() => {
  d.proxy.setFault(null);
  d.proxy.reset();
});

describe("figures", () => {
  it("equal the chain's truth after the seeded activity, in JSON and bare", async () => {
    const t = await truth();
    // The seed locked tokens, so circulating differs from total and the test can tell them apart.
    expect(t.locked).toBeGreaterThan(0n);
    const a = app();
    const total = await get(a, "/api/supply/total");
    expect(total.status).toBe(200);
    expect(JSON.parse(total.text)).toEqual({ result: formatWei2(t.total) });
    expect(total.headers.get("content-type")).toMatch(/^application\/json/);
    expect(total.headers.get("cache-control")).toBe("public, max-age=300");
    expect(total.headers.get("access-control-allow-origin")).toBe("*");
    expect(total.headers.get("x-supply-error")).toBeNull();

    const circ = await get(a, "/api/supply/circulating");
    expect(circ.status).toBe(200);
    expect(JSON.parse(circ.text)).toEqual({ result: formatWei2(t.circulating) });
    expect(circ.headers.get("cache-control")).toBe("public, max-age=300");

    const bareTotal = await get(a, "/api/supply/total?format=bare");
    expect(bareTotal.text).toBe(formatWei2(t.total));
    expect(bareTotal.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(bareTotal.headers.get("access-control-allow-origin")).toBe("*");
    const bareCirc = await get(a, "/api/supply/circulating?format=bare");
    expect(bareCirc.text).toBe(formatWei2(t.circulating));
  });

  it("max is null, cached 24 h, needs no RPC and answers without RPC_URL", async () => {
    const a = app({ config: { ...d.config, rpcUrl: null }, rpc: null });
    const json = await get(a, "/api/supply/max");
    expect(json.status).toBe(200);
    expect(json.text).toBe('{"result":null}');
    expect(json.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(json.headers.get("access-control-allow-origin")).toBe("*");
    const bare = await get(a, "/api/supply/max?format=bare");
    expect(bare.status).toBe(200);
    expect(bare.text).toBe("null");
    expect(bare.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(d.proxy.count()).toBe(0);
  });

  it("both figures are one read: eth_blockNumber then one batch pinned to that block (its header too), whichever route asks", async () => {
    for (const [first, second] of [
      ["total", "circulating"],
      ["circulating", "total"],
    ]) {
      const a = app();
      d.proxy.reset();
      await get(a, `/api/supply/${first}`);
      const [bn, header, ...batch] = d.proxy.calls;
      expect([bn?.method, header?.method]).toEqual(["eth_blockNumber", "eth_getBlockByNumber"]);
      expect(batch.map((c) => ethCallSelector(c.method, c.params))).toEqual([
        TOTAL_SUPPLY_CALLDATA,
        TOTAL_LOCKED_CLAIM_CALLDATA,
      ]);
      // The other route answers from the same entry: nothing more is read.
      expect((await get(a, `/api/supply/${second}`)).status).toBe(200);
      expect(d.proxy.count()).toBe(4);
    }
    d.proxy.reset();
    await get(app(), "/api/supply/circulating");
    const [bn, header, ...batch] = d.proxy.calls;
    expect(bn?.method).toBe("eth_blockNumber");
    expect(batch.map((c) => ethCallSelector(c.method, c.params))).toEqual([
      TOTAL_SUPPLY_CALLDATA,
      TOTAL_LOCKED_CLAIM_CALLDATA,
    ]);
    // The block's header (for its hash: the reorg check) rides in the same batch, at the same block.
    expect([header, ...batch].every((c) => c?.batch && c.roundTrip === batch[0]!.roundTrip)).toBe(true);
    const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    expect(header?.params).toEqual([`0x${head.toString(16)}`, false]);
    expect(batch.map((c) => c.params[1])).toEqual([`0x${head.toString(16)}`, `0x${head.toString(16)}`]);
    expect(d.proxy.roundTrips()).toBe(2);
  });

  it("follow new locks, unlocks and mints once the cache window ends, and not before", async () => {
    const a = app();
    const before = await truth();
    expect(JSON.parse((await get(a, "/api/supply/circulating")).text).result).toBe(formatWei2(before.circulating));
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(formatWei2(before.total));

    const { fresh, carol, deployer } = DEVNET_ACCOUNTS;
    const { AssetToken, Furnace, VeLockNFT } = d.deployment.addresses;
    const amount = 1_234_567_890_123_456_789_012n; // 1234.567… tokens: moves the second decimal
    await sendTx(d.chain, fresh.privateKey, {
      address: AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "approve",
      args: [Furnace, amount],
    });
    // Through the Furnace, as on Base; a 7-day lock gets no devnet bonus.
    await sendTx(d.chain, fresh.privateKey, {
      address: Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [amount, 0n, 7n * 86_400n, false, 1n],
    });
    await sendTx(d.chain, deployer.privateKey, {
      address: AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [deployer.address, 777n * 10n ** 16n],
    });
    const afterLock = await truth();
    expect(afterLock.circulating).not.toBe(before.circulating);
    expect(afterLock.total).toBe(before.total + 777n * 10n ** 16n);

    // Still inside the window: the cached figures, no upstream read.
    d.proxy.reset();
    expect(JSON.parse((await get(a, "/api/supply/circulating")).text).result).toBe(formatWei2(before.circulating));
    expect(d.proxy.count()).toBe(0);

    await sleep(TTL_MS + 50);
    expect(JSON.parse((await get(a, "/api/supply/circulating")).text).result).toBe(formatWei2(afterLock.circulating));
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(formatWei2(afterLock.total));

    // carol's 7-day lock expired during the seed's time travel: unlocking returns it to circulation.
    await sendTx(d.chain, carol.privateKey, {
      address: VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "unlock",
      args: [d.seed.tokenIds.carolExpired],
    });
    const afterUnlock = await truth();
    expect(afterUnlock.circulating).toBeGreaterThan(afterLock.circulating);
    await sleep(TTL_MS + 50);
    expect((await get(a, "/api/supply/circulating?format=bare")).text).toBe(formatWei2(afterUnlock.circulating));
  });
});

describe("one block for both figures", () => {
  it("a supply change between the two requests: circulating is still total − locked at the block of the total served", async () => {
    const a = app({
      supply: { cache: new MemoryTtlCache(), ttlMs: 60_000, rpcTimeoutMs: DEADLINE_MS, failureBackoffMs: BACKOFF_MS },
    });
    const before = await truth();
    const total = JSON.parse((await get(a, "/api/supply/total")).text).result;
    expect(total).toBe(formatWei2(before.total));
    // More is minted than is locked: read at a later block, circulating would exceed the total just served.
    const { deployer } = DEVNET_ACCOUNTS;
    await sendTx(d.chain, deployer.privateKey, {
      address: d.deployment.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [deployer.address, before.locked + 10n ** 21n],
    });
    const after = await truth();
    expect(after.circulating).toBeGreaterThan(before.total);
    const circulating = (await get(a, "/api/supply/circulating?format=bare")).text;
    expect(circulating).toBe(formatWei2(before.circulating));
    expect(BigInt(circulating.replace(".", ""))).toBeLessThanOrEqual(BigInt(total.replace(".", "")));
  });
});

describe("cache", () => {
  it("serves concurrent misses of both routes from one upstream read, then from memory", async () => {
    const a = app();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        get(a, i % 2 ? "/api/supply/total" : "/api/supply/circulating?format=bare"),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    // One read for both figures.
    expect(d.proxy.count("eth_blockNumber")).toBe(1);
    expect(d.proxy.calls.filter((c) => isTotalSupplyCall(c.method, c.params))).toHaveLength(1);
    expect(d.proxy.calls.filter((c) => isLockedCall(c.method, c.params))).toHaveLength(1);
    const before = d.proxy.count();
    for (let i = 0; i < 20; i++) await get(a, "/api/supply/total");
    expect(d.proxy.count()).toBe(before);
  });

  it("the deadline cancels the upstream call: the node's connection is closed, nothing runs on", async () => {
    // The node would answer after 3 s; the client's own timeout (15 s) is far off.
    d.proxy.setFault({ kind: "delay", ms: 3_000 });
    for (const metric of ["total", "circulating"] as const) {
      d.proxy.reset();
      const started = performance.now();
      const res = await get(app(), `/api/supply/${metric}`);
      expect([res.status, res.headers.get("x-supply-error")]).toEqual([502, "SUPPLY_RPC_UNREACHABLE"]);
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 1_000);
      // The cancelled round trip is seen closing at the proxy within moments, long before the 3 s answer.
      const closedBy = performance.now() + 1_000;
      while (d.proxy.abandoned() < 1 && performance.now() < closedBy) await sleep(10);
      expect([metric, d.proxy.abandoned(), d.proxy.roundTrips()]).toEqual([metric, 1, 1]);
    }
  });

  it("the default read deadline is the node timeout capped at 5 s", async () => {
    const { supplyRpcTimeoutMs } = await import("../../api/supply/router");
    expect(supplyRpcTimeoutMs(15_000)).toBe(5_000);
    expect(supplyRpcTimeoutMs(800)).toBe(800);
  });
});

type Case = { name: string; fault: RpcFault; code: string };
const invalidShapes: [string, unknown][] = [
  ["null", null],
  ["0x", "0x"],
  ["short", `0x${"ab".repeat(31)}`],
  ["long", `0x${"00".repeat(33)}`],
  ["non-hex", `0x${"zz".repeat(32)}`],
  ["no 0x prefix", "00".repeat(32)],
  ["a number", 5],
  ["an object", { value: `0x${"00".repeat(32)}` }],
];
const CASES: Case[] = [
  { name: "node down", fault: { kind: "down" }, code: "SUPPLY_RPC_UNREACHABLE" },
  { name: "slow past the deadline", fault: { kind: "delay", ms: DEADLINE_MS + 700 }, code: "SUPPLY_RPC_UNREACHABLE" },
  { name: "HTTP 500", fault: { kind: "http", status: 500 }, code: "SUPPLY_RPC_UNREACHABLE" },
  { name: "HTTP 429", fault: { kind: "http", status: 429 }, code: "SUPPLY_RPC_UNREACHABLE" },
  {
    name: "JSON-RPC error",
    fault: { kind: "rpcError", code: 3, message: "execution reverted", data: "0x" },
    code: "SUPPLY_RPC_INVALID_UINT256",
  },
  {
    // A well-formed figure (1000 tokens) under an id the service never sent: another request's answer. On
    // circulating it is eth_blockNumber's, a single call too; a batch member under another id was refused already.
    name: "an answer under another id",
    fault: { kind: "result", value: `0x${(1000n * 10n ** 18n).toString(16).padStart(64, "0")}`, id: 424242 },
    code: "SUPPLY_RPC_INVALID_UINT256",
  },
  {
    name: "HTTP 200 with an HTML page",
    fault: { kind: "body", text: "<html>bad gateway</html>", contentType: "text/html" },
    code: "SUPPLY_RPC_INVALID_UINT256",
  },
  {
    name: "HTTP 200 with truncated JSON",
    fault: { kind: "body", text: '{"jsonrpc":"2.0","id":1,"result":"0x00' },
    code: "SUPPLY_RPC_INVALID_UINT256",
  },
  ...invalidShapes.map(([name, value]) => ({
    name: `result ${name}`,
    fault: { kind: "result", value, match: (m: string) => m === "eth_call" } as RpcFault,
    code: "SUPPLY_RPC_INVALID_UINT256",
  })),
];

describe.each(["total", "circulating"] as const)("faults on /%s", (metric) => {
  it.each(CASES.flatMap((c) => (["json", "bare"] as const).map((mode) => ({ ...c, mode }))))(
    "$name ($mode) → 502 $code, no-store, nothing cached, the next good read recovers",
    async ({ fault, code, mode }) => {
      const a = app();
      const path = `/api/supply/${metric}${mode === "bare" ? "?format=bare" : ""}`;
      d.proxy.setFault(fault);
      const started = performance.now();
      const bad = await get(a, path);
      // A hung node never holds the client much past the deadline.
      expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 400);
      expect(bad.status).toBe(502);
      expect(bad.headers.get("x-supply-error")).toBe(code);
      expect(bad.headers.get("cache-control")).toBe("no-store");
      expect(bad.headers.get("access-control-allow-origin")).toBe("*");
      if (mode === "bare") expect(bad.text).toBe("");
      else expect(JSON.parse(bad.text)).toEqual({ result: null, error: code });
      expect(d.proxy.count()).toBeGreaterThan(0);

      // Within the backoff the failure is answered again (same code, same headers) without asking the node.
      const readsBefore = d.proxy.count();
      const again = await get(a, path);
      expect(again.status).toBe(502);
      expect(again.headers.get("x-supply-error")).toBe(code);
      expect(again.headers.get("cache-control")).toBe("no-store");
      expect(d.proxy.count()).toBe(readsBefore);

      // After it, the node is asked again: the failure was never cached as a success.
      await sleep(BACKOFF_MS + 20);
      expect((await get(a, path)).status).toBe(502);
      expect(d.proxy.count()).toBeGreaterThan(readsBefore);

      d.proxy.setFault(null);
      await sleep(BACKOFF_MS + 20);
      const readsAtRecovery = d.proxy.count();
      const good = await get(a, path);
      const t = await truth();
      expect(good.status).toBe(200);
      const value = mode === "bare" ? good.text : JSON.parse(good.text).result;
      expect(value).toBe(formatWei2(t[metric]));
      expect(d.proxy.count()).toBeGreaterThan(readsAtRecovery);
    },
  );
});

describe("circulating fails closed on any one bad member", () => {
  it.each([
    [
      "totalLockedClaim() malformed",
      "SUPPLY_RPC_INVALID_UINT256",
      { kind: "result", value: "0x", match: isLockedCall },
    ],
    ["totalSupply() reverted", "SUPPLY_RPC_INVALID_UINT256", { kind: "rpcError", code: 3, match: isTotalSupplyCall }],
    [
      "eth_blockNumber not a quantity",
      "SUPPLY_RPC_INVALID_UINT256",
      { kind: "result", value: "latest", match: (m: string) => m === "eth_blockNumber" },
    ],
    [
      "eth_blockNumber unreachable",
      "SUPPLY_RPC_UNREACHABLE",
      { kind: "down", match: (m: string) => m === "eth_blockNumber" },
    ],
    ["locked > total", "SUPPLY_INCONSISTENT", { kind: "result", value: `0x${"ff".repeat(32)}`, match: isLockedCall }],
  ] as [string, string, RpcFault][])("%s → %s", async (_name, code, fault) => {
    const a = app();
    d.proxy.setFault(fault);
    for (const mode of ["", "?format=bare"]) {
      const bad = await get(a, `/api/supply/circulating${mode}`);
      expect(bad.status).toBe(502);
      expect(bad.headers.get("x-supply-error")).toBe(code);
      expect(bad.headers.get("cache-control")).toBe("no-store");
    }
    d.proxy.setFault(null);
    await sleep(BACKOFF_MS + 20);
    const good = await get(a, "/api/supply/circulating");
    expect(JSON.parse(good.text).result).toBe(formatWei2((await truth()).circulating));
  });

  it("locked ≥ total fails circulating only: the total of the same read is served, and both are read again after the backoff", async () => {
    const a = app();
    const t = await truth();
    d.proxy.setFault({ kind: "result", value: `0x${"ff".repeat(32)}`, match: isLockedCall });
    const circ = await get(a, "/api/supply/circulating?format=bare");
    expect([circ.status, circ.text, circ.headers.get("x-supply-error")]).toEqual([502, "", "SUPPLY_INCONSISTENT"]);
    // The total is a figure in its own right (≥ 0.01 token at that block): an aggregator listing it lists the chain's.
    const total = await get(a, "/api/supply/total");
    expect([total.status, JSON.parse(total.text).result]).toEqual([200, formatWei2(t.total)]);
    expect(total.headers.get("cache-control")).toBe("public, max-age=300");
    // One read answered both, and is not read again within the backoff.
    expect(d.proxy.count("eth_blockNumber")).toBe(1);
    expect((await get(a, "/api/supply/circulating")).headers.get("x-supply-error")).toBe("SUPPLY_INCONSISTENT");
    expect(d.proxy.count("eth_blockNumber")).toBe(1);
    // Kept no longer than a failure: the node answering again, both figures come from the next read.
    d.proxy.setFault(null);
    await sleep(BACKOFF_MS + 20);
    expect(JSON.parse((await get(a, "/api/supply/circulating")).text).result).toBe(formatWei2(t.circulating));
    expect(d.proxy.count("eth_blockNumber")).toBe(2);
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(formatWei2(t.total));
    expect(d.proxy.count("eth_blockNumber")).toBe(2);
  });

  it("a zero totalSupply() fails closed on both routes, and locked = total on circulating (never a 0.00)", async () => {
    const zero = `0x${"00".repeat(32)}`;
    const a = app();
    d.proxy.setFault({ kind: "result", value: zero, match: isTotalSupplyCall });
    for (const path of ["/api/supply/total", "/api/supply/circulating", "/api/supply/total?format=bare"]) {
      const bad = await get(a, path);
      expect(bad.status, path).toBe(502);
      expect(bad.headers.get("x-supply-error"), path).toBe("SUPPLY_INCONSISTENT");
      expect(bad.headers.get("cache-control"), path).toBe("no-store");
    }
    // Locked equal to the total (the same word for both): circulating would be zero.
    const { total } = await truth();
    d.proxy.setFault({ kind: "result", value: `0x${total.toString(16).padStart(64, "0")}`, match: isLockedCall });
    await sleep(BACKOFF_MS + 20);
    const equal = await get(a, "/api/supply/circulating");
    expect(equal.status).toBe(502);
    expect(equal.headers.get("x-supply-error")).toBe("SUPPLY_INCONSISTENT");
    // Nothing wrong was kept: the node answering again, the figures are the chain's.
    d.proxy.setFault(null);
    await sleep(BACKOFF_MS + 20);
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(formatWei2((await truth()).total));
    expect(JSON.parse((await get(a, "/api/supply/circulating")).text).result).toBe(
      formatWei2((await truth()).circulating),
    );
  });

  it("a figure below 0.01 token fails closed like a zero (never a 0.00, nothing cached); 0.01 is a figure", async () => {
    const word = (wei: bigint) => `0x${wei.toString(16).padStart(64, "0")}`;
    const CENT = 10n ** 16n;
    const { total, locked } = await truth();
    const bad: [string, string, RpcFault][] = [
      ["/api/supply/total", "total 1 wei", { kind: "result", value: word(1n), match: isTotalSupplyCall }],
      ["/api/supply/total", "total 0.01 − 1 wei", { kind: "result", value: word(CENT - 1n), match: isTotalSupplyCall }],
      ["/api/supply/circulating", "total 1 wei", { kind: "result", value: word(1n), match: isTotalSupplyCall }],
      [
        "/api/supply/circulating",
        "locked = total − 1 wei",
        { kind: "result", value: word(total - 1n), match: isLockedCall },
      ],
      [
        "/api/supply/circulating",
        "total = locked + 0.01 − 1 wei",
        { kind: "result", value: word(locked + CENT - 1n), match: isTotalSupplyCall },
      ],
    ];
    for (const [path, name, fault] of bad) {
      const a = app();
      d.proxy.setFault(fault);
      for (const mode of ["", "?format=bare"]) {
        const res = await get(a, `${path}${mode}`);
        expect([name, path, mode, res.status, res.headers.get("x-supply-error")]).toEqual([
          name,
          path,
          mode,
          502,
          "SUPPLY_INCONSISTENT",
        ]);
        expect(res.headers.get("cache-control")).toBe("no-store");
        if (mode !== "") expect(res.text).toBe("");
      }
      // Nothing was kept: the node answering again, the figure is the chain's.
      d.proxy.setFault(null);
      await sleep(BACKOFF_MS + 20);
      const metric = path.endsWith("total") ? "total" : "circulating";
      expect([name, JSON.parse((await get(a, path)).text).result]).toEqual([name, formatWei2((await truth())[metric])]);
    }
    // Exactly 0.01 token is the smallest figure, answered.
    for (const [path, fault] of [
      ["/api/supply/total", { kind: "result", value: word(CENT), match: isTotalSupplyCall }],
      ["/api/supply/circulating", { kind: "result", value: word(locked + CENT), match: isTotalSupplyCall }],
    ] as [string, RpcFault][]) {
      d.proxy.setFault(fault);
      const res = await get(app(), path);
      expect([path, res.status, JSON.parse(res.text)]).toEqual([path, 200, { result: "0.01" }]);
    }
  });

  it("a valid zero word is a real zero, not a failure (only malformed payloads fail)", async () => {
    const a = app();
    d.proxy.setFault({ kind: "result", value: `0x${"00".repeat(32)}`, match: isLockedCall });
    const res = await get(a, "/api/supply/circulating");
    expect(JSON.parse(res.text).result).toBe(formatWei2((await truth()).total));
  });
});

describe("configuration errors", () => {
  it("no RPC URL → 502 SUPPLY_NO_RPC_URL on total and circulating, the server still runs", async () => {
    const a = app({ config: { ...d.config, rpcUrl: null }, rpc: null });
    for (const metric of ["total", "circulating"]) {
      const json = await get(a, `/api/supply/${metric}`);
      expect(json.status).toBe(502);
      expect(JSON.parse(json.text)).toEqual({ result: null, error: "SUPPLY_NO_RPC_URL" });
      expect(json.headers.get("cache-control")).toBe("no-store");
      const bare = await get(a, `/api/supply/${metric}?format=bare`);
      expect(bare.status).toBe(502);
      expect(bare.text).toBe("");
      expect(bare.headers.get("x-supply-error")).toBe("SUPPLY_NO_RPC_URL");
      expect(bare.headers.get("access-control-allow-origin")).toBe("*");
    }
    expect((await get(a, "/api/supply/max")).status).toBe(200);
  });

  it("a contract missing from the manifest, or at the zero address → 502 SUPPLY_NOT_DEPLOYED, no RPC", async () => {
    const noVe = app({
      config: d.configWith((m) => {
        delete m.contracts.VeLockNFT;
        return m;
      }),
    });
    expect((await get(noVe, "/api/supply/total")).status).toBe(200);
    d.proxy.reset();
    const circ = await get(noVe, "/api/supply/circulating?format=bare");
    expect([circ.status, circ.text, circ.headers.get("x-supply-error")]).toEqual([502, "", "SUPPLY_NOT_DEPLOYED"]);

    const zeroToken = app({
      config: d.configWith((m) => {
        m.contracts.AssetToken = { address: zeroAddress };
        return m;
      }),
    });
    for (const metric of ["total", "circulating"]) {
      const res = await get(zeroToken, `/api/supply/${metric}`);
      expect(res.status).toBe(502);
      expect(JSON.parse(res.text)).toEqual({ result: null, error: "SUPPLY_NOT_DEPLOYED" });
    }
    expect(d.proxy.count()).toBe(0);
  });
});

describe("format and other parameters", () => {
  it("format=json is the default JSON; other parameters (cache-busters) are ignored", async () => {
    const a = app();
    const t = await truth();
    for (const q of ["?format=json", "?_=1700000000", "?format=json&cb=x", "?foo=bar&format=json"]) {
      const res = await get(a, `/api/supply/total${q}`);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ result: formatWei2(t.total) });
    }
    const bare = await get(a, "/api/supply/total?cb=1&format=bare");
    expect(bare.text).toBe(formatWei2(t.total));
  });

  // Spec §4.1: "Without format=bare the JSON shape of 2.1 is returned" — a format other than bare is the JSON answer
  // with its figure, never an error; `format` given twice is bare only when both say bare.
  it.each([
    ["?format=xml", "json"],
    ["?format=BARE", "json"],
    ["?format=", "json"],
    ["?format", "json"],
    ["?format=json&format=bare", "json"],
    ["?format=bare&format=bare", "bare"],
  ])("%s → 200 in the %s shape with the figure", async (q, shape) => {
    const a = app();
    const t = await truth();
    const want = { total: formatWei2(t.total), circulating: formatWei2(t.total - t.locked), max: null } as const;
    for (const metric of ["total", "circulating", "max"] as const) {
      const res = await get(a, `/api/supply/${metric}${q}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      if (shape === "json") {
        expect(res.headers.get("content-type")).toBe("application/json; charset=UTF-8");
        expect(JSON.parse(res.text)).toEqual({ result: want[metric] });
      } else {
        expect(res.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
        expect(res.text).toBe(want[metric] ?? "null");
      }
    }
  });
});

describe("HTTP edges", () => {
  it("is never rate-limited, even with a budget of 2", async () => {
    const a = app({ config: { ...d.config, rateLimit: { max: 2, windowSec: 60 } } });
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await get(a, "/api/supply/max")).status);
    for (let i = 0; i < 30; i++) statuses.push((await get(a, "/api/supply/total")).status);
    expect(new Set(statuses)).toEqual(new Set([200]));
  });

  it("OPTIONS preflight answers 204 with CORS", async () => {
    const res = await app().request("/api/supply/circulating", { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("backoff when the node fails", () => {
  it("an outage costs the node about one read per backoff interval for both figures, every answer still a 502", async () => {
    const backoffMs = 200;
    const a = app({
      supply: { cache: new MemoryTtlCache(), rpcTimeoutMs: DEADLINE_MS, failureBackoffMs: backoffMs },
    });
    d.proxy.setFault({ kind: "http", status: 500 });
    const statuses = new Map<string, number>();
    const until = performance.now() + 1_000;
    const client = async (path: string) => {
      while (performance.now() < until) {
        const res = await get(a, path);
        const key = `${res.status} ${res.headers.get("x-supply-error")}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    };
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => client(i % 2 ? "/api/supply/total" : "/api/supply/circulating?format=bare")),
    );
    // Every answer failed closed with the failure's own code; none was a figure.
    expect([...statuses.keys()]).toEqual(["502 SUPPLY_RPC_UNREACHABLE"]);
    expect(statuses.get("502 SUPPLY_RPC_UNREACHABLE")).toBeGreaterThan(100);
    // One read for both routes, whose eth_blockNumber fails first; 1 s / 200 ms ≈ 5 reads in all.
    expect(d.proxy.count("eth_call")).toBe(0);
    expect(d.proxy.count("eth_blockNumber")).toBeGreaterThanOrEqual(3);
    expect(d.proxy.count("eth_blockNumber")).toBeLessThanOrEqual(7);
  });

  it("a success ends the backoff for good: the figure is cached and served as usual", async () => {
    const a = app();
    d.proxy.setFault({ kind: "down" });
    expect((await get(a, "/api/supply/total")).status).toBe(502);
    d.proxy.setFault(null);
    await sleep(BACKOFF_MS + 20);
    const good = await get(a, "/api/supply/total");
    expect(good.status).toBe(200);
    expect(JSON.parse(good.text).result).toBe(formatWei2((await truth()).total));
    const reads = d.proxy.count();
    expect((await get(a, "/api/supply/total")).status).toBe(200);
    expect(d.proxy.count()).toBe(reads);
  });
});
