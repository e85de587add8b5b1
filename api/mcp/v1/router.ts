import { Hono } from "hono";
import type { AppDeps } from "../../deps";
import type { AppEnv } from "../../http/env";
import { registerPreflightRoutes } from "./preflight";
import { registerPrepareRoutes } from "./prepare";
import { registerQuoteRoutes } from "./quote";
import { registerStateRoutes } from "./state";

/**
 * Every v1 route hangs off this one router, mounted at /api/mcp/v1 (design.md: a v2 would be a
 * second router beside it). Each feature file registers its own routes here.
 */
export function v1Router(deps: AppDeps): Hono<AppEnv> {
  const v1 = new Hono<AppEnv>();
  registerStateRoutes(v1, deps);
  registerPreflightRoutes(v1, deps);
  registerQuoteRoutes(v1, deps);
  registerPrepareRoutes(v1, deps);
  return v1;
}
