/**
 * The routes that read the node per request (state, quote, prepare, preflight) answer 503 UPSTREAM_UNAVAILABLE with
 * Retry-After while the node is backed off after an outage (api/chain/backoff.ts); after the window one request goes
 * through as the probe.
 *
 * A request that is not admitted still runs its route: its strict parse (400 BAD_PARAMS, the node not touched), its
 * routing (an unknown action is 404 whatever the chain's state) and an answer that needs no node (a cached gate)
 * come out as they would with the node up; only the node calls it makes are refused at once by the back-off's client
 * (RpcBackoff.wrap), and the upstream failure the route answers for them is this 503 with Retry-After instead.
 */
import type { MiddlewareHandler } from "hono";
import type { RpcBackoff } from "../chain/backoff";
import type { AppEnv } from "./env";
import { ApiError, UpstreamUnavailableError } from "./errors";

/** The routes' answers for a node call that failed: while backed off, each is the back-off's refusal. */
const UPSTREAM_FAILURES: ReadonlySet<string> = new Set(["STATE_READ_FAILED", "QUOTE_FAILED", "PREFLIGHT_READ_FAILED"]);

export function upstreamBackoff(backoff: RpcBackoff): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const admission = backoff.admit();
    if (admission.admitted) {
      try {
        await next();
      } finally {
        admission.release();
      }
      return;
    }
    await next();
    // The route's error was answered already (app.onError); its upstream failure becomes the back-off's answer.
    if (c.error instanceof ApiError && UPSTREAM_FAILURES.has(c.error.code)) {
      throw new UpstreamUnavailableError(Math.max(1, Math.ceil(admission.retryAfterMs / 1000)));
    }
  };
}
