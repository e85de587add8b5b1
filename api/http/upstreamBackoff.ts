/**
 * The routes that read the node per request (state, quote, prepare, preflight) answer 503 UPSTREAM_UNAVAILABLE with
 * Retry-After while the node is backed off after an outage (api/chain/backoff.ts), before reading anything; after
 * the window one request goes through as the probe.
 */
import type { MiddlewareHandler } from "hono";
import type { RpcBackoff } from "../chain/backoff";
import type { AppEnv } from "./env";
import { UpstreamUnavailableError } from "./errors";

export function upstreamBackoff(backoff: RpcBackoff): MiddlewareHandler<AppEnv> {
  return async (_c, next) => {
    const admission = backoff.admit();
    if (!admission.admitted) {
      throw new UpstreamUnavailableError(Math.max(1, Math.ceil(admission.retryAfterMs / 1000)));
    }
    try {
      await next();
    } finally {
      admission.release();
    }
  };
}
