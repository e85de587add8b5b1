/**
 * The routes' answers fetched in process (api/live/routeAnswers.ts), as the stream hub and the webhooks read them: a
 * route's documented refusal reaches the caller with its code and reason, not as a bare "500 Internal Server Error"
 * (the index router has no envelope handler of its own); and the hub counts each answer it could not read
 * (api_stream_answers_failed_total{code}) and warns with that reason.
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../api/http/env";
import { IndexBusyError, NotFoundError } from "../../api/http/errors";
import { StreamHub } from "../../api/index/streamHub";
import { RouteAnswerError, routeAnswers } from "../../api/live/routeAnswers";
import { parseTopics } from "../../api/live/topics";
import { createStreamMetrics } from "../../api/observability/streamMetrics";
import type { IndexRuntime } from "../../api/read/runtime";

/** An index router as the app builds one (no error handler): stats answers, the ve board is busy, a lock is not minted. */
function indexRouter(): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.get("/stats", (c) => c.json({ ok: true, blockNumber: c.req.query("block") }));
  router.get("/leaderboards/ve", () => {
    throw new IndexBusyError(1, "queue full");
  });
  router.get("/locks/:id", () => {
    throw new NotFoundError();
  });
  router.get("/bug", () => {
    throw new TypeError("x is undefined");
  });
  return router;
}

describe("routeAnswers", () => {
  const fetch = routeAnswers(indexRouter(), "stream");

  it("a refusal is thrown with its code and reason; a 404 is no answer; a bug is INTERNAL_ERROR", async () => {
    expect(await fetch("/stats?block=7")).toBe('{"ok":true,"blockNumber":"7"}');
    expect(await fetch("/locks/1?block=7")).toBeNull();
    const busy = await fetch("/leaderboards/ve?block=7").catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(RouteAnswerError);
    expect(busy).toMatchObject({
      code: "INDEX_UNAVAILABLE",
      message: "stream answer /leaderboards/ve?block=7: 503 INDEX_UNAVAILABLE busy (queue full)",
    });
    await expect(fetch("/bug")).rejects.toMatchObject({
      code: "INTERNAL_ERROR",
      message: "stream answer /bug: x is undefined",
    });
  });

  it("the hub counts the answer it could not read by code, warns its reason, and sends none of that block (the stream ends)", async () => {
    const warned: unknown[] = [];
    const rt = {
      signal: { subscribe: () => () => {}, head: null, listening: true },
      index: { probe: async () => ({ head: { block: 7n, time: 1n } }) },
      reorgs: { covering: () => null },
      warn: (_key: string, _message: string, fields: unknown) => warned.push(fields),
    } as unknown as IndexRuntime;
    const metrics = createStreamMetrics();
    const hub = new StreamHub(rt, fetch, { max: 10, perIp: 10, heartbeatMs: 60_000, replayBlocks: 100 }, metrics);
    const stream = hub.open(parseTopics("http://x/stream?stats&board=ve"), "127.0.0.1", null);
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    // The block is sent whole or not at all (api/index/streamHub.ts): the board's refusal, read twice, ends the stream
    // without the stats it could read, and the client resumes from its last id.
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value, { stream: true });
    }
    expect(text).not.toContain("event: board");
    expect(text).not.toContain("event: stats");
    expect(metrics.answersFailed.get({ code: "INDEX_UNAVAILABLE" })).toBe(1);
    expect(warned).toEqual([
      {
        error: "RouteAnswerError",
        cause: "INDEX_UNAVAILABLE: stream answer /leaderboards/ve?block=7: 503 INDEX_UNAVAILABLE busy (queue full)",
      },
    ]);
    await reader.cancel();
  });
});
