import { Hono } from "hono";
import { ownsEdgeHeaders } from "../http/edge";
import type { AppEnv } from "../http/env";
import { parseAtLeast } from "../read/atLeast";
import type { IndexRuntime } from "../read/runtime";
import { registerAccountLocksRoute } from "./accountLocks";
import { registerActivityRoutes } from "./activity";
import type { Pages } from "./answer";
import { registerDurationBoardRoutes } from "./boards";
import { registerHistoryRoutes } from "./history";
import { registerLeaderboardRoutes } from "./leaderboard";
import { registerLockRoute } from "./lock";
import { registerProfileRoute } from "./profile";
import { registerStatsRoute } from "./stats";
import { registerStreamRoute, type StreamRouteOptions } from "./stream";

/**
 * Every route of the index API, mounted at /api/index/v1 (api/paths.ts INDEX_BASE). Without a configured index
 * every route answers 503 INDEX_UNAVAILABLE (after its own parameters are judged: a bad one is still 400).
 * `minBlock` / `waitMs` are read here for every route and honoured by the read model (api/read/runtime.ts), so a
 * route only declares them (AT_PARAMS or PAGE_PARAMS in api/index/query.ts). Pages of
 * many rows hold their rows in the process's budget and are built and written in turns (api/index/answer.ts).
 */
export function indexRouter(runtime: IndexRuntime, pages: Pages, streams?: StreamRouteOptions): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  router.use(async (c, next) => {
    const atLeast = parseAtLeast(c.req.url);
    if (atLeast) c.set("atLeast", atLeast);
    await next();
  });
  registerLockRoute(router, runtime);
  registerHistoryRoutes(router, runtime, pages);
  registerAccountLocksRoute(router, runtime, pages);
  registerLeaderboardRoutes(router, runtime);
  // After the ve routes: /leaderboards/ve is the ve board's, not a duration board's.
  registerDurationBoardRoutes(router, runtime);
  registerStatsRoute(router, runtime);
  registerActivityRoutes(router, runtime, pages);
  registerProfileRoute(router, runtime);
  // Every JSON answer above is answer()'s, built with respond(): the edge prepares no headers for them. Not the
  // stream's (an event stream of its own).
  for (const r of router.routes) if (r.method === "GET") ownsEdgeHeaders(r.handler);
  if (streams) registerStreamRoute(router, runtime, streams);
  return router;
}
