/**
 * POST /graphql and GET /graphql?query=…: the HTTP face of the GraphQL engine (api/graphql/yoga.ts), behind the same
 * edge as every route (request id, CORS, request log). In order: the `graphql` rate-limit budget; the body (JSON, at
 * most 64 KiB: else 415 / 413 in the API's envelope); the overall deadline and hang-up (api/http/deadline.ts, which
 * cancels the request's index reads); then GraphQL, whose failures are its own `errors` with `extensions.code`; and
 * the answer's size. Statuses follow GraphQL over HTTP as yoga implements it.
 */
import type { Context, Handler, MiddlewareHandler } from "hono";
import type { AppDeps } from "../deps";
import { readBounded } from "../http/boundedBody";
import { deadline, requestDeadline, v1TimeoutError } from "../http/deadline";
import { PayloadTooLargeError, UnsupportedMediaTypeError } from "../http/errors";
import { chargeRateLimit, type RateLimitOptions } from "../http/rateLimit";
import type { IndexRuntime } from "../index/pin";
import { graphqlError, timedOut } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";
import { RequestScope } from "./scope";
import { createGraphqlEngine } from "./yoga";

/** The methods /graphql answers (its 405 and its preflight name them). */
export const GRAPHQL_METHODS = ["GET", "HEAD", "POST", "OPTIONS"] as const;

/** How long after the deadline an execution that ignored it is given before the answer is written without it. */
const GRACE_MS = 100;

export type GraphqlEndpointOptions = { deps: AppDeps; runtime: IndexRuntime; rateLimit: RateLimitOptions };

/** The middleware (rate limit, deadline) and the handler, to mount at GRAPHQL_PATH. */
export function graphqlEndpoint(o: GraphqlEndpointOptions): [MiddlewareHandler, MiddlewareHandler, Handler] {
  const engine = createGraphqlEngine(o.deps.logger);
  const limited: MiddlewareHandler = async (c, next) => {
    await chargeRateLimit(c, "graphql", o.rateLimit);
    await next();
  };
  // Its signal is what the reads listen to; its own late answer (an envelope) is never reached: see GRACE_MS.
  const overall = deadline({ ms: GRAPHQL_LIMITS.timeMs, timeoutError: v1TimeoutError, graceMs: 1000 });
  const handler: Handler = async (c) => {
    const request = await forEngine(c);
    const scope = new RequestScope(o.runtime, o.deps, c);
    const answered = Promise.resolve(engine.fetch(request, { scope }));
    const late = afterDeadline(c);
    const res = await Promise.race([answered, late.promise]).finally(late.cancel);
    if (res === null) return json(c, { errors: [timedOut(GRAPHQL_LIMITS.timeMs).toJSON()] }, 200);
    // The answer's bytes as yoga encoded them, sent as they are (no decoding to a string and encoding again).
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.byteLength > GRAPHQL_LIMITS.responseBytes) {
      const error = graphqlError(
        "RESPONSE_TOO_LARGE",
        `The answer is larger than ${GRAPHQL_LIMITS.responseBytes} bytes; ask for fewer rows or fields.`,
      );
      return json(c, { data: null, errors: [error.toJSON()] }, 200);
    }
    c.header("cache-control", "no-store");
    return c.body(bytes, res.status as 200, { "content-type": res.headers.get("content-type") ?? "application/json" });
  };
  return [limited, overall, handler];
}

function json(c: Context, body: unknown, status: 200) {
  c.header("cache-control", "no-store");
  return c.body(JSON.stringify(body), status, { "content-type": "application/json; charset=utf-8" });
}

/** The request yoga reads: a GET as it came; a POST's body read here, bounded, and checked to be JSON. */
async function forEngine(c: Context): Promise<Request> {
  const accept = c.req.header("accept");
  const headers: Record<string, string> = accept ? { accept } : {};
  if (c.req.method !== "POST") return new Request(c.req.url, { method: c.req.method, headers });
  const type = (c.req.header("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/json") throw new UnsupportedMediaTypeError("application/json");
  const body = await readBounded(c.req.raw, GRAPHQL_LIMITS.bodyBytes);
  if (body === null) throw new PayloadTooLargeError(GRAPHQL_LIMITS.bodyBytes);
  return new Request(c.req.url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body });
}

/** Resolves null GRACE_MS after the request's deadline signal fires (never, without one). */
function afterDeadline(c: Context): { promise: Promise<null>; cancel: () => void } {
  const signal = requestDeadline(c);
  let timer: NodeJS.Timeout | undefined;
  let listener = () => {};
  const promise = new Promise<null>((resolve) => {
    listener = () => {
      timer = setTimeout(() => resolve(null), GRACE_MS);
    };
    signal?.addEventListener("abort", listener, { once: true });
  });
  return {
    promise,
    cancel: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", listener);
    },
  };
}
