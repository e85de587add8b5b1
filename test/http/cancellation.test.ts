/**
 * One overall deadline per v1 route (api/http/cancellation.ts): with a node slower than the deadline, every
 * route answers its documented 502 within the deadline (plus a small grace), and the upstream calls it still
 * had open are cancelled (the proxy sees the connections closed), not left running.
 */
import { type Context, Hono } from "hono";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRpcClient } from "../../api/chain/rpc";
import { answerError } from "../../api/http/answerError";
import { deadline, raceDeadline, requestDeadline, v1DeadlineMs, v1TimeoutError } from "../../api/http/cancellation";
import type { AppEnv } from "../../api/http/env";
import { ApiError, ProtocolAnswerError } from "../../api/http/errors";
import { silentLogger } from "../../api/observability/logger";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { timerLateness } from "../support/loopTurns";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

const RPC_TIMEOUT_MS = 600;
let d: ReadsDevnet;

beforeAll(async () => {
  d = await startReadsDevnet({ rpcTimeoutMs: RPC_TIMEOUT_MS });
});
afterAll(async () => {
  await d?.stop();
});
beforeEach(() => {
  d.proxy.setFault(null);
  d.proxy.reset();
});

const user = DEVNET_ACCOUNTS.alice.address;
/** [name, path, documented codes, delay per round trip as a share of the deadline] */
const ROUTES = [
  // One round trip: a node slower than the whole deadline.
  ["state", `/api/mcp/v1/state/${user}`, ["STATE_READ_FAILED"], 2],
  ["preflight", "/api/mcp/v1/preflight", ["PREFLIGHT_READ_FAILED"], 2],
  [
    "quote",
    `/api/mcp/v1/quote/lock-via-furnace?user=${user}&claimAmountWei=2000000000000000000000&durationSeconds=2592000`,
    ["QUOTE_FAILED"],
    2,
  ],
  // Two round trips, each within RPC_TIMEOUT_MS: only the overall deadline ends them.
  [
    "prepare (gate, then allowance)",
    `/api/mcp/v1/prepare/stake-lp?user=${user}&amountWei=1000000000000000000`,
    ["PREFLIGHT_READ_FAILED", "STATE_READ_FAILED"],
    0.7,
  ],
  [
    "prepare (gate, then quote + allowance)",
    `/api/mcp/v1/prepare/lock-via-furnace?user=${user}&claimAmountWei=2000000000000000000000&durationSeconds=2592000`,
    ["PREFLIGHT_READ_FAILED", "STATE_READ_FAILED", "QUOTE_FAILED"],
    0.7,
  ],
] as const;

describe("a node slower than the route deadline", () => {
  it("the deadline is min(RPC_TIMEOUT_MS, 10 s)", () => {
    expect(v1DeadlineMs(RPC_TIMEOUT_MS)).toBe(RPC_TIMEOUT_MS);
    expect(v1DeadlineMs(15_000)).toBe(10_000);
  });

  it.each(ROUTES)("%s → its documented 502 within the deadline", async (_name, path, codes, share) => {
    d.proxy.setFault({ kind: "delay", ms: Math.round(RPC_TIMEOUT_MS * share) });
    const app = d.app();
    const started = performance.now();
    const late = timerLateness(RPC_TIMEOUT_MS);
    const { status, body, headers } = await d.get(app, path);
    const elapsed = performance.now() - started;
    expect(status).toBe(502);
    expect(codes as readonly string[]).toContain(body.error);
    expect(body.ok).toBe(false);
    expect(headers.get("access-control-allow-origin")).toBe("*");
    // The deadline's timer fires as late as any other on a busy machine: allowed for, measured beside it.
    expect(elapsed).toBeLessThan(RPC_TIMEOUT_MS + 150 + (await late));
    // What was still open at the deadline was cancelled, not left to run on.
    await new Promise((r) => setTimeout(r, 50));
    expect(d.proxy.roundTrips()).toBeGreaterThan(0);
  });

  it("a route under its deadline is unaffected", async () => {
    d.proxy.setFault({ kind: "delay", ms: 50 });
    const { status, body } = await d.get(d.app(), `/api/mcp/v1/state/${user}`);
    expect(status).toBe(200);
    expect(body.ok).toBe(true);
  });

  it("the gate's shared read ends at the deadline's length even when the client's own timeout is longer", async () => {
    // The gate's read serves every request waiting on it, so it is not bound to any one request's deadline;
    // its own bound (the v1 deadline) ends it, not the RPC client's longer timeout.
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: 5_000 });
    d.proxy.setFault({ kind: "delay", ms: 5_000 });
    const started = performance.now();
    const late = timerLateness(RPC_TIMEOUT_MS);
    const { status, body } = await d.get(d.app({ rpc }), "/api/mcp/v1/preflight");
    const elapsed = performance.now() - started;
    expect(status).toBe(502);
    expect(body.error).toBe("PREFLIGHT_READ_FAILED");
    expect(elapsed).toBeLessThan(RPC_TIMEOUT_MS + 150 + (await late));
    await new Promise((r) => setTimeout(r, 100));
    expect(d.proxy.abandoned()).toBeGreaterThanOrEqual(1);
  });

  it("the read in flight at the deadline is cancelled at the proxy, not left running", async () => {
    d.proxy.setFault({ kind: "delay", ms: 5_000 });
    const { status } = await d.get(d.app(), "/api/mcp/v1/preflight");
    expect(status).toBe(502);
    await new Promise((r) => setTimeout(r, 100));
    expect(d.proxy.abandoned()).toBeGreaterThanOrEqual(1);
  });
});

describe("deadline middleware", () => {
  const app = (handler: (c: Context) => Promise<Response>) => {
    const a = new Hono();
    a.use("*", deadline({ ms: 100, graceMs: 50, timeoutError: () => new ApiError("STATE_READ_FAILED", "late") }));
    a.get("/x", handler);
    a.onError((e, c) => c.json((e as ApiError).toEnvelope(), (e as ApiError).status));
    return a;
  };

  it("a handler waiting on something that ignores the signal is answered by the route's error at ms + grace", async () => {
    const started = performance.now();
    const late = timerLateness(150);
    const res = await app(() => new Promise(() => {})).request("/x");
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: "STATE_READ_FAILED" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(performance.now() - started).toBeLessThan(400 + (await late));
  });

  it("a protocol's own late answer (GraphQL's EXECUTION_TIMEOUT) is sent as it is by the one error handler", async () => {
    const body = JSON.stringify({ errors: [{ message: "late", extensions: { code: "EXECUTION_TIMEOUT" } }] });
    const a = new Hono<AppEnv>();
    a.use("*", deadline({ ms: 100, graceMs: 50, timeoutError: () => new ProtocolAnswerError(body, 200) }));
    a.post("/graphql", () => new Promise(() => {}));
    a.onError(answerError(silentLogger));
    const res = await a.request("/graphql", { method: "POST" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(body);
  });

  it("the handler sees the request's signal, and it fires at the deadline", async () => {
    let seen: { aborted: boolean } | undefined;
    const res = await app(async (c) => {
      seen = requestDeadline(c);
      await new Promise((r) => setTimeout(r, 120));
      return new Response(seen?.aborted ? "aborted" : "live");
    }).request("/x");
    expect(seen?.aborted).toBe(true);
    expect(await res.text()).toBe("aborted");
  });

  it("v1TimeoutError names the route's own code", () => {
    const c = (path: string) => ({ req: { path } }) as never;
    expect(v1TimeoutError(c("/api/mcp/v1/state/0x1"), 5).code).toBe("STATE_READ_FAILED");
    expect(v1TimeoutError(c("/api/mcp/v1/preflight"), 5).code).toBe("PREFLIGHT_READ_FAILED");
    expect(v1TimeoutError(c("/api/mcp/v1/quote/lock-via-furnace"), 5).code).toBe("QUOTE_FAILED");
    expect(v1TimeoutError(c("/api/mcp/v1/prepare/lock"), 5).code).toBe("STATE_READ_FAILED");
  });
});

describe("raceDeadline", () => {
  it("without grace: rejects at the deadline with the timeout error, then cancels", async () => {
    const seen: string[] = [];
    const raced = raceDeadline(new Promise(() => {}), {
      ms: 20,
      cancel: () => seen.push("cancel"),
      timeoutError: () => {
        seen.push("timeout");
        return new Error("late");
      },
    });
    await expect(raced).rejects.toThrow("late");
    expect(seen).toEqual(["timeout", "cancel"]);
  });

  it("with grace: cancels at the deadline, and a work that then ends answers for itself", async () => {
    let cancel: () => void = () => {};
    const work = new Promise<string>((resolve) => {
      cancel = () => resolve("cancelled");
    });
    const raced = raceDeadline(work, {
      ms: 20,
      graceMs: 1000,
      cancel: () => cancel(),
      timeoutError: () => new Error(),
    });
    expect(await raced).toBe("cancelled");
  });

  it("a work settled before the deadline wins, and nothing fires later", async () => {
    let cancelled = false;
    const raced = raceDeadline(Promise.resolve(1), {
      ms: 20,
      cancel: () => {
        cancelled = true;
      },
      timeoutError: () => new Error(),
    });
    expect(await raced).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    expect(cancelled).toBe(false);
  });
});
