import type { MiddlewareHandler } from "hono";

/** An incoming id is echoed only when it is short and plain, so it cannot inject into logs or headers. */
const VALID_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): MiddlewareHandler {
  return async (c, next) => {
    const incoming = c.req.header("x-request-id");
    const id = incoming && VALID_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId" as never, id as never);
    c.header("x-request-id", id);
    await next();
  };
}
