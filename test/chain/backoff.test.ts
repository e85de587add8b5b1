/**
 * The node backed off in an outage (api/chain/backoff.ts; issue 30, 7): state, quote, prepare and preflight under
 * load while the node fails — a real anvil behind the fault proxy (test/support/rpcProxy.ts), which counts every call
 * the service sends — make at most 10 upstream calls in a 10 s outage, answer 503 UPSTREAM_UNAVAILABLE with
 * Retry-After and `retryAfterSec` while backing off, and answer 200 again soon after the node is back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RPC_BACKOFF, RpcBackoff } from "../../api/chain/backoff";
import { type RpcClient, RpcError } from "../../api/chain/rpc";
import { silentLogger } from "../../api/observability/logger";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

let d: ReadsDevnet;
beforeAll(async () => {
  d = await startReadsDevnet({ rpcTimeoutMs: 2_000 });
}, 120_000);
afterAll(async () => {
  await d?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Requests in flight at once. The calls in flight as the node fails scale with it; the probes after do not. */
const CLIENTS = 4;
const user = DEVNET_ACCOUNTS.fresh.address;
const PATHS = [
  `/api/mcp/v1/state/${user}`,
  `/api/mcp/v1/quote/lock-via-furnace?user=${user}&claimAmountWei=2000000000000000000000&targetTokenId=0&durationSeconds=15552000&createAutoMax=false`,
  `/api/mcp/v1/prepare/lock-via-furnace?user=${user}&claimAmountWei=2000000000000000000000&targetTokenId=0&durationSeconds=31536000&createAutoMax=true`,
  "/api/mcp/v1/preflight",
];

describe("RpcBackoff", () => {
  it("opens on an outage's failure, probes with one light call after each window, closes on the node's answer", async () => {
    let t = 0;
    const backoff = new RpcBackoff({ now: () => t });
    const sent: string[] = [];
    let fail: RpcError | null = new RpcError("unreachable", "connect ECONNREFUSED");
    const node: RpcClient = {
      redactedUrl: "http://node",
      request: async <T>(req: { method: string }, options?: { decode?: (r: unknown) => T }) => {
        sent.push(req.method);
        if (fail) throw fail;
        const result = req.method === "eth_blockNumber" ? "0xb10c" : "0x1";
        return (options?.decode ? options.decode(result) : result) as T;
      },
      batch: async (reqs) => {
        sent.push(reqs.map((r) => r.method).join("+"));
        if (fail) throw fail;
        return reqs.map(() => "0x2");
      },
    };
    const rpc = backoff.wrap(node);
    await expect(rpc.request({ method: "eth_call", params: [] })).rejects.toThrow("ECONNREFUSED");
    expect(backoff.admit()).toEqual({ admitted: false, retryAfterMs: RPC_BACKOFF.firstMs });
    // Refused without a call while open.
    await expect(rpc.batch([{ method: "eth_call", params: [] }])).rejects.toThrow("backed off");
    expect(sent).toEqual(["eth_call"]);
    t += RPC_BACKOFF.firstMs;
    const probe = backoff.admit();
    expect(probe.admitted).toBe(true);
    expect(backoff.admit().admitted).toBe(false); // one probe at a time
    // The probe is one eth_blockNumber, not the request's batch: it fails, and the batch is never sent.
    const batch = [
      { method: "eth_call", params: [] },
      { method: "eth_getBalance", params: [] },
      { method: "eth_call", params: [] },
    ];
    await expect(rpc.batch(batch)).rejects.toThrow("ECONNREFUSED");
    expect(sent).toEqual(["eth_call", "eth_blockNumber"]);
    expect(backoff.admit()).toEqual({
      admitted: false,
      retryAfterMs: Math.min(2 * RPC_BACKOFF.firstMs, RPC_BACKOFF.maxMs),
    });
    t += 10_000;
    expect(backoff.admit().admitted).toBe(true);
    await expect(rpc.batch(batch)).rejects.toThrow();
    expect(backoff.admit()).toEqual({ admitted: false, retryAfterMs: RPC_BACKOFF.maxMs }); // capped
    expect(sent).toEqual(["eth_call", "eth_blockNumber", "eth_blockNumber"]);
    // A revert is the node answering: no outage.
    t += 10_000;
    fail = new RpcError("rpc", "execution reverted", { code: 3, reverted: true });
    expect(backoff.admit().admitted).toBe(true);
    await expect(rpc.request({ method: "eth_call", params: [] })).rejects.toThrow("reverted");
    expect(backoff.open).toBe(false);
    expect(sent.slice(3)).toEqual(["eth_blockNumber", "eth_call"]);
    fail = null;
    expect(await rpc.request({ method: "eth_call", params: [] })).toBe("0x1");
    expect(await rpc.request({ method: "eth_blockNumber", params: [] })).toBe("0xb10c");
    // The node back after an outage: the probe answers, then the request's own batch goes, with its own results (the
    // request's decoder is not applied to the probe's answer).
    fail = new RpcError("timeout", "timed out");
    await expect(rpc.request({ method: "eth_call", params: [] })).rejects.toThrow("timed out");
    t += 10_000;
    fail = null;
    expect(backoff.admit().admitted).toBe(true);
    sent.length = 0;
    const decoded = await rpc.request(
      { method: "eth_call", params: [] },
      {
        decode: (r) => {
          if (r !== "0x1") throw new Error("not the call's answer");
          return 42;
        },
      },
    );
    expect(decoded).toBe(42);
    expect(await rpc.batch(batch)).toEqual(["0x2", "0x2", "0x2"]);
    expect(sent).toEqual(["eth_blockNumber", "eth_call", "eth_call+eth_getBalance+eth_call"]);
    expect(backoff.open).toBe(false);
    // A call as light as the probe is its own: one eth_blockNumber, not two.
    fail = new RpcError("http", "HTTP 502");
    await expect(rpc.request({ method: "eth_call", params: [] })).rejects.toThrow("502");
    t += 10_000;
    fail = null;
    sent.length = 0;
    expect(backoff.admit().admitted).toBe(true);
    expect(await rpc.request({ method: "eth_blockNumber", params: [] })).toBe("0xb10c");
    expect(sent).toEqual(["eth_blockNumber"]);
    expect(backoff.open).toBe(false);
  });
});

describe("state, quote, prepare and preflight in a 10 s outage under load", () => {
  // The node refusing (its connections reset), or silent (answers held past the route's 2 s deadline).
  it.each([
    ["down", { kind: "down" }],
    ["silent", { kind: "delay", ms: 60_000 }],
  ] as const)(
    "%s: ≤ 10 upstream calls, 503 UPSTREAM_UNAVAILABLE with Retry-After meanwhile, 200 again once the node is back",
    async (outage, fault) => {
      const warnings: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
      const logger = {
        ...silentLogger,
        warn: (msg: string, fields?: Record<string, unknown>) => warnings.push({ msg, fields }),
      };
      const app = d.app({ config: { ...d.config, rateLimit: { max: 1e9, windowSec: 60 } }, logger });
      // Healthy first: every route answers from the node (prepare's gate included).
      for (const p of PATHS) {
        const { status, body } = await d.get(app, p);
        expect([200, 503], `${p} ${JSON.stringify(body)}`).toContain(status);
        expect(body.error, p).not.toBe("UPSTREAM_UNAVAILABLE");
      }
      d.proxy.reset();
      d.proxy.setFault(fault);
      try {
        const outageMs = 10_000;
        const started = performance.now();
        const answers = new Map<string, number>();
        let withRetryAfter = 0;
        let sent = 0;
        // Calls the node had received 1 s in (the first window is 2 s): those in flight as the outage began, before any
        // had failed (about one per concurrent request). What comes after is the probes'.
        let wave = 0;
        setTimeout(() => {
          wave = d.proxy.count();
        }, 1_000);
        // 4 clients, each asking again as soon as answered: thousands of requests in the outage.
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, i) => {
            while (performance.now() - started < outageMs) {
              const path = PATHS[i % PATHS.length]!;
              const res = await app.request(path);
              sent++;
              const body = (await res.json()) as { error?: string; retryAfterSec?: number };
              const key = `${res.status} ${body.error ?? "ok"} ${path.split("?")[0]!.split("/")[4]}`;
              answers.set(key, (answers.get(key) ?? 0) + 1);
              if (body.error === "UPSTREAM_UNAVAILABLE") {
                expect(res.headers.get("retry-after")).toBe(String(body.retryAfterSec));
                expect(body.retryAfterSec).toBeGreaterThanOrEqual(1);
                withRetryAfter++;
              }
              await sleep(1);
            }
          }),
        );
        const upstream = d.proxy.count();
        console.log(
          `10 s outage (${outage}), ${CLIENTS} clients: ${sent} requests, ${upstream} upstream calls in ${d.proxy.roundTrips()} round ` +
            `trips (${wave} in flight as it began, ${upstream - wave} probes after); answers ${JSON.stringify(Object.fromEntries(answers))}`,
        );
        expect(sent).toBeGreaterThan(outage === "down" ? 1_000 : 100);
        // Calls, not round trips (a batch's members counted one by one): the requests in flight as the outage began,
        // one batch each (state 1, a new lock's quote and prepare 3: the quote or gate read, the allowance and the
        // wallet's lock count, MCP F7; preflight's gate cached) — then one light probe call per window at most (2, 6
        // and 10 s into the outage), never a request's batch.
        expect(wave).toBeLessThanOrEqual(7);
        expect(upstream - wave).toBeLessThanOrEqual(3);
        expect(upstream).toBeLessThanOrEqual(10);
        // Every answer: 503 with Retry-After, or the route's own 502 for a call that failed (no more than the calls), or
        // — only for preflight — the gate's cached answer, which needs no node.
        const failed = [...answers].filter(([k]) => k.startsWith("502")).reduce((n, [, v]) => n + v, 0);
        const cached = [...answers].filter(([k]) => k.startsWith("200")).reduce((n, [, v]) => n + v, 0);
        expect(failed).toBeLessThanOrEqual(upstream);
        expect(withRetryAfter + failed + cached).toBe(sent);
        expect([...answers.keys()].filter((k) => k.startsWith("200") && !k.endsWith("preflight"))).toEqual([]);
        expect(withRetryAfter).toBeGreaterThan(1_000);
        // The operator is told, with the cause, once a minute per kind of failure (operations.md, outage logs), not
        // once per request: thousands of failed requests, at most a line per kind (unreachable, timeout).
        const nodeWarnings = warnings.filter((w) => w.msg.startsWith("node read failed"));
        expect(nodeWarnings.length, JSON.stringify(warnings)).toBeGreaterThanOrEqual(1);
        expect(nodeWarnings.length).toBeLessThanOrEqual(2);
        expect(String(nodeWarnings[0]!.fields?.cause)).toMatch(/^RPC /);
        expect(JSON.stringify(nodeWarnings)).not.toMatch(/https?:\/\//);

        // The node is back: within one back-off window (at most 4 s) the routes answer from it again.
        d.proxy.setFault(null);
        const back = performance.now();
        let recovered: number | null = null;
        while (performance.now() - back < RPC_BACKOFF.maxMs + 2_000) {
          const { status, body } = await d.get(app, PATHS[0]!);
          if (status === 200) {
            recovered = performance.now() - back;
            break;
          }
          expect(body.error).toBe("UPSTREAM_UNAVAILABLE");
          await sleep(100);
        }
        console.log(
          `node back (${outage}): state 200 again after ${recovered === null ? "never" : `${Math.round(recovered)} ms`}`,
        );
        expect(recovered).not.toBeNull();
        expect(recovered!).toBeLessThan(RPC_BACKOFF.maxMs + 1_000);
        for (const p of PATHS) expect((await d.get(app, p)).body.error, p).not.toBe("UPSTREAM_UNAVAILABLE");
      } finally {
        // Whatever failed above, the node is back for the next case.
        d.proxy.setFault(null);
      }
    },
    60_000,
  );

  it("while backed off, a bad input is still 400 and an unknown action 404 (the node not touched); a read that needs it 503", async () => {
    const app = d.app({ config: { ...d.config, rateLimit: { max: 1e9, windowSec: 60 } } });
    // The launch gate read once with the node up (prepare reads it first, as the spec orders; it is then cached).
    expect((await d.get(app, "/api/mcp/v1/preflight")).status).toBe(200);
    d.proxy.reset();
    d.proxy.setFault({ kind: "down" });
    try {
      // One read fails as an outage does: the back-off opens.
      expect((await d.get(app, PATHS[0]!)).status).toBe(502);
      const calls = d.proxy.count();
      for (const [path, want, code] of [
        ["/api/mcp/v1/state/0xdead", 400, "BAD_PARAMS"],
        [`/api/mcp/v1/quote/lock-via-furnace?user=${user}&claimAmountWei=01&durationSeconds=1`, 400, "BAD_PARAMS"],
        ["/api/mcp/v1/prepare/unbond-lp?amountWei=-1", 400, "BAD_PARAMS"],
        ["/api/mcp/v1/prepare/nope", 404, "NOT_FOUND"],
        // Needs no node once the gate is known: answered as with the node up.
        ["/api/mcp/v1/prepare/withdraw-lp", 200, undefined],
        [PATHS[0]!, 503, "UPSTREAM_UNAVAILABLE"],
      ] as const) {
        const { status, body } = await d.get(app, path);
        expect([status, body.error], path).toEqual([want, code]);
      }
      expect(d.proxy.count()).toBe(calls);
    } finally {
      d.proxy.setFault(null);
    }
  });
});
