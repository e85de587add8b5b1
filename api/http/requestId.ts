import { randomUUID } from "node:crypto";
import type { AppBindings, AppContext } from "./env";

/** An incoming id is echoed only when it is short and plain, so it cannot inject into logs or headers. */
const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of this request: a valid incoming `x-request-id`, else a fresh UUID. Under @hono/node-server
 * (what Ponder serves with) the header is read from the IncomingMessage's already parsed headers:
 * `c.req.header()` would first build a WHATWG Headers copy of every request header, the largest
 * single cost of a cached supply hit. Elsewhere (app.request, in-process MCP calls) it reads the
 * Request. Node joins a repeated header with ", " as Headers does, so both give the same answer.
 */
export function requestIdOf(c: AppContext): string {
  return requestIdFrom(c.req.raw, c.env);
}

/** requestIdOf before routing, from the raw request and the server's env (no Context yet). */
export function requestIdFrom(request: Request, env: AppBindings | undefined): string {
  const parsed = env?.incoming?.headers;
  return requestIdFor(parsed !== undefined ? parsed["x-request-id"] : request.headers.get("x-request-id"));
}

/**
 * The id for an incoming `x-request-id` as read from Node's parsed headers or a Headers (absent: undefined
 * or null); what every path above decides with, and the supply hot path ahead of @hono/node-server.
 */
export function requestIdFor(incoming: string | string[] | null | undefined): string {
  // node:crypto's own randomUUID: the global (Web Crypto's) checks its receiver and calls it, ~50 ns more per request.
  return typeof incoming === "string" && VALID_ID.test(incoming) ? incoming : randomUUID();
}
