/**
 * A route's answer fetched in process, as the stream hub (api/index/streamHub.ts) and the webhooks
 * (api/webhooks/engine.ts) send it: through the REST route itself, so there is no second query path. Shared here
 * (api/live) so neither feature imports the other.
 */
import { Hono } from "hono";
import { type AppEnv, STREAM_HUB_REQUEST } from "../http/env";
import { ApiError } from "../http/errors";

/** Fetches a route's answer (its JSON text), or null when the route has none to give (a lock not minted yet: 404). */
export type AnswerFetcher = (pathAndQuery: string) => Promise<string | null>;

/** A route that did not answer: its error code (INDEX_UNAVAILABLE…, INTERNAL_ERROR for a bug) and why, for logs and metrics. */
export class RouteAnswerError extends Error {
  override name = "RouteAnswerError";
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The answers of `router` (the index routes, mounted at /api/index/v1). Marked as the server's own request
 * (STREAM_HUB_REQUEST, api/http/env.ts, settable only by code): it charges no client's budget — the client was charged
 * when it opened its stream or the operator registered the webhook. `what` names the caller in a failure's message.
 */
export function routeAnswers(router: Hono<AppEnv>, what: string): AnswerFetcher {
  let answers: Hono<AppEnv> | undefined;
  return async (path) => {
    // Mounted on first use, once every route is registered. A route's error is thrown back to here: the router has
    // no envelope handler of its own (the app's is not on this path), and Hono's default made every refusal a bare
    // "500 Internal Server Error" (a busy compute lane looked like a bug).
    answers ??= new Hono<AppEnv>().route("/", router).onError((error) => {
      throw error;
    });
    let res: Response;
    try {
      res = await answers.request(path, undefined, { [STREAM_HUB_REQUEST]: true });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null;
      throw failure(what, path, error);
    }
    if (res.status === 404) return null;
    const text = await res.text();
    if (res.status !== 200) {
      const code = /"error":"([A-Z_]+)"/.exec(text)?.[1] ?? "INTERNAL_ERROR";
      throw new RouteAnswerError(code, `${what} answer ${path}: ${res.status} ${text.slice(0, 200)}`);
    }
    return text;
  };
}

/** A thrown route error as its code and reason, e.g. "503 INDEX_UNAVAILABLE busy (queue full)". */
function failure(what: string, path: string, error: unknown): RouteAnswerError {
  if (!(error instanceof ApiError)) {
    return new RouteAnswerError("INTERNAL_ERROR", `${what} answer ${path}: ${(error as Error)?.message}`, {
      cause: error,
    });
  }
  const detail = (error.detail ?? {}) as { reason?: unknown; why?: unknown };
  const why = [detail.reason, detail.why === undefined ? undefined : `(${detail.why})`].filter((w) => w !== undefined);
  return new RouteAnswerError(error.code, `${what} answer ${path}: ${[error.status, error.code, ...why].join(" ")}`, {
    cause: error,
  });
}
