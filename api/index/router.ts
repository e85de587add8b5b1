import { Hono } from "hono";
import type { AppEnv } from "../http/env";
import type { IndexRuntime } from "../read/runtime";
import { registerAccountLocksRoute } from "./accountLocks";
import { registerHistoryRoutes } from "./history";
import { registerLeaderboardRoutes } from "./leaderboard";
import { registerLockRoute } from "./lock";
import { registerStatsRoute } from "./stats";
import { registerStreamRoute, type StreamRouteOptions } from "./stream";

/**
 * Every route of the index API, mounted at /api/index/v1 (api/paths.ts INDEX_BASE). Without a configured index
 * every route answers 503 INDEX_UNAVAILABLE (after its own parameters are judged: a bad one is still 400).
 */
export function indexRouter(runtime: IndexRuntime, streams?: StreamRouteOptions): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  registerLockRoute(router, runtime);
  registerHistoryRoutes(router, runtime);
  registerAccountLocksRoute(router, runtime);
  registerLeaderboardRoutes(router, runtime);
  registerStatsRoute(router, runtime);
  if (streams) registerStreamRoute(router, runtime, streams);
  return router;
}
