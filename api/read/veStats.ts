/**
 * A block's stats (api/read/atBlock.ts `stats`: the same figures, exactly) derived in the process from the ve board's
 * inputs — a finalized anchor's live locks and the locks changed since (api/read/veBoard.ts) — instead of the statement
 * over every live lock, which at Base scale held Postgres ~360 ms a block and made a new head's first `/stats` reader
 * wait for it (issue 33, item 6).
 *
 * What does not move with time is summed once per anchor (amounts, counts, owners, amounts by unlock week). What does
 * — the expired amount, the unlock weeks still ahead, the total ve — is read from the anchor's plain locks in order of
 * their end (api/read/veRanking.ts VeAnchor.endsSorted): a binary search for `t`, prefix sums of amount, q and q·end
 * (amount = q·MAX + r: floor(amount·(end − t) / MAX) = q·(end − t) + floor(r·(end − t) / MAX)), and the shares
 * floor(r·d / MAX) of the unexpired locks summed in doubles (exact: each below 2^27, or the lock is summed in bigints).
 * The changed locks are then taken out as they were at the anchor and put in as they are at the block, each by the
 * rules (protocol.md §2). Cost per block: O(log L + unexpired plain locks) double operations and O(changes) bigints.
 */
import { lockVe } from "../math";
import { MAX_LOCK_DURATION } from "../math/constants";
import { WEEK } from "./atBlock";
import type { LockChange, LockStats, VeLock } from "./contract";
import {
  floorShare,
  type LockDiff,
  replayDiff,
  runPaced,
  runToEnd,
  SLICE,
  upperBound,
  type VeAnchor,
} from "./veRanking";

/** What an anchor's stats start from, made once per anchor (ahead, or on the first stats read; a WeakMap by anchor). */
type StatsBase = {
  totalLocked: bigint;
  autoMaxLocks: number;
  autoMaxLocked: bigint;
  /** Σ over the first k locks of endsSorted (index k), of amount, q and q·end. */
  amount: bigint[];
  q: bigint[];
  qEnd: bigint[];
  /** Plain locks whose end is past 2^53 (not in endsSorted): never expired at a block's time. */
  far: number[];
  /** Plain locks' amounts and counts by unlock week, every end. */
  weeks: Map<bigint, { amount: bigint; count: number }>;
};

const bases = new WeakMap<VeAnchor, StatsBase>();

/** The anchor's stats base: made once (at once, on the first stats read, if prepareStats has not made it). */
function baseOf(anchor: VeAnchor): StatsBase {
  let base = bases.get(anchor);
  if (base === undefined) {
    base = runToEnd(baseParts(anchor));
    bases.set(anchor, base);
  }
  return base;
}

/** Whether the anchor's stats base was made (someone read the stats derived from it). */
export function hasStatsBase(anchor: VeAnchor): boolean {
  return bases.has(anchor);
}

/**
 * Makes the anchor's stats base ahead of its first stats read, in slices with `pause` awaited between them: at Base
 * scale it is ~90 ms of CPU (bigint prefix sums over 95,000 locks), which the first `/stats` reader of each new anchor
 * waited for, and every other request with it.
 */
export async function prepareStats(anchor: VeAnchor, pause: () => Promise<void>): Promise<void> {
  if (bases.has(anchor)) return;
  const base = await runPaced(baseParts(anchor), pause);
  if (!bases.has(anchor)) bases.set(anchor, base);
}

function* baseParts(anchor: VeAnchor): Generator<void, StatsBase> {
  const locks = anchor.locks;
  let totalLocked = 0n;
  let autoMaxLocks = 0;
  let autoMaxLocked = 0n;
  const far: number[] = [];
  const weeks = new Map<bigint, { amount: bigint; count: number }>();
  for (let j = 0; j < locks.length; j++) {
    if ((j & SLICE) === SLICE) yield;
    const lock = locks[j] as VeLock;
    totalLocked += lock.amount;
    if (lock.autoMax) {
      autoMaxLocks++;
      autoMaxLocked += lock.amount;
      continue;
    }
    if (Number.isNaN(anchor.end[j] as number)) far.push(j);
    const w = lock.lockEnd / WEEK;
    const week = weeks.get(w);
    if (week === undefined) weeks.set(w, { amount: lock.amount, count: 1 });
    else {
      week.amount += lock.amount;
      week.count++;
    }
  }
  const p = anchor.byEnd.length;
  const amount = new Array<bigint>(p + 1);
  const q = new Array<bigint>(p + 1);
  const qEnd = new Array<bigint>(p + 1);
  amount[0] = 0n;
  q[0] = 0n;
  qEnd[0] = 0n;
  for (let k = 0; k < p; k++) {
    if ((k & SLICE) === SLICE) yield;
    const lock = locks[anchor.byEnd[k] as number] as VeLock;
    const lq = lock.amount / MAX_LOCK_DURATION;
    amount[k + 1] = (amount[k] as bigint) + lock.amount;
    q[k + 1] = (q[k] as bigint) + lq;
    qEnd[k + 1] = (qEnd[k] as bigint) + lq * lock.lockEnd;
  }
  return { totalLocked, autoMaxLocks, autoMaxLocked, amount, q, qEnd, far, weeks };
}

/**
 * The anchor's locks' total ve at `t` (`k`: the first of endsSorted past `t`): the pass over the unexpired plain locks,
 * most of a block's stats. The last few times' are kept per anchor: a block's ranking made ahead and then patched with
 * the block's own lock events (api/read/veBoard.ts) has its stats made twice at one time, with other changes.
 */
function anchorVeAt(t: bigint, anchor: VeAnchor, base: StatsBase, k: number): bigint {
  let kept = veAtTimes.get(anchor);
  const known = kept?.get(t);
  if (known !== undefined) return known;
  const ends = anchor.endsSorted;
  const tn = Number(t);
  const p = ends.length;
  let totalVe = base.autoMaxLocked + ((base.qEnd[p] as bigint) - (base.qEnd[k] as bigint));
  totalVe -= t * ((base.q[p] as bigint) - (base.q[k] as bigint));
  let shares = 0;
  for (let m = k; m < p; m++) {
    const j = anchor.byEnd[m] as number;
    const f = floorShare(anchor.r[j] as number, (ends[m] as number) - tn);
    if (f >= 0) shares += f;
    else {
      // A share past 2^53: this lock's floor(r·d / MAX) in bigints.
      const lock = anchor.locks[j] as VeLock;
      totalVe += ((lock.amount % MAX_LOCK_DURATION) * (lock.lockEnd - t)) / MAX_LOCK_DURATION;
    }
  }
  totalVe += BigInt(shares);
  for (const j of base.far) totalVe += lockVe(anchor.locks[j] as VeLock, t);
  if (kept === undefined) {
    kept = new Map();
    veAtTimes.set(anchor, kept);
  }
  if (kept.size >= VE_AT_TIMES_KEPT) kept.delete(kept.keys().next().value as bigint);
  kept.set(t, totalVe);
  return totalVe;
}

/** Times whose anchor ve is kept per anchor (a WeakMap by anchor: gone with it). */
const VE_AT_TIMES_KEPT = 4;
const veAtTimes = new WeakMap<VeAnchor, Map<bigint, bigint>>();

/** What a block's stats were summed to (kept beside them: patchStats starts from it). */
type Tally = {
  anchor: VeAnchor;
  t: bigint;
  totalLocked: bigint;
  liveLocks: number;
  autoMaxLocks: number;
  autoMaxLocked: bigint;
  expiredLocked: bigint;
  totalVe: bigint;
  /** Unlock weeks from `t`'s on: amounts and counts of plain locks (a week may fall to 0 locks). */
  weeks: Map<bigint, { amount: bigint; count: number }>;
  /** Owners whose count of locks moved from the anchor's, by how much. */
  moved: Map<string, number>;
  holders: number;
};

/** Stats made by statsAt, with what they were summed to (a WeakMap: readers see LockStats). */
const tallies = new WeakMap<LockStats, Tally>();

/**
 * The stats at time `t` of `anchor`'s live locks with `changes` (the locks with an event between the anchor and the
 * block, at their state there), as the statement computes them; `veHolders` is the block's ve ranking's length (the
 * owners with ve > 0: rankVe's rows). `forPatch` (a block's made ahead): what they were summed to is kept with them
 * for patchStats — a map of the owners moved since the anchor, kept only where a patch may follow.
 */
export function statsAt(
  t: bigint,
  anchor: VeAnchor,
  changes: readonly LockChange[],
  veHolders: number,
  { forPatch = false }: { forPatch?: boolean } = {},
): LockStats {
  const base = baseOf(anchor);
  const tn = Number(t);
  const ends = anchor.endsSorted;
  const k = upperBound(ends, tn);
  // Unlock weeks from `t`'s week on: that week without the ends at or before `t` (plain locks in endsSorted from
  // that week's start up to k; a far end is never in it), later ones whole.
  const week0 = t / WEEK;
  const weekStart = upperBound(ends, Number(week0 * WEEK) - 1);
  const weeks = new Map<bigint, { amount: bigint; count: number }>();
  for (const [w, v] of base.weeks) {
    if (w > week0) weeks.set(w, { amount: v.amount, count: v.count });
    else if (w === week0) {
      const count = v.count - (k - weekStart);
      const amount = v.amount - ((base.amount[k] as bigint) - (base.amount[weekStart] as bigint));
      weeks.set(w, { amount, count });
    }
  }
  // The anchor's locks as they stand at `t`; the changed ones are taken out and put back (as they were at the anchor,
  // as they are at the block).
  const tally: Tally = {
    anchor,
    t,
    totalLocked: base.totalLocked,
    liveLocks: anchor.locks.length,
    autoMaxLocks: base.autoMaxLocks,
    autoMaxLocked: base.autoMaxLocked,
    expiredLocked: base.amount[k] as bigint,
    totalVe: anchorVeAt(t, anchor, base, k),
    weeks,
    moved: new Map(),
    holders: 0,
  };
  for (const c of changes) {
    const j = anchor.indexOfToken(c.tokenId);
    if (j !== undefined) apply(tally, anchor.locks[j] as VeLock, -1);
    if (c.lock !== null) apply(tally, c.lock, 1);
  }
  // Owners: the anchor's (each holds a lock there), with each changed owner's count of locks moved.
  tally.holders = anchor.accounts.length + holdersMoved(anchor, tally.moved, null);
  const stats = statsOf(tally, veHolders);
  if (forPatch) tallies.set(stats, tally);
  return stats;
}

/**
 * The stats of `base`'s block with the changes it was made with replaced as `diff` says (api/read/veRanking.ts
 * differingLocks; same anchor and time), equal to statsAt with the block's changes: a block made ahead whose own events
 * changed a few locks. Only the locks that differ are taken out (as they were in base's list, else at the anchor) and
 * put in (as they are), O(differing locks), not a pass over every change since the anchor (thousands after a burst,
 * ~1 µs each while the block's first `/stats` reader waited). Undefined when `base` was not made by statsAt `forPatch`
 * with this anchor and time (a patched block's stats are not patched again).
 */
export function patchStats(
  base: LockStats,
  anchor: VeAnchor,
  t: bigint,
  diff: readonly LockDiff[],
  veHolders: number,
): LockStats | undefined {
  const from = tallies.get(base);
  if (from === undefined || from.anchor !== anchor || from.t !== t) return undefined;
  const weeks = new Map<bigint, { amount: bigint; count: number }>();
  for (const [w, v] of from.weeks) weeks.set(w, { amount: v.amount, count: v.count });
  // Its own moves of owners' counts, on top of base's.
  const tally: Tally = { ...from, weeks, moved: new Map() };
  replayDiff(anchor, diff, (lock, sign) => apply(tally, lock, sign));
  tally.holders = from.holders + holdersMoved(anchor, tally.moved, from.moved);
  return statsOf(tally, veHolders);
}

/** A lock taken out of (-1) or put into (1) a tally at its time, by the rules (protocol.md §2). */
function apply(s: Tally, lock: VeLock, sign: 1 | -1): void {
  const n = BigInt(sign);
  s.totalLocked += n * lock.amount;
  s.liveLocks += sign;
  s.moved.set(lock.owner, (s.moved.get(lock.owner) ?? 0) + sign);
  s.totalVe += n * lockVe(lock, s.t);
  if (lock.autoMax) {
    s.autoMaxLocks += sign;
    s.autoMaxLocked += n * lock.amount;
    return;
  }
  if (lock.lockEnd <= s.t) {
    s.expiredLocked += n * lock.amount;
    return;
  }
  const w = lock.lockEnd / WEEK;
  const week = s.weeks.get(w) ?? { amount: 0n, count: 0 };
  week.amount += n * lock.amount;
  week.count += sign;
  s.weeks.set(w, week);
}

/**
 * How many more owners hold a lock after `moves` (owner → change in its count of locks), on top of `prior` moves
 * from the anchor's counts (none: from the anchor's).
 */
function holdersMoved(anchor: VeAnchor, moves: Map<string, number>, prior: Map<string, number> | null): number {
  let more = 0;
  for (const [owner, d] of moves) {
    if (d === 0) continue;
    const i = anchor.accountIndex(owner);
    const before = (i === undefined ? 0 : (anchor.count[i] as number)) + (prior?.get(owner) ?? 0);
    more += (before + d > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
  }
  return more;
}

function statsOf(s: Tally, veHolders: number): LockStats {
  const unlocksByWeek = new Map<bigint, bigint>();
  for (const w of [...s.weeks.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const v = s.weeks.get(w) as { amount: bigint; count: number };
    if (v.count > 0) unlocksByWeek.set(w, v.amount);
  }
  return {
    totalLocked: s.totalLocked,
    totalVe: s.totalVe,
    holders: s.holders,
    veHolders,
    liveLocks: s.liveLocks,
    autoMaxLocks: s.autoMaxLocks,
    autoMaxLocked: s.autoMaxLocked,
    expiredLocked: s.expiredLocked,
    unlocksByWeek,
  };
}
