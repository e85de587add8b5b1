import { Hono } from "hono";
import { ownsEdgeHeaders } from "../http/edge";
import type { AppEnv } from "../http/env";
import { parseAtLeast, sharedRequestKey } from "../read/atLeast";
import type { IndexRuntime } from "../read/runtime";
import { registerAccountLocksRoute } from "./accountLocks";
import { registerActivityRoutes } from "./activity";
import type { Pages } from "./answer";
import { type BoardHandlers, durationBoardHandlers, durationBoardRoute, durationRankRoute } from "./boards";
import { registerHistoryRoutes } from "./history";
import { veBoardHandlers } from "./leaderboard";
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
    // Its waiters released by the same head read once for all: the request they share is its path and parameters.
    if (atLeast) c.set("atLeast", { ...atLeast, shared: sharedRequestKey(c.req.url) });
    await next();
  });
  registerLockRoute(router, runtime);
  registerHistoryRoutes(router, runtime, pages);
  registerAccountLocksRoute(router, runtime, pages);
  registerBoardRoutes(router, runtime);
  registerStatsRoute(router, runtime);
  registerActivityRoutes(router, runtime, pages);
  registerProfileRoute(router, runtime);
  // Every JSON answer above is answer()'s, built with respond(): the edge prepares no headers for them. Not the
  // stream's (an event stream of its own).
  for (const r of router.routes) if (r.method === "GET") ownsEdgeHeaders(r.handler);
  if (streams) registerStreamRoute(router, runtime, streams);
  return router;
}

/**
 * The ve board and the duration boards, one pattern per depth (/leaderboards/:board, /leaderboards/:board/:address),
 * told apart by the board's name: the ve board's own handlers for "ve", the duration boards' (a 404 naming the boards
 * for an unknown one) for the rest. Hono's RegExpRouter refuses a literal segment beside a parameter
 * (/leaderboards/ve beside /leaderboards/:board), and that one refusal made SmartRouter route every request of the
 * app with the TrieRouter (test/http/routing.test.ts).
 */
function registerBoardRoutes(router: Hono<AppEnv>, runtime: IndexRuntime): void {
  const ve = veBoardHandlers(runtime);
  const duration = durationBoardHandlers(runtime);
  const of = (board: string): BoardHandlers => (board === "ve" ? ve : duration);
  router.get(durationBoardRoute.path, (c) => of(c.req.param("board")).board(c));
  router.get(durationRankRoute.path, (c) => of(c.req.param("board")).rank(c));
}
