import { Hono } from "hono";
import type { AppDeps } from "../deps";
import type { AppEnv } from "../http/env";
import { IndexUnavailableError } from "../http/errors";
import { registerAccountLocksRoute } from "./accountLocks";
import { BlockClock } from "./blockClock";
import { BlockMemo, requireInRange } from "./blockMemo";
import { registerHistoryRoutes } from "./history";
import { registerLeaderboardRoutes } from "./leaderboard";
import { registerLockRoute } from "./lock";
import type { IndexRuntime } from "./pin";
import { holdersCodec, sharedLoad, statsCodec } from "./sharedAnswers";
import { registerStatsRoute } from "./stats";
import { VeBoards } from "./veBoard";

/**
 * Every route of the index API, mounted at /api/index/v1 (api/paths.ts INDEX_BASE). Without a configured index
 * every route answers 503 INDEX_UNAVAILABLE (after its own parameters are judged: a bad one is still 400).
 */
export function indexRouter(deps: AppDeps, runtime: IndexRuntime = indexRuntime(deps)): Hono<AppEnv> {
  const router = new Hono<AppEnv>();
  registerLockRoute(router, runtime, deps);
  registerHistoryRoutes(router, runtime, deps);
  registerAccountLocksRoute(router, runtime, deps);
  registerLeaderboardRoutes(router, runtime, deps);
  registerStatsRoute(router, runtime, deps);
  return router;
}

/**
 * What the index is read through: one per app, shared by the routes and GraphQL (api/graphql), so both learn block
 * times into one clock. Without a configured index, every read is INDEX_UNAVAILABLE "unconfigured".
 */
export function indexRuntime(deps: AppDeps): IndexRuntime {
  const index = deps.lockIndex;
  const key = (what: string, at: { block: bigint; time: bigint }) =>
    `${what}:${deps.config.chainId}:${at.block}:${at.time}`;
  const rt: IndexRuntime | null = index
    ? {
        index,
        clock: new BlockClock(),
        stats: new BlockMemo({
          load: async (at) =>
            requireInRange(await sharedLoad(deps.indexShared, key("stats", at), statsCodec, () => index.stats(at))),
        }),
        boards:
          deps.veBoards ??
          new VeBoards({
            load: (at) =>
              sharedLoad(deps.indexShared, key("board", at), holdersCodec, () => {
                deps.metrics.veBoardComputations.inc();
                return index.holders(at);
              }),
          }),
      }
    : null;
  return rt ?? unavailable();
}

/** A runtime whose every read is INDEX_UNAVAILABLE "unconfigured". */
function unavailable(): IndexRuntime {
  const fail = () => Promise.reject(new IndexUnavailableError("unconfigured"));
  return {
    index: { probe: fail, lock: fail, locksOf: fail, events: fail, holders: fail, stats: fail },
    clock: new BlockClock(),
    stats: new BlockMemo({ load: fail }),
    boards: new VeBoards({ load: fail }),
  };
}
