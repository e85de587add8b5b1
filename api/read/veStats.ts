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
import { floorShare, runPaced, runToEnd, SLICE, upperBound, type VeAnchor } from "./veRanking";

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

/**
 * The stats at time `t` of `anchor`'s live locks with `changes` (the locks with an event between the anchor and the
 * block, at their state there), as the statement computes them; `veHolders` is the block's ve ranking's length (the
 * owners with ve > 0: rankVe's rows).
 */
export function statsAt(t: bigint, anchor: VeAnchor, changes: readonly LockChange[], veHolders: number): LockStats {
  const base = baseOf(anchor);
  const tn = Number(t);
  const ends = anchor.endsSorted;
  const k = upperBound(ends, tn);
  // The anchor's locks as they stand at `t`; the changed ones are taken out and put back below.
  let totalLocked = base.totalLocked;
  let liveLocks = anchor.locks.length;
  let autoMaxLocks = base.autoMaxLocks;
  let autoMaxLocked = base.autoMaxLocked;
  let expiredLocked = base.amount[k] as bigint;
  let totalVe = anchorVeAt(t, anchor, base, k);
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
  // Owners: the anchor's (each holds a lock there), with each changed owner's count of locks moved.
  const moved = new Map<string, number>();
  const apply = (lock: VeLock, sign: 1 | -1) => {
    const s = BigInt(sign);
    totalLocked += s * lock.amount;
    liveLocks += sign;
    moved.set(lock.owner, (moved.get(lock.owner) ?? 0) + sign);
    totalVe += s * lockVe(lock, t);
    if (lock.autoMax) {
      autoMaxLocks += sign;
      autoMaxLocked += s * lock.amount;
      return;
    }
    if (lock.lockEnd <= t) {
      expiredLocked += s * lock.amount;
      return;
    }
    const w = lock.lockEnd / WEEK;
    const week = weeks.get(w) ?? { amount: 0n, count: 0 };
    week.amount += s * lock.amount;
    week.count += sign;
    weeks.set(w, week);
  };
  for (const c of changes) {
    const j = anchor.indexOfToken(c.tokenId);
    if (j !== undefined) apply(anchor.locks[j] as VeLock, -1);
    if (c.lock !== null) apply(c.lock, 1);
  }
  let holders = anchor.accounts.length;
  for (const [owner, d] of moved) {
    if (d === 0) continue;
    const i = anchor.accountIndex(owner);
    const before = i === undefined ? 0 : (anchor.count[i] as number);
    holders += (before + d > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
  }
  const unlocksByWeek = new Map<bigint, bigint>();
  for (const w of [...weeks.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const v = weeks.get(w) as { amount: bigint; count: number };
    if (v.count > 0) unlocksByWeek.set(w, v.amount);
  }
  return {
    totalLocked,
    totalVe,
    holders,
    veHolders,
    liveLocks,
    autoMaxLocks,
    autoMaxLocked,
    expiredLocked,
    unlocksByWeek,
  };
}
