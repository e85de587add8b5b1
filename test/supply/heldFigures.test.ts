/**
 * A process that holds figures within their window keeps answering them when a re-read fails, whatever the failure
 * (docs/api.md "Supply API", "A failed re-read"), from the API process as operators run it (dist/server/main.js, no
 * index) over a seeded devnet behind the fault proxy, with a real Redis:
 *
 * - two replicas sharing Redis, Redis loses the entry and the node fails (down, a garbled word, hung): both answer
 *   their held figures with an Age that grows, never a 502 (before: 502 as soon as the entry was gone);
 * - a node one block behind in a load-balanced pool (a second anvil, forked one block behind, and a per-request
 *   alternating balancer in front of both): the block eth_blockNumber just named is missing on the backend of the
 *   batch; no 502 SUPPLY_RPC_INVALID_UINT256, never an older block. With nothing held, that batch is asked again at
 *   once (200 when the retry finds the block), else 502 SUPPLY_RPC_LAGGING, not a malformed uint256;
 * - a total above SUPPLY_TOTAL_CEILING_WEI (the all-ones word) fails closed with SUPPLY_INCONSISTENT and is never
 *   written to Redis (before: published for the whole window).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { numberToHex } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { TOTAL_SUPPLY_CALLDATA } from "../../api/supply/reads";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import type { ServiceChild } from "../support/replica";
import { ethCallSelector, type RpcFault } from "../support/rpcProxy";
import { chainFigures, mintSupply, rpcResult, servedFigures, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: an in-process copy is re-validated against Redis at least this often. */
const REVALIDATE_MS = 1_000;

const s = supplyProcesses("supplyheld");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOKENS = 10n ** 18n;
const ALL_ONES = `0x${"f".repeat(64)}`;
const isTotalSupplyCall = (m: string, p: unknown[]) => ethCallSelector(m, p) === TOTAL_SUPPLY_CALLDATA;

type Got = { status: number; result: string | null; error: string | null; age: number | null; cache: string | null };
async function get(p: ServiceChild, path: string): Promise<Got> {
  const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(15_000) });
  const body = JSON.parse(await res.text()) as { result: string | null; error?: string };
  const age = res.headers.get("age");
  return {
    status: res.status,
    result: body.result,
    error: body.error ?? null,
    age: age === null ? null : Number(age),
    cache: res.headers.get("cache-control"),
  };
}
/** Every answer of a poll as `status:result-or-code`, counted. */
const tally = (answers: readonly Got[]) =>
  answers.reduce<Record<string, number>>((t, r) => {
    const k = `${r.status}:${r.result ?? r.error}`;
    t[k] = (t[k] ?? 0) + 1;
    return t;
  }, {});

const rpc = rpcResult;

describe("Redis loses the entry and the node fails: replicas holding figures keep answering them", () => {
  const faults: [string, RpcFault][] = [
    ["down", { kind: "down" }],
    ["garbled", { kind: "result", value: "0x1234", match: isTotalSupplyCall }],
    ["hung", { kind: "delay", ms: 20_000 }],
  ];
  it("down, garbled, hung: both replicas answer 200 with their figures and an Age that grows, never a 502", async () => {
    const [a, b] = [await s.api(), await s.api()];
    const held = await chainFigures(s.d);
    expect(await servedFigures(a)).toEqual(held);
    expect(await servedFigures(b)).toEqual(held);
    const readAt = Date.now();
    for (const [name, fault] of faults) {
      s.d.proxy.setFault(fault);
      await s.admin.del(s.figuresKey());
      // The 1-s re-validation is due: the next request finds no entry in Redis and reads the failing node.
      await sleep(REVALIDATE_MS + 100);
      const polls = name === "hung" ? 2 : 8;
      const seen: Got[] = [];
      for (let i = 0; i < polls; i++) {
        const round = await Promise.all(
          [a, b].flatMap((p) => [get(p, "/api/supply/total"), get(p, "/api/supply/circulating")]),
        );
        seen.push(...round);
        await sleep(250);
      }
      const expected = seen.length / 2;
      expect([name, tally(seen)]).toEqual([
        name,
        { [`200:${held.total}`]: expected, [`200:${held.circulating}`]: expected },
      ]);
      // The figures' Age counts from their own read, whichever replica answers.
      const ages = seen.map((r) => r.age ?? -1);
      const since = Math.floor((Date.now() - readAt) / 1000);
      expect(Math.max(...ages), name).toBeGreaterThanOrEqual(since - 1);
      expect(Math.max(...ages), name).toBeLessThanOrEqual(since + 1);
      expect(Math.min(...ages), name).toBeGreaterThanOrEqual(1);
      // Nothing of the failed read was written as figures.
      expect(await s.admin.get(s.figuresKey()), name).toBeNull();
    }
    // The node recovers: a new read is served again.
    s.d.proxy.setFault(null);
    await sleep(2_100);
    expect(await servedFigures(a)).toEqual(held);
    expect((await get(a, "/api/supply/total")).age).toBeLessThanOrEqual(1);
  });
});

describe("a node one block behind in a load-balanced pool", () => {
  let balancer: Server | undefined;
  let lagging: AnvilHandle | undefined;
  afterEach(async () => {
    await new Promise((r) => (balancer ? balancer.close(r) : r(undefined)));
    balancer = undefined;
    await lagging?.stop();
    lagging = undefined;
  });

  it("entry lost again and again: the figures held (or the fresh block's), no 502 SUPPLY_RPC_INVALID_UINT256, never an older block", async () => {
    const head = await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    lagging = await startAnvil({ forkUrl: s.d.anvil.rpcUrl, forkBlockNumber: head });
    const older = await chainFigures(s.d);
    await mintSupply(s.d, 1_000n * TOKENS);
    const newer = await chainFigures(s.d);
    expect(newer).not.toEqual(older);
    // The lagging backend knows no block at the fresh head.
    expect(await rpc(lagging.rpcUrl, "eth_getBlockByNumber", [numberToHex(head + 1n), false])).toBeNull();
    let turn = 0;
    const backends = [s.d.anvil.rpcUrl, lagging.rpcUrl];
    balancer = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      const up = await fetch(backends[turn++ % 2]!, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      res.writeHead(up.status, { "content-type": "application/json" }).end(await up.text());
    });
    // A free port, like the nodes': test files running side by side never collide.
    await new Promise<void>((r) => balancer!.listen(0, "127.0.0.1", () => r()));
    const balancerUrl = `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`;

    const a = await s.api();
    expect(await servedFigures(a)).toEqual(newer);
    s.d.proxy.setUpstream(balancerUrl);
    s.d.proxy.reset();
    const seen: Got[] = [];
    const until = Date.now() + 12_000;
    let lost = 0;
    while (Date.now() < until) {
      if (Date.now() - lost > 1_500) {
        await s.admin.del(s.figuresKey());
        lost = Date.now();
      }
      seen.push(await get(a, "/api/supply/total"), await get(a, "/api/supply/circulating"));
      await sleep(50);
    }
    const t = tally(seen);
    expect(t).toEqual({ [`200:${newer.total}`]: seen.length / 2, [`200:${newer.circulating}`]: seen.length / 2 });
    // The pool was read (the batch did reach the lagging backend): a re-read happened at each loss.
    expect(s.d.proxy.count("eth_blockNumber")).toBeGreaterThanOrEqual(4);
  });

  it("nothing held: the batch is asked again at once; found → 200, missing again → 502 SUPPLY_RPC_LAGGING, not a malformed uint256", async () => {
    const head = await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const truth = await chainFigures(s.d);
    let misses = 0;
    // The backend of the first batch has no block at the head eth_blockNumber just named; the retry reaches one that has.
    const missingOnce: RpcFault = {
      kind: "result",
      value: null,
      match: (m, p) => m === "eth_getBlockByNumber" && p[0] === numberToHex(head) && misses++ === 0,
    };
    s.d.proxy.setFault(missingOnce);
    const a = await s.api();
    s.d.proxy.reset();
    expect(await get(a, "/api/supply/total")).toMatchObject({ status: 200, result: truth.total });
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
    expect(s.d.proxy.calls.filter((c) => c.method === "eth_getBlockByNumber" && c.batch).length).toBe(2);

    // Missing on every backend: 502 SUPPLY_RPC_LAGGING (spec §7.1: every supply failure is a 502) in the supply envelope (no-store), after two batches.
    s.newPrefix();
    s.d.proxy.setFault({ kind: "result", value: null, match: (m) => m === "eth_getBlockByNumber" });
    const b = await s.api();
    s.d.proxy.reset();
    for (const path of ["/api/supply/total", "/api/supply/circulating"]) {
      const r = await get(b, path);
      expect([path, r.status, r.result, r.error, r.cache]).toEqual([path, 502, null, "SUPPLY_RPC_LAGGING", "no-store"]);
    }
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
    expect(s.d.proxy.count("eth_getBlockByNumber")).toBe(2);
    expect(b.log()).toContain("supply node lags");
  });
});

describe("a total above any real supply", () => {
  it("the all-ones word fails closed with SUPPLY_INCONSISTENT and is never written to Redis; a replica holding figures keeps them", async () => {
    const held = await chainFigures(s.d);
    const warm = await s.api();
    expect(await servedFigures(warm)).toEqual(held);
    const warmKey = s.figuresKey();

    s.d.proxy.setFault({ kind: "result", value: ALL_ONES, match: isTotalSupplyCall });
    s.newPrefix();
    const cold = await s.api();
    for (const path of ["/api/supply/total", "/api/supply/circulating", "/api/supply/total"]) {
      const r = await get(cold, path);
      expect([path, r.status, r.result, r.error, r.cache]).toEqual([
        path,
        502,
        null,
        "SUPPLY_INCONSISTENT",
        "no-store",
      ]);
    }
    const keys = await s.admin.keys(`${s.prefix}*`);
    const values = await Promise.all(keys.map((k) => s.admin.get(k)));
    expect(await s.admin.get(s.figuresKey())).toBeNull();
    expect(values.filter((v) => v?.includes("115792089237316195423570985008687907853269984665640564039457"))).toEqual(
      [],
    );

    // The replica that holds figures: its entry lost, the node answers the all-ones word; it answers what it held.
    await s.admin.del(warmKey);
    await sleep(REVALIDATE_MS + 100);
    for (let i = 0; i < 4; i++) {
      expect(await servedFigures(warm)).toEqual(held);
      await sleep(250);
    }
  });
});
