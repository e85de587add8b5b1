/**
 * The one middleware every request passes through first (design.md): it gives the request its id,
 * puts CORS `*` and `x-request-id` on the response, and counts and logs the request once the
 * response is known (api/http/requestLog.ts). One layer instead of three: every routed
 * request pays it. (A cached supply figure is answered before routing by the supply hot path, which
 * builds its answer with edgeResponse() or writeEdgeResponse() and counts it itself: api/supply/router.ts.)
 *
 * The headers reach a response in one of two ways:
 * - by default they are prepared on the context before the handler runs (c.header), so c.json /
 *   c.body merge them and a handler can read them back from c.res.headers (the MCP endpoint does);
 * - a handler registered with ownsEdgeHeaders() builds every response with respond(), which writes
 *   them into a plain header object, with the RateLimit fields of the request's latest charge
 *   (api/http/rateLimit.ts leaves them to it). Preparing them would allocate a WHATWG Headers per request, and
 *   @hono/node-server would then copy it back into an object before writing: together the largest
 *   cost of a routed supply answer (bench/supply-hit.ts). The supply routes and the index API's JSON
 *   answers (api/index/answer.ts) are built so.
 * Either way, after the handler, a response that still lacks one of them gets it (a middleware may
 * have answered, a handler may have returned a bare Response): no response leaves without them.
 * Failures that escape this middleware are answered by app.onError, which adds edgeHeaders(c).
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import type { ClientIpResolver } from "./clientIp";
import type { AppContext, AppEnv } from "./env";
import { requestIdOf } from "./requestId";
import { matchedRoute, requestRecorder, UNMATCHED_ROUTE } from "./requestLog";

/** On every response: any origin may read it, including our own headers (x-supply-error, RateLimit…). */
export const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "*",
} as const;

/** Handlers whose every response comes from respond(). */
const owning = new WeakSet<object>();

/** Registers a handler that builds every response with respond(); returns it unchanged. */
export function ownsEdgeHeaders<H extends object>(handler: H): H {
  owning.add(handler);
  return handler;
}

/** The request's id: the one the edge chose, or (outside the edge) one chosen now and kept. */
export function edgeRequestId(c: AppContext): string {
  let id: string | undefined = c.get("requestId");
  if (id === undefined) {
    id = requestIdOf(c);
    c.set("requestId", id);
  }
  return id;
}

/** The headers every response carries. */
export function edgeHeaders(c: AppContext): Record<string, string> {
  return withEdgeHeaders({}, edgeRequestId(c));
}

/**
 * Adds the edge headers `headers` lacks (a handler's own value wins, as with prepared headers). One
 * assignment each: an object spread of these hyphenated keys costs V8 more than the rest of a hit.
 */
function withEdgeHeaders(headers: Record<string, string>, id: string): Record<string, string> {
  headers["access-control-allow-origin"] ??= CORS_HEADERS["access-control-allow-origin"];
  headers["access-control-expose-headers"] ??= CORS_HEADERS["access-control-expose-headers"];
  headers["x-request-id"] ??= id;
  return headers;
}

/**
 * A response with `headers` plus the edge headers, as a plain object: Hono's c.body would turn more
 * than one header into a WHATWG Headers. `headers` becomes the response's own (the node adapter adds
 * content-length to it), so pass a fresh object.
 */
export function respond(c: AppContext, body: string | null, status: number, headers: Record<string, string>): Response {
  const limits = c.get("rateLimitHeaders");
  if (limits !== undefined) for (const k in limits) headers[k] ??= limits[k]!;
  const res = edgeResponse(edgeRequestId(c), body, status, headers);
  c.set("edgeResponse", res);
  return res;
}

/**
 * respond() without a Context, for an answer made before routing (the supply hot path,
 * api/supply/router.ts): `id` is the request's id (requestIdFrom), the caller records the request.
 */
export function edgeResponse(
  id: string,
  body: string | null,
  status: number,
  headers: Record<string, string>,
): Response {
  return new Response(body, { status, headers: withEdgeHeaders(headers, id) });
}

/**
 * edgeResponse() written straight on Node's response, for an answer made before @hono/node-server (the
 * supply hot path at the Node level, api/server/server.ts): the headers go out as that adapter writes a
 * string-bodied Response (its responseViaCache: the same object plus `Content-Length`, spelled so, then
 * writeHead and end), so such an answer is the one the adapter would have written, byte for byte.
 * `headers` is written as the response's own: pass a fresh object.
 */
export function writeEdgeResponse(
  res: ServerResponse,
  id: string,
  body: string,
  status: number,
  headers: Record<string, string>,
): void {
  const all: OutgoingHttpHeaders = withEdgeHeaders(headers, id);
  all["Content-Length"] = Buffer.byteLength(body);
  res.writeHead(status, all);
  res.end(body);
}

/** Sets each edge header the response lacks (a handler's own value wins, as with prepared headers). */
function completeHeaders(c: AppContext, id: string): void {
  const wanted = Object.entries(withEdgeHeaders({}, id));
  try {
    const headers = c.res.headers;
    for (const [k, v] of wanted) if (!headers.has(k)) headers.set(k, v);
  } catch {
    // An immutable response (e.g. one from fetch()): c.header copies it into a mutable one first.
    for (const [k, v] of wanted) if (!c.res.headers.has(k)) c.header(k, v);
  }
}

export function edge(o: { logger: Logger; metrics: Metrics; clientIp: ClientIpResolver }): MiddlewareHandler<AppEnv> {
  const record = requestRecorder(o);
  return async (c, next) => {
    const started = performance.now();
    const id = requestIdOf(c);
    c.set("requestId", id);
    // Known before any handler runs, and the same whoever answers (even a middleware's 429).
    const route = matchedRoute(c);
    const owned = route !== undefined && owning.has(route.handler);
    if (owned) c.set("ownsEdgeHeaders", true);
    else {
      for (const [k, v] of Object.entries(CORS_HEADERS)) c.header(k, v);
      c.header("x-request-id", id);
    }
    // Hono hands only Error instances to onError; anything else thrown would escape as a bare 500
    // from the server adapter. Re-thrown as an Error, onError (one level up) answers INTERNAL_ERROR.
    let escaped: Error | undefined;
    try {
      await next();
    } catch (thrown) {
      escaped = thrown instanceof Error ? thrown : new Error(`non-Error value thrown (${typeof thrown})`);
    }
    if (escaped === undefined && c.res !== c.get("edgeResponse")) completeHeaders(c, id);
    const status = escaped ? 500 : c.res.status;
    record(c, { requestId: id, route: route?.path ?? UNMATCHED_ROUTE, status, started, escaped });
    if (escaped) throw escaped;
  };
}
