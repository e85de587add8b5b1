/**
 * One info line and one counter increment per request, whatever the outcome (success, envelope
 * error, 404, 405, 429, OPTIONS). Only the matched route pattern is recorded, never the raw path or
 * query, so neither a user's address nor unbounded label values reach logs or metrics.
 */
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { type ClientIpResolver, truncateIp } from "../http/clientIp";
import { ApiError } from "../http/errors";
import type { Logger } from "./logger";
import type { Metrics } from "./metrics";

export const UNMATCHED_ROUTE = "unmatched";

/**
 * The pattern of the route that serves this request ("/api/mcp/v1/state/:address"), known even when
 * a middleware answered first (a 429), or "unmatched" when no route has this path. Middleware
 * registered with `use()` ends in `*` and is skipped.
 */
export function routeLabel(c: Context): string {
  const routes = matchedRoutes(c).filter((r) => !(r.method === "ALL" && r.path.endsWith("*")));
  return routes.at(-1)?.path ?? UNMATCHED_ROUTE;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]);

export function observeRequests(o: {
  logger: Logger;
  metrics: Metrics;
  clientIp: ClientIpResolver;
}): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    // Hono hands only Error instances to onError; anything else thrown would escape as a bare 500
    // from the server adapter. Re-thrown as an Error, onError (one level up) answers INTERNAL_ERROR.
    let escaped: Error | undefined;
    try {
      await next();
    } catch (thrown) {
      escaped = thrown instanceof Error ? thrown : new Error(`non-Error value thrown (${typeof thrown})`);
    }
    const status = escaped ? 500 : c.res.status;
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : "OTHER";
    const route = routeLabel(c);
    o.metrics.httpRequests.inc({ method, route, status: String(status) });
    // Aggregators poll the supply routes at any rate: their successes are counted above and logged
    // only at debug, so access logs stay readable; every failure is still logged at info.
    const level = status < 400 && route.startsWith("/api/supply/") ? "debug" : "info";
    if (o.logger.enabled?.(level) === false) {
      if (escaped) throw escaped;
      return;
    }
    const requestId = c.res.headers.get("x-request-id") ?? undefined;
    const failure = escaped ?? c.error;
    const error = failure === undefined ? undefined : failure instanceof ApiError ? failure.code : "INTERNAL_ERROR";
    o.logger[level]("request", {
      requestId,
      method,
      route,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      clientIp: truncateIp(o.clientIp(c)),
      ...(error === undefined ? {} : { error }),
    });
    // The raw path only at debug, where full addresses are allowed (scrubbing still drops URL secrets).
    o.logger.debug("request path", { requestId, path: c.req.path });
    if (escaped) throw escaped;
  };
}
