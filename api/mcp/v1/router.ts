import { Hono } from "hono";
import type { AppDeps } from "../../app";

/**
 * Every v1 route hangs off this one router, mounted at /api/mcp/v1 (design.md: a v2 would be a
 * second router beside it). Each feature file registers its own routes here.
 */
export function v1Router(deps: AppDeps): Hono {
  const v1 = new Hono();
  void deps;
  return v1;
}
