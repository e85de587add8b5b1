import { Hono } from "hono";
import type { RpcClient } from "./chain/rpc";
import type { AppConfig } from "./config";
import { ApiError, InternalError, MethodNotAllowedError, NotFoundError } from "./http/errors";
import { requestId } from "./http/requestId";

/** Everything the routes need from the outside world; tests build it from real parts. */
export type AppDeps = {
  config: AppConfig;
  /** null when no RPC URL is configured. */
  rpc: RpcClient | null;
};

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "*",
  "access-control-expose-headers": "*",
  "access-control-max-age": "86400",
} as const;

export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.use("*", requestId());
  // CORS on every response, errors included (design.md); set first so later failures keep it.
  app.use("*", async (c, next) => {
    for (const [k, v] of Object.entries(CORS_HEADERS)) c.header(k, v);
    if (c.req.method === "OPTIONS") return c.body(null, 204);
    if (c.req.method !== "GET" && c.req.method !== "HEAD") throw new MethodNotAllowedError(c.req.method);
    await next();
  });

  void deps;

  app.notFound(() => {
    throw new NotFoundError();
  });

  app.onError((error, c) => {
    const apiError = error instanceof ApiError ? error : new InternalError();
    if (!(error instanceof ApiError)) console.error(`[api] unhandled ${error.name}: ${error.message}`);
    for (const [k, v] of Object.entries(CORS_HEADERS)) c.header(k, v);
    c.header("cache-control", "no-store");
    if ("retryAfterSec" in apiError) c.header("retry-after", String(apiError.retryAfterSec));
    return c.json(apiError.toEnvelope(), apiError.status);
  });

  return app;
}
