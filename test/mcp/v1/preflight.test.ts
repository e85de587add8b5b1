import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../api/chain/rpc";
import { ChainUnreadyError, GenesisNotFinalizedError, PreflightReadFailedError } from "../../../api/http/errors";
import { createGate, DEFAULT_GATE_FAILURE_BACKOFF_MS } from "../../../api/mcp/v1/gate";
import { DEVNET_ABIS, DEVNET_STATUS_BITMASK } from "../../../devnet/deploy";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";

let d: ReadsDevnet;
beforeAll(async () => {
  d = await startReadsDevnet();
});
afterAll(async () => {
  await d?.stop();
});
beforeEach(async () => {
  d.proxy.setFault(null);
  // Every test starts from the devnet's deployed (finalized) bitmask.
  await d.setStatusBitmask(DEVNET_STATUS_BITMASK);
  d.proxy.reset();
});

const PREFLIGHT = "/api/mcp/v1/preflight";

async function chainPreflight() {
  const [statusBitmask, requiredSeedEth] = await d.chain.publicClient.readContract({
    address: d.deployment.addresses.LaunchController,
    abi: DEVNET_ABIS.LaunchController,
    functionName: "preflight",
  });
  return { statusBitmask, requiredSeedEth };
}

describe("GET /preflight against on-chain truth", () => {
  it("finalized devnet: bit 0 clear, the ten readiness bits set", async () => {
    const { status, body } = await d.get(d.app(), PREFLIGHT);
    const truth = await chainPreflight();
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ok: true,
      finalized: true,
      statusBitmask: String(truth.statusBitmask),
      requiredSeedEth: String(truth.requiredSeedEth),
      bitsSet: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      bitsMissing: [0],
    });
    expect(truth.requiredSeedEth).toBe(10n * 10n ** 18n); // 50 ether × 2 days / 10 days
    expect(body.bits).toHaveLength(11);
    expect(body.bits[0]).toEqual({ bit: 0, condition: "genesis not finalized", set: false });
    expect(body.bits[10]).toEqual({ bit: 10, condition: "expected pool is not self", set: true });
  });

  it.each([
    [0x7ffn, false, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], []],
    [0x1n, false, [0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    [0x0n, true, [], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    [0x405n, false, [0, 2, 10], [1, 3, 4, 5, 6, 7, 8, 9]],
    // Bits above the 11 known ones are reported in statusBitmask but not listed.
    [(1n << 200n) | 0x2n, true, [1], [0, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
  ])("bitmask %s → finalized %s", async (mask, finalized, bitsSet, bitsMissing) => {
    await d.setStatusBitmask(mask);
    const { status, body } = await d.get(d.app(), PREFLIGHT);
    expect(status).toBe(200);
    expect(body).toMatchObject({ finalized, statusBitmask: String(mask), bitsSet, bitsMissing });
    expect(body.statusBitmask).toBe(String((await chainPreflight()).statusBitmask));
  });

  it("rejects any query parameter before reading", async () => {
    const { status, body } = await d.get(d.app(), `${PREFLIGHT}?fresh=true`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "fresh", accepted: [] } });
    expect(d.proxy.count()).toBe(0);
  });
});

describe("the gate cache", () => {
  it("after finalization, preflight is read once for the life of the process", async () => {
    const app = d.app();
    for (let i = 0; i < 5; i++) expect((await d.get(app, PREFLIGHT)).body.finalized).toBe(true);
    expect(d.proxy.count("eth_call")).toBe(1);
    // Finalization never reverts on the published contract, so a later on-chain change is not seen.
    await d.setStatusBitmask(0x7ffn);
    d.proxy.reset();
    expect((await d.get(app, PREFLIGHT)).body.finalized).toBe(true);
    expect(d.proxy.count()).toBe(0);
  });

  it("while not finalized, an answer is reused only within the TTL", async () => {
    await d.setStatusBitmask(0x7ffn);
    d.proxy.reset();
    let now = 1_000_000;
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest, notFinalizedTtlMs: 2_000, now: () => now });
    expect((await gate.read()).finalized).toBe(false);
    now += 1_999;
    expect((await gate.read()).finalized).toBe(false);
    expect(d.proxy.count("eth_call")).toBe(1);
    now += 1;
    await d.setStatusBitmask(DEVNET_STATUS_BITMASK); // genesis finalizes meanwhile
    d.proxy.reset();
    expect((await gate.read()).finalized).toBe(true); // re-read after the TTL sees it
    expect(d.proxy.count("eth_call")).toBe(1);
    now += 10 ** 9;
    await gate.read();
    expect(d.proxy.count("eth_call")).toBe(1); // and keeps it forever
  });

  it("the default TTL of a not-finalized answer is a few seconds at most", async () => {
    await d.setStatusBitmask(0x7ffn);
    let now = 0;
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest, now: () => now });
    await gate.read();
    now += 5_000;
    d.proxy.reset();
    await gate.read();
    expect(d.proxy.count("eth_call")).toBe(1);
  });

  it("concurrent misses share one upstream read", async () => {
    d.proxy.setFault({ kind: "delay", ms: 200 });
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest });
    const all = await Promise.all(Array.from({ length: 25 }, () => gate.read()));
    expect(all.every((p) => p.finalized)).toBe(true);
    expect(d.proxy.count()).toBe(1);
  });

  it("concurrent misses that fail share the failure, which is remembered only for the backoff", async () => {
    d.proxy.setFault({ kind: "http", status: 500 });
    let now = 0;
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest, now: () => now });
    const settled = await Promise.allSettled(Array.from({ length: 10 }, () => gate.read()));
    expect(settled.every((s) => s.status === "rejected" && s.reason instanceof PreflightReadFailedError)).toBe(true);
    expect(d.proxy.count()).toBe(1);
    d.proxy.setFault(null);
    // Within the backoff the failure answers again without asking the node: the gate stays closed.
    now += DEFAULT_GATE_FAILURE_BACKOFF_MS - 1;
    await expect(gate.read()).rejects.toBeInstanceOf(PreflightReadFailedError);
    expect(d.proxy.count()).toBe(1);
    // After it, the node is asked again; the failure was never cached as an answer.
    now += 1;
    expect((await gate.read()).finalized).toBe(true);
    expect(d.proxy.count()).toBe(2);
  });

  it("a node failing under load is asked about once per backoff interval", async () => {
    d.proxy.setFault({ kind: "http", status: 500 });
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest, failureBackoffMs: 200 });
    const until = performance.now() + 1_000;
    const callers = Array.from({ length: 20 }, async () => {
      while (performance.now() < until) {
        await gate.read().catch(() => {});
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    await Promise.all(callers);
    // 1 s / 200 ms = 5 intervals, each opened by one read (plus the one in flight at the start of the next).
    expect(d.proxy.count()).toBeGreaterThanOrEqual(3);
    expect(d.proxy.count()).toBeLessThanOrEqual(6);
  });

  it("assertFinalized passes when finalized and throws GENESIS_NOT_FINALIZED with the diagnostic otherwise", async () => {
    await createGate({ rpc: d.rpc, manifest: d.config.manifest }).assertFinalized();
    await d.setStatusBitmask(0x403n);
    const error = await createGate({ rpc: d.rpc, manifest: d.config.manifest })
      .assertFinalized()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GenesisNotFinalizedError);
    expect((error as GenesisNotFinalizedError).status).toBe(503);
    expect((error as GenesisNotFinalizedError).toEnvelope()).toEqual({
      ok: false,
      error: "GENESIS_NOT_FINALIZED",
      message: expect.any(String),
      detail: { statusBitmask: "1027", bitsSet: [0, 1, 10], bitsExpected: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
    });
  });

  it("the preflight route and a prepare-style caller share one gate (one read between them)", async () => {
    const gate = createGate({ rpc: d.rpc, manifest: d.config.manifest });
    const app = d.app({ gate });
    await gate.assertFinalized();
    expect((await d.get(app, PREFLIGHT)).body.finalized).toBe(true);
    expect(d.proxy.count()).toBe(1);
  });

  it("a manifest without LaunchController is CHAIN_UNREADY and never finalized", async () => {
    const config = d.configWith((m) => ({ ...m, contracts: { ...m.contracts, LaunchController: undefined } }));
    const gate = createGate({ rpc: d.rpc, manifest: config.manifest });
    await expect(gate.assertFinalized()).rejects.toBeInstanceOf(ChainUnreadyError);
    const { status, body } = await d.get(d.app({ config }), PREFLIGHT);
    expect(status).toBe(503);
    expect(body).toMatchObject({ error: "CHAIN_UNREADY", detail: { contract: "LaunchController" } });
    expect(d.proxy.count()).toBe(0);
  });
});

describe("an unreadable preflight fails closed: 502 PREFLIGHT_READ_FAILED, never finalized", () => {
  const word = (n: bigint) => n.toString(16).padStart(64, "0");
  it.each([
    ["node down", { kind: "down" }],
    ["HTTP 500", { kind: "http", status: 500 }],
    ["JSON-RPC error", { kind: "rpcError", code: -32603, message: "internal" }],
    ["a revert", { kind: "rpcError", code: 3, message: "execution reverted", data: "0x" }],
    ["result 0x", { kind: "result", value: "0x" }],
    ["result null", { kind: "result", value: null }],
    ["one word", { kind: "result", value: `0x${word(0n)}` }],
    ["three words", { kind: "result", value: `0x${word(0n)}${word(1n)}${word(2n)}` }],
    ["non-hex", { kind: "result", value: `0x${"g".repeat(128)}` }],
    ["no 0x prefix", { kind: "result", value: `${word(0n)}${word(1n)}` }],
  ] as const)("%s", async (_label, fault) => {
    d.proxy.setFault(fault as never);
    let now = 0;
    const app = d.app({ gate: createGate({ rpc: d.rpc, manifest: d.config.manifest, now: () => now }) });
    const { status, body, headers } = await d.get(app, PREFLIGHT);
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "PREFLIGHT_READ_FAILED" });
    expect(body.finalized).toBeUndefined();
    expect(headers.get("cache-control")).toBe("no-store");
    // The failure is not cached as an answer: the same app reads again once the backoff has passed.
    d.proxy.setFault(null);
    now += DEFAULT_GATE_FAILURE_BACKOFF_MS;
    expect((await d.get(app, PREFLIGHT)).body.finalized).toBe(true);
  });

  it("a well-formed forged answer is believed (the fault harness reaches the decoder)", async () => {
    d.proxy.setFault({ kind: "result", value: `0x${word(0x7ffn)}${word(42n)}` });
    const { body } = await d.get(d.app(), PREFLIGHT);
    expect(body).toMatchObject({ finalized: false, statusBitmask: "2047", requiredSeedEth: "42" });
  });

  it("a node slower than the timeout", async () => {
    d.proxy.setFault({ kind: "delay", ms: 3_000 });
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 300 });
    const { status, body } = await d.get(d.app({ rpc }), PREFLIGHT);
    expect(status).toBe(502);
    expect(body.error).toBe("PREFLIGHT_READ_FAILED");
    expect(body.message).toContain("timeout");
  });

  it("no RPC configured", async () => {
    const { status, body } = await d.get(d.app({ rpc: null }), PREFLIGHT);
    expect(status).toBe(502);
    expect(body.error).toBe("PREFLIGHT_READ_FAILED");
  });
});
