import type { Hono } from "hono";
import type { AppEnv } from "../http/env";
import { parseQuery } from "../http/params";
import { MAX_LOCK_DURATION } from "../math";
import { WEEK } from "../read/atBlock";
import type { AtBlock, LockStats } from "../read/contract";
import { admitComputation, atIndexHead, blockAnswer, type IndexRuntime, keptAnswer, pinBlock } from "../read/runtime";
import { ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { array, integer, object, uintString } from "../route/jsonSchema";
import { answerFields, keptFields } from "./answer";
import { AT_PARAMS } from "./query";

/**
 * GET /stats — the protocol's locking at a block. totalLockedWei is totalLockedClaim(); totalVeWei the sum of every
 * holder's veBalanceOf. The unlock schedule covers every week a live non-AutoMax lock can end in: from the week of
 * the block's time to the week of that time + 365 days (53 or 54 unix weeks, each starting Thursday 00:00 UTC), so
 * schedule + expiredLockedWei + autoMaxLockedWei = totalLockedWei.
 */
export const statsRoute = {
  path: "/stats",
  operationId: "get_lock_stats",
  summary: "Read protocol lock statistics",
  description:
    "Totals at one block (default the index's head): locked amount (equals totalLockedClaim), total ve (the sum " +
    "of every holder's veBalanceOf), holders of live locks, holders with ve, live and AutoMax locks, and the " +
    "unlock schedule: non-AutoMax amounts by the week their locks end, for every week from the block's week to " +
    "the week of its time + 365 days. Amounts already past their end sit in expiredLockedWei; AutoMax locks never " +
    "unlock on their own and sit in autoMaxLockedWei.",
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: {},
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      totalLockedWei: uintString("Locked in live locks: VeLockNFT.totalLockedClaim() at the block."),
      totalVeWei: uintString("The sum of every holder's veBalanceOf at the block."),
      holders: integer("Accounts with at least one live lock.", { minimum: 0 }),
      veHolders: integer("Accounts with ve > 0 (the leaderboard's rows).", { minimum: 0 }),
      liveLocks: integer("Locks neither merged away nor unlocked.", { minimum: 0 }),
      autoMaxLocks: integer("Live AutoMax locks.", { minimum: 0 }),
      autoMaxLockedWei: uintString("Locked in AutoMax locks (they never unlock on their own)."),
      expiredLockedWei: uintString("Locked in non-AutoMax locks already past their end (can be unlocked now)."),
      unlockSchedule: array(
        object({
          weekStart: uintString("Unix time the week starts (a multiple of 604800: Thursday 00:00 UTC)."),
          amountWei: uintString("Non-AutoMax amounts whose lock ends in this week."),
        }),
        "Every week from the block's to the one 365 days later, oldest first.",
      ),
    }),
    example: {
      ...EXAMPLE_ENVELOPE,
      totalLockedWei: "260000000000000000000000",
      totalVeWei: "259810502283105022831050",
      holders: 2,
      veHolders: 2,
      liveLocks: 3,
      autoMaxLocks: 2,
      autoMaxLockedWei: "250000000000000000000000",
      expiredLockedWei: "0",
      unlockSchedule: [
        { weekStart: "1763596800", amountWei: "0" },
        { weekStart: "1764201600", amountWei: "0" },
      ],
    },
  },
} as const satisfies RouteDefinition;

/** The schedule: one entry per week from the week of t to the week of t + 365 d, zeros included. */
export function unlockSchedule(stats: LockStats, t: bigint) {
  const out: { weekStart: string; amountWei: string }[] = [];
  for (let w = t / WEEK; w <= (t + MAX_LOCK_DURATION) / WEEK; w++) {
    out.push({ weekStart: (w * WEEK).toString(), amountWei: (stats.unlocksByWeek.get(w) ?? 0n).toString() });
  }
  return out;
}

/**
 * A block's stats as JSON members, made into text once per block (keptFields) and answered as such: kept beside the
 * stats object (made once per block, and made ahead with the next block's board: api/read/veBoard.ts), under the time
 * the schedule is counted from, so the text made ahead is the one the block's readers find.
 */
function statsFields(rt: IndexRuntime, read: AtBlock<LockStats>): string {
  const s = read.value;
  return keptFields(rt, s, read.time.toString(), () => ({
    totalLockedWei: s.totalLocked.toString(),
    totalVeWei: s.totalVe.toString(),
    holders: s.holders,
    veHolders: s.veHolders,
    liveLocks: s.liveLocks,
    autoMaxLocks: s.autoMaxLocks,
    autoMaxLockedWei: s.autoMaxLocked.toString(),
    expiredLockedWei: s.expiredLocked.toString(),
    unlockSchedule: unlockSchedule(s, read.time),
  }));
}

export function registerStatsRoute(router: Hono<AppEnv>, rt: IndexRuntime): void {
  router.get(statsRoute.path, async (c) => {
    const q = parseQuery(c.req.url, statsRoute.query);
    // Pinned first (the head too): the stats are a function of the block, computed once per block and shared.
    const block = q.block ?? null;
    const { at, value: read } =
      (await keptAnswer(rt, c, rt.stats, block)) ??
      (await admitComputation(rt, c, rt.stats, block, () =>
        atIndexHead(c, block, async () => {
          const pinned = await pinBlock(rt, c, block, "block");
          return { at: pinned, value: await blockAnswer(rt, rt.stats, pinned) };
        }),
      ));
    // The head's stats: made into text for each next head as soon as they are computed (ComputeAhead.follow).
    if (!at.pinned) rt.ahead?.follow(rt.stats, "", (next) => statsFields(rt, next));
    return answerFields(c, rt, at, () => statsFields(rt, read));
  });
}
