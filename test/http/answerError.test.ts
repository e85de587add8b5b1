/**
 * The one error handler (api/http/answerError.ts) on a request its own signal cancelled — its deadline passed or its
 * client hung up — in the app as createApp assembles it (the index routes' deadline and rate limit, the app's
 * onError), with a route of the test's under the index API's prefix. Only the cancellation itself (a read rejecting
 * with QueryCancelledError once the signal fired) is the deadline's 503 with a debug line; any other error is a
 * failure of ours, 500 INTERNAL_ERROR with its error-level line, even when the request was cancelled meanwhile.
 * Before: every error thrown after the signal fired took the cancellation's branch, so a bug coinciding with a
 * deadline or a hang-up was answered 503 "unreachable" and logged at debug only.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { CancelSource, requestDeadline } from "../../api/http/cancellation";
import { PARENT_HANG_UP } from "../../api/http/env";
import { createLogger } from "../../api/observability/logger";
import { INDEX_BASE } from "../../api/paths";
import { QueryCancelledError } from "../../api/read/contract";

const DEADLINE_MS = 200;

/** The app with one index route that waits for its request's signal, then throws what `fail` makes. */
function appThrowing(fail: () => Error) {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "debug", write: (l) => lines.push(JSON.parse(l)) });
  const app = createApp({
    config: loadConfig({ NETWORK: "base", RPC_TIMEOUT_MS: String(DEADLINE_MS) }),
    rpc: null,
    logger,
  });
  app.get(`${INDEX_BASE}/test-fails-when-cancelled`, async (c) => {
    const signal = requestDeadline(c)!;
    await new Promise<void>((resolve) => signal.addEventListener("abort", resolve));
    throw fail();
  });
  return { app, lines, path: `${INDEX_BASE}/test-fails-when-cancelled` };
}

/** What was logged beside the request log's own lines ("request", and "request path" at debug). */
const levels = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg !== "request" && l.msg !== "request path").map((l) => [l.level, l.msg]);

describe("an error thrown once the request's signal fired", () => {
  it("at the deadline, the cancellation itself: 503 INDEX_UNAVAILABLE unreachable, a debug line", async () => {
    const { app, lines, path } = appThrowing(() => new QueryCancelledError());
    const res = await app.request(path);
    expect([res.status, await res.json()]).toMatchObject([
      503,
      { ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "unreachable", deadlineMs: DEADLINE_MS } },
    ]);
    expect(levels(lines)).toEqual([["debug", "request cancelled"]]);
  });

  it("at the deadline, a plain Error (a bug): 500 INTERNAL_ERROR and an error-level line with its stack", async () => {
    const { app, lines, path } = appThrowing(() => new TypeError("a bug in the route"));
    const res = await app.request(path);
    expect([res.status, (await res.json()).error]).toEqual([500, "INTERNAL_ERROR"]);
    expect(levels(lines)).toEqual([["error", "unhandled error"]]);
    expect(JSON.stringify(lines.find((l) => l.level === "error"))).toContain("a bug in the route");
  });

  it("after a hang-up, a plain Error (a bug): an error-level line, not a debug one", async () => {
    const { app, lines, path } = appThrowing(() => new Error("a bug after the hang-up"));
    // An in-process request carries its served request's hang-up (api/mcp/server.ts): the client is gone at 20 ms.
    const hangUp = new CancelSource();
    setTimeout(() => hangUp.abort("hang-up"), 20);
    const res = await app.request(path, {}, { [PARENT_HANG_UP]: hangUp });
    expect(res.status).toBe(500);
    expect(levels(lines)).toEqual([["error", "unhandled error"]]);
  });

  it("after a hang-up, the cancellation itself: a debug line only", async () => {
    const { app, lines, path } = appThrowing(() => new QueryCancelledError());
    const hangUp = new CancelSource();
    setTimeout(() => hangUp.abort("hang-up"), 20);
    await app.request(path, {}, { [PARENT_HANG_UP]: hangUp });
    expect(levels(lines)).toEqual([["debug", "request cancelled"]]);
  });
});
