/**
 * Per-client, per-prefix request budgets on /api/mcp/v1 (spec §8, design.md): `state/`, `preflight`,
 * `quote/` and `prepare/` each hold their own budget of `max` requests per `windowSec`; every route of the
 * index API (/api/index/v1) shares one more, `index`. The supply routes are never limited.
 *
 * Every response of a limited prefix advertises its budget with the header fields of
 * draft-ietf-httpapi-ratelimit-headers-10 (the structured-field form introduced in -08; one named
 * policy per prefix):
 *   RateLimit-Policy: "state";q=300;w=60        quota q per window w seconds
 *   RateLimit: "state";r=299;t=60               r requests left, window resets in t seconds
 * Over budget: 429 RATE_LIMITED with `Retry-After` (seconds) and `retryAfterSec` in the body.
 * An index request costs by its work (api/http/requestCost.ts): more for large pages, more again (charged by the
 * route, chargeRateLimit) when it makes this process compute a block's ranking or stats.
 */
import type { Context, MiddlewareHandler } from "hono";
import { rateLimitSubject } from "../net/ip";
import type { Metrics } from "../observability/metrics";
import { INDEX_BASE, V1_BASE } from "../paths";
import type { RateLimitDecision, RateLimiter, RateLimitPolicy } from "../ratelimit/limiter";
import type { ClientIpResolver } from "./clientIp";
import { RateLimitedError } from "./errors";
import { pageCost } from "./requestCost";

export const LIMITED_PREFIXES = ["state", "preflight", "quote", "prepare", "index"] as const;
export type LimitedPrefix = (typeof LIMITED_PREFIXES)[number];
/**
 * A budget: one per v1 prefix, `mcp` for the messages of POST /api/mcp (api/mcp/gatekeeper.ts), `docs`
 * for the reference page, its assets and the OpenAPI document (api/openapi/docsRoutes.ts), and `graphql` for
 * /graphql (api/graphql/endpoint.ts).
 */
export type Budget = LimitedPrefix | "mcp" | "docs" | "graphql";

const V1 = `${V1_BASE}/`;
const INDEX = `${INDEX_BASE}/`;

/** The budget a path is counted against, or null when the path is not limited. */
export function limitedPrefix(path: string): LimitedPrefix | null {
  if (path.startsWith(INDEX)) return "index";
  if (!path.startsWith(V1)) return null;
  const segment = path.slice(V1.length).split("/", 1)[0];
  return (LIMITED_PREFIXES as readonly string[]).includes(segment ?? "") ? (segment as LimitedPrefix) : null;
}

export function rateLimitHeaders(
  prefix: Budget,
  policy: RateLimitPolicy,
  d: RateLimitDecision,
): Record<string, string> {
  return {
    "ratelimit-policy": `"${prefix}";q=${policy.max};w=${policy.windowSec}`,
    ratelimit: `"${prefix}";r=${d.remaining};t=${d.resetSec}`,
  };
}

export type RateLimitOptions = {
  limiter: RateLimiter;
  policy: RateLimitPolicy;
  clientIp: ClientIpResolver;
  metrics: Metrics;
};

/**
 * Counts `cost` (default 1) against `prefix` for this request's client, sets the RateLimit headers, and
 * throws RateLimitedError when over budget. Exported for the MCP endpoint, which charges each message.
 * Under a handler that builds its answers with respond() (api/http/edge.ts ownsEdgeHeaders) an allowed request's
 * fields are left on the context for respond() to write in its plain header object: preparing them here would
 * allocate the WHATWG Headers that path avoids. A refusal (or any other handler) prepares them as before.
 */
export async function chargeRateLimit(
  c: Context,
  prefix: Budget,
  o: RateLimitOptions,
  cost = 1,
): Promise<RateLimitDecision> {
  const ip = o.clientIp(c);
  // Requests whose peer the adapter cannot tell share one budget: fail towards limiting, not towards none.
  const subject = ip === null ? "unknown" : rateLimitSubject(ip);
  const decision = await o.limiter.hit(`${prefix}:${subject}`, cost);
  latest.set(c.req.raw, decision);
  const headers = rateLimitHeaders(prefix, o.policy, decision);
  c.set("rateLimitHeaders", headers);
  if (!decision.allowed || c.get("ownsEdgeHeaders") !== true) for (const k in headers) c.header(k, headers[k]);
  if (!decision.allowed) {
    o.metrics.rateLimited.inc({ prefix });
    throw new RateLimitedError(decision.resetSec);
  }
  return decision;
}

/** A request's last decision: a route that charges again (a computation) leaves the budget lower than at entry. */
const latest = new WeakMap<Request, RateLimitDecision>();

export function rateLimit(o: RateLimitOptions): MiddlewareHandler {
  return async (c, next) => {
    const prefix = limitedPrefix(c.req.path);
    if (prefix === null) return next();
    const decision = await chargeRateLimit(c, prefix, o, prefix === "index" ? pageCost(c.req.query("limit")) : 1);
    await next();
    // Again on the final response: a handler that returns a bare Response drops prepared headers. An answer of
    // respond() already has the latest charge's.
    if (c.res === c.get("edgeResponse")) return;
    setOnResponse(c, rateLimitHeaders(prefix, o.policy, latest.get(c.req.raw) ?? decision));
  };
}

/**
 * Sets `headers` on the request's final response, in its own headers where they may be changed (as the edge's
 * completeHeaders does). Not c.header: on a response already made, Hono's c.header first rebuilds it from its body
 * as a web stream, which @hono/node-server then reads back chunk by chunk instead of writing the string it had —
 * the largest single cost of an index answer (bench/index-http.ts). An immutable response (one from fetch()) still
 * goes through c.header, which copies it into a mutable one.
 */
function setOnResponse(c: Context, headers: Record<string, string>): void {
  try {
    const own = c.res.headers;
    for (const k in headers) own.set(k, headers[k]!);
  } catch {
    for (const k in headers) c.header(k, headers[k]);
  }
}
