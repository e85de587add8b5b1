import { Hono } from "hono";
import type { AppDeps } from "../../deps";
import type { AppEnv } from "../../http/env";
import { upstreamBackoff } from "../../http/upstreamBackoff";
import { registerPreflightRoutes } from "./preflight";
import { registerPrepareRoutes } from "./prepare";
import { registerQuoteRoutes } from "./quote";
import { registerStateRoutes } from "./state";

/**
 * Every v1 route hangs off this one router, mounted at /api/mcp/v1 (design.md: a v2 would be a
 * second router beside it). Each feature file registers its own routes here.
 */
export function v1Router(input: AppDeps): Hono<AppEnv> {
  const v1 = new Hono<AppEnv>();
  // Every v1 route reads the node per request: in an outage, one probe per back-off window, 503 for the rest.
  v1.use("*", upstreamBackoff(input.rpcBackoff));
  const deps = { ...input, rpc: input.rpcBackoff.wrap(input.rpc) };
  registerStateRoutes(v1, deps);
  registerPreflightRoutes(v1, deps);
  registerQuoteRoutes(v1, deps);
  registerPrepareRoutes(v1, deps);
  return v1;
}
