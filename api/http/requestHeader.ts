/**
 * One request header, read without building a WHATWG Headers. Under @hono/node-server, `c.req.header(name)` first
 * copies every request header into a Headers (validated one by one); the IncomingMessage has them parsed already
 * (the env's `incoming`), so a route that asks for one header (If-None-Match, X-Forwarded-For) reads it there, as
 * requestIdOf does (api/http/requestId.ts). Node joins a repeated header with ", " as Headers.get does; elsewhere
 * (app.request, in-process MCP calls) the Request is read. Absent: undefined, as c.req.header answers.
 */
import type { AppContext } from "./env";

/** `name` in lower case. */
export function requestHeader(c: AppContext, name: string): string | undefined {
  const parsed = c.env?.incoming?.headers;
  if (parsed === undefined) return c.req.header(name);
  const value = parsed[name];
  return typeof value === "string" ? value : value === undefined ? undefined : value.join(", ");
}
