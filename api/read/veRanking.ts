/**
 * The ve ranking of a block, derived in the process from an anchor's live locks (api/read/veBoard.ts).
 *
 * ve changes with time for every lock, so a ranking cannot be an older one with a few accounts changed (as the
 * duration boards' are, api/read/durationBoards.ts). What changes between two blocks is small, though: the locks with
 * an event between them. So the live locks of a finalized block (the anchor) are read once, and a block's ranking is
 * computed here from them and the locks changed since (api/read/atBlock.ts veLockDelta), in integer arithmetic equal
 * to the SQL's (protocol.md §2: floor(amount × (lockEnd − t) / MAX) per lock, summed per owner), then put in order
 * starting from the order of the ranking made before it, which is nearly right: unchanged owners by insertion (two
 * of them swap only where their values cross), changed and new ones sorted apart and merged in
 * (docs/design.md "The official leaderboards": the ve board at a new block).
 *
 * Exactness: with amount = q·MAX + r (0 ≤ r < MAX), floor(amount·d / MAX) = q·d + floor(r·d / MAX) for d = lockEnd − t
 * ≥ 0. Summed over an owner's unexpired locks, Σ q·d = Σ q·lockEnd − t·Σ q: two sums kept per owner at the anchor, so
 * an owner's key (a double with an error bound) costs a few operations per block whatever its locks; Σ floor(r·d / MAX)
 * is a double per lock, exact
 * (r·d < 2^50, the floor checked against its neighbours). An owner whose locks changed since the anchor, or one of
 * whose locks expired between the two times, is summed again lock by lock; an unchanged owner's exact ve (a row shown,
 * two keys too close) is its anchor locks' sum by the rules. Few allocations per block: the API process runs with a
 * small young generation (docs/operations.md), where every bigint and large array made is collected.
 */
import type { Address } from "viem";
import { lockVe } from "../math";
import { MAX_LOCK_DURATION } from "../math/constants";
import type { HolderVe, LockChange, VeLock, VeRanking } from "./contract";

type At = { block: bigint; time: bigint };

const MAX = MAX_LOCK_DURATION;
const MAX_N = Number(MAX_LOCK_DURATION);
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The live locks of one (finalized) block, laid out for the pass per block, with sums per owner at its time. */
export class VeAnchor {
  readonly block: bigint;
  readonly time: bigint;
  readonly locks: readonly VeLock[];
  /** Owners (lower-case); each lock's owner as an index into them. */
  readonly accounts: string[];
  readonly #accountIndex: Map<string, number>;
  readonly #indexOf: Map<bigint, number>;
  readonly owner: Int32Array;
  /** Per lock: r of amount = q·MAX + r (q is summed per owner below); lockEnd as a number (NaN past 2^53). */
  readonly r: Float64Array;
  readonly end: Float64Array;
  /** Per owner: its locks (indexes), from first[i] to first[i + 1] in byOwner. */
  readonly first: Int32Array;
  readonly byOwner: Int32Array;
  /** Per owner: Σ amount of its live locks, and their count. */
  readonly locked: bigint[];
  readonly count: Int32Array;
  /**
   * Per owner at the anchor's time, as doubles (each within 2^-53 of its exact sum, summed in bigints here): c = Σ
   * amount (AutoMax) + Σ q·lockEnd (unexpired), qn = Σ q (unexpired) — an owner's key per block without a bigint.
   */
  readonly cn: Float64Array;
  readonly qn: Float64Array;
  /** The same sums exact: an owner's exact ve at a time is c − t·q + its shares, three bigint operations. */
  readonly c: readonly bigint[];
  readonly q: readonly bigint[];
  /** Owners whose sums do not hold (a lock end past 2^53): summed lock by lock at every block. */
  readonly odd: Uint8Array;
  /**
   * Per owner: the latest end of its locks when all are plain (none AutoMax, every end below 2^53), else +Infinity.
   * At a time not before it, every lock of the owner has expired and its ve is 0 exactly: no bigint sum. (Owners
   * whose every lock has expired pile up as the index ages: ~40 % of Base-scale holders; summing each in bigints
   * to learn its 0 was most of a block's pass.)
   */
  readonly lastEnd: Float64Array;
  /** Plain (not AutoMax) locks' ends, ascending, and the locks: where expiries between two times are found. */
  readonly endsSorted: Float64Array;
  readonly byEnd: Int32Array;
  /**
   * The newest head ranking's order (owner indexes, ve descending): where the next sort starts. That ranking's own
   * array, not a copy: an index past the anchor's accounts is one of that ranking's owners new since the anchor (its
   * own numbering), which a reader skips.
   */
  order: Int32Array | null = null;

  /** Built at once (`parts` made here), or from the parts a paced build made (VeAnchor.paced). */
  constructor(at: At, locks: readonly VeLock[], parts: AnchorParts = runToEnd(anchorParts(at, locks))) {
    this.block = at.block;
    this.time = at.time;
    this.locks = locks;
    this.accounts = parts.accounts;
    this.#accountIndex = parts.accountIndex;
    this.#indexOf = parts.indexOf;
    this.owner = parts.owner;
    this.r = parts.r;
    this.end = parts.end;
    this.first = parts.first;
    this.byOwner = parts.byOwner;
    this.locked = parts.locked;
    this.count = parts.count;
    this.odd = parts.odd;
    this.lastEnd = parts.lastEnd;
    this.cn = parts.cn;
    this.qn = parts.qn;
    this.c = parts.c;
    this.q = parts.q;
    this.byEnd = parts.byEnd;
    this.endsSorted = parts.endsSorted;
  }

  /**
   * The anchor built in slices of a few ms, `pause` awaited between them: at Base scale (95,000 live locks) a build
   * is ~200–250 ms of CPU, which in one piece held the event loop (every request of the process) each time the anchor
   * moved, every 64 finalized blocks.
   */
  static async paced(at: At, locks: readonly VeLock[], pause: () => Promise<void>): Promise<VeAnchor> {
    return new VeAnchor(at, locks, await runPaced(anchorParts(at, locks), pause));
  }

  /** The anchor's lock of a token, by index (undefined when the token was not live at the anchor). */
  indexOfToken(tokenId: bigint): number | undefined {
    return this.#indexOf.get(tokenId);
  }

  accountIndex(owner: string): number | undefined {
    return this.#accountIndex.get(owner);
  }

  /** The live locks at `at`, given the locks that changed between this anchor and `at` (a moved anchor). */
  locksWith(changes: readonly LockChange[]): readonly VeLock[] {
    if (changes.length === 0) return this.locks;
    const changed = new Set<bigint>(changes.map((c) => c.tokenId));
    const locks = this.locks.filter((lock) => !changed.has(lock.tokenId));
    for (const c of changes) if (c.lock !== null) locks.push(c.lock);
    return locks;
  }

  /** The anchor at `at`, given the locks that changed between this anchor and `at` (a moved anchor). */
  withChanges(at: At, changes: readonly LockChange[]): VeAnchor {
    return new VeAnchor(at, this.locksWith(changes));
  }
}

/** What a VeAnchor is made of (its fields), made by anchorParts. */
type AnchorParts = {
  accounts: string[];
  accountIndex: Map<string, number>;
  indexOf: Map<bigint, number>;
  owner: Int32Array;
  r: Float64Array;
  end: Float64Array;
  first: Int32Array;
  byOwner: Int32Array;
  locked: bigint[];
  count: Int32Array;
  odd: Uint8Array;
  lastEnd: Float64Array;
  cn: Float64Array;
  qn: Float64Array;
  c: bigint[];
  q: bigint[];
  byEnd: Int32Array;
  endsSorted: Float64Array;
};

/** Iterations between the slices of a paced build (a few ms each at Base scale); a power of two less one. */
export const SLICE = 8_191;

/**
 * The plain locks (indexes, ascending) in order of their end, ties by index, and their ends in that order. Each end
 * and index packed in one double (end·2^k + index, exact below 2^53) and sorted as numbers: a comparator sort of
 * 90,000 indexes was ~60 ms of one slice at Base scale, this a few. Ends too large to pack take the comparator.
 */
function* sortedByEnd(
  plain: readonly number[],
  end: Float64Array,
): Generator<void, { byEnd: Int32Array; endsSorted: Float64Array }> {
  const span = 2 ** Math.ceil(Math.log2(end.length + 1));
  let latest = 0;
  for (const j of plain) latest = Math.max(latest, end[j] as number);
  if ((latest + 1) * span > Number.MAX_SAFE_INTEGER) {
    const sorted = [...plain].sort((x, y) => (end[x] as number) - (end[y] as number));
    return { byEnd: Int32Array.from(sorted), endsSorted: Float64Array.from(sorted, (j) => end[j] as number) };
  }
  const packed = new Float64Array(plain.length);
  for (let k = 0; k < plain.length; k++) {
    const j = plain[k] as number;
    packed[k] = (end[j] as number) * span + j;
  }
  yield;
  packed.sort();
  yield;
  const byEnd = new Int32Array(packed.length);
  const endsSorted = new Float64Array(packed.length);
  for (let k = 0; k < packed.length; k++) {
    if ((k & SLICE) === SLICE) yield;
    const j = (packed[k] as number) % span;
    byEnd[k] = j;
    endsSorted[k] = ((packed[k] as number) - j) / span;
  }
  return { byEnd, endsSorted };
}

/** A generator's value, run to its end at once. */
export function runToEnd<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** A generator's value, `pause` awaited at each of its yields (a slice of work between them). */
export async function runPaced<T>(steps: Generator<void, T>, pause: () => Promise<void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}

/** The anchor's parts, yielding every SLICE + 1 locks or owners of each pass (nothing is read between slices). */
function* anchorParts(at: At, locks: readonly VeLock[]): Generator<void, AnchorParts> {
  const accounts: string[] = [];
  const accountIndex = new Map<string, number>();
  const indexOf = new Map<bigint, number>();
  const n = locks.length;
  const owner = new Int32Array(n);
  const qOf = new Array<bigint>(n);
  const r = new Float64Array(n);
  const end = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const lock = locks[j] as VeLock;
    indexOf.set(lock.tokenId, j);
    let i = accountIndex.get(lock.owner);
    if (i === undefined) {
      i = accounts.length;
      accounts.push(lock.owner);
      accountIndex.set(lock.owner, i);
    }
    owner[j] = i;
    const q = lock.amount / MAX;
    qOf[j] = q;
    r[j] = Number(lock.amount - q * MAX);
    end[j] = lock.lockEnd <= SAFE ? Number(lock.lockEnd) : Number.NaN;
    // The heaviest pass (two map entries and a bigint division a lock): slices a quarter as long.
    if ((j & (SLICE >> 2)) === SLICE >> 2) yield;
  }
  const a = accounts.length;
  const first = new Int32Array(a + 1);
  for (let j = 0; j < n; j++) {
    const i = (owner[j] as number) + 1;
    first[i] = (first[i] as number) + 1;
  }
  for (let i = 0; i < a; i++) first[i + 1] = (first[i + 1] as number) + (first[i] as number);
  const byOwner = new Int32Array(n);
  const next = first.slice(0, a);
  for (let j = 0; j < n; j++) {
    const i = owner[j] as number;
    const k = next[i] as number;
    byOwner[k] = j;
    next[i] = k + 1;
  }
  yield;
  const c = new Array<bigint>(a).fill(0n);
  const q = new Array<bigint>(a).fill(0n);
  const locked = new Array<bigint>(a).fill(0n);
  const count = new Int32Array(a);
  const odd = new Uint8Array(a);
  const lastEnd = new Float64Array(a).fill(Number.NEGATIVE_INFINITY);
  const tn = Number(at.time);
  const plain: number[] = [];
  for (let j = 0; j < n; j++) {
    if ((j & SLICE) === SLICE) yield;
    const lock = locks[j] as VeLock;
    const i = owner[j] as number;
    locked[i] = (locked[i] as bigint) + lock.amount;
    count[i] = (count[i] as number) + 1;
    const e = end[j] as number;
    if (lock.autoMax || Number.isNaN(e)) lastEnd[i] = Number.POSITIVE_INFINITY;
    else if (e > (lastEnd[i] as number)) lastEnd[i] = e;
    if (lock.autoMax) {
      c[i] = (c[i] as bigint) + lock.amount;
      continue;
    }
    if (Number.isNaN(e)) {
      odd[i] = 1;
      continue;
    }
    plain.push(j);
    if (e > tn) {
      c[i] = (c[i] as bigint) + (qOf[j] as bigint) * lock.lockEnd;
      q[i] = (q[i] as bigint) + (qOf[j] as bigint);
    }
  }
  yield;
  const cn = Float64Array.from(c, (v) => Number(v));
  const qn = Float64Array.from(q, (v) => Number(v));
  yield;
  const { byEnd, endsSorted } = yield* sortedByEnd(plain, end);
  return {
    accounts,
    accountIndex,
    indexOf,
    owner,
    r,
    end,
    first,
    byOwner,
    locked,
    count,
    odd,
    lastEnd,
    cn,
    qn,
    c,
    q,
    byEnd,
    endsSorted,
  };
}

export type { VeRanking, VeRows } from "./contract";

/**
 * Buffers a ranking needs only while it is made (rankVe runs to its end without yielding, so one set serves every
 * such call; a ranking made in slices, rankVePaced, brings a set of its own), grown as needed. Per block the process
 * then allocates little besides the ranking's own order (one Int32Array) and a few small maps: the API process runs
 * with a small young generation (docs/operations.md), where a block's garbage of ~60,000-element arrays meant a
 * scavenge or more per block and a mark-compact every few blocks.
 */
export class RankScratch {
  b = [new Uint8Array(0), new Uint8Array(0), new Uint8Array(0), new Uint8Array(0)];
  d = [new Float64Array(0), new Float64Array(0), new Float64Array(0)];
  i = [new Int32Array(0)];
  /** Zeroed. */
  bytes(k: number, n: number): Uint8Array {
    if ((this.b[k] as Uint8Array).length < n) this.b[k] = new Uint8Array(Math.ceil(n * 1.25));
    const b = (this.b[k] as Uint8Array).subarray(0, n);
    b.fill(0);
    return b;
  }
  doubles(k: number, n: number): Float64Array {
    if ((this.d[k] as Float64Array).length < n) this.d[k] = new Float64Array(Math.ceil(n * 1.25));
    return (this.d[k] as Float64Array).subarray(0, n);
  }
  ints(k: number, n: number): Int32Array {
    if ((this.i[k] as Int32Array).length < n) this.i[k] = new Int32Array(Math.ceil(n * 1.25));
    return (this.i[k] as Int32Array).subarray(0, n);
  }
}

const scratch = new RankScratch();

/** A key's relative error bound, generously: three roundings of 2^-53 each, and the inputs'. */
const EPS = 2 ** -49;

/** floor(r·d / MAX) for 0 ≤ r < MAX and d ≥ 0 while r·d is an exact integer (≤ 2^53); -1 past that. */
export function floorShare(r: number, d: number): number {
  const x = r * d;
  if (x > Number.MAX_SAFE_INTEGER) return -1;
  let f = Math.floor(x / MAX_N);
  // The quotient is correctly rounded: floor can be off by one only at an integer boundary; settle it exactly.
  if (f * MAX_N > x) f--;
  else if ((f + 1) * MAX_N <= x) f++;
  return f;
}

/** The first index in ascending `xs` whose value is > x. */
export function upperBound(xs: Float64Array, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `seq[0, m)` put in order by `cmp` (negative: the first goes first; never 0 for two owners) in place, by insertion
 * from the left: in the previous ranking's order, unchanged owners are in order or a few places off (two owners' ve
 * cross only where their decay rates differ and they were close). False, with `seq` left a permutation of itself, once
 * the elements moved pass `budget` (a ranking from far in time): the caller sorts it whole then.
 */
export function insertionSorted(
  seq: Int32Array,
  m: number,
  cmp: (a: number, b: number) => number,
  budget: number,
): boolean {
  let moved = 0;
  for (let k = 1; k < m; k++) {
    const x = seq[k] as number;
    if (cmp(seq[k - 1] as number, x) < 0) continue;
    let lo = 0;
    let hi = k - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(seq[mid] as number, x) > 0) hi = mid;
      else lo = mid + 1;
    }
    moved += k - lo;
    if (moved > budget) return false;
    seq.copyWithin(lo + 1, lo, k);
    seq[lo] = x;
  }
  return true;
}

/** The first index in `seq[from, m)` whose owner goes after `x` (m when none). */
function firstAfterIn(seq: Int32Array, from: number, m: number, x: number, cmp: (a: number, b: number) => number) {
  let lo = from;
  let hi = m;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(seq[mid] as number, x) > 0) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The ve ranking at `at`: `anchor`'s live locks with `changes` (the locks with an event between the anchor and `at`,
 * at their state at `at`) — every owner with ve > 0, ve descending then address ascending (byte order), with the sum
 * of its live locks' amounts and their count, as api/read/atBlock.ts holders computes it.
 *
 * It starts from the anchor's newest order and, with `keepOrder` (the head's rankings), leaves its own there for the
 * next. A past block's (a reader's time travel, up to hours away) leaves the head's: its order is far from the next
 * head's, which would then be sorted whole (tens of ms at Base scale instead of a few) after every past block asked.
 */
export function rankVe(at: At, anchor: VeAnchor, changes: readonly LockChange[], options: RankOptions = {}): VeRanking {
  return runToEnd(rankVeSteps(at, anchor, changes, options, scratch));
}

/** What a ranking is made for: `keepOrder` (its order the next one's start), `forPatch` (made with its patch aids). */
export type RankOptions = { keepOrder?: boolean; forPatch?: boolean };

/**
 * rankVe in slices of a few ms (every SLICE + 1 locks or owners of a pass), `pause` awaited between them: the next
 * block's ranking made ahead between heads (veBoard.ts), ~10–30 ms of CPU at Base scale that in one piece held every
 * request of the process once a block. With buffers of its own (`own`: one set per caller, never two runs at once),
 * as the readers' rankings made meanwhile use the shared set; the anchor is read only (its order as the run reaches
 * it).
 */
export function rankVePaced(
  at: At,
  anchor: VeAnchor,
  changes: readonly LockChange[],
  options: RankOptions,
  own: RankScratch,
  pause: () => Promise<void>,
): Promise<VeRanking> {
  return runPaced(rankVeSteps(at, anchor, changes, options, own), pause);
}

/** rankVe's passes, yielding between slices (see rankVePaced). */
function* rankVeSteps(
  at: At,
  anchor: VeAnchor,
  changes: readonly LockChange[],
  { keepOrder = true, forPatch = false }: RankOptions,
  scratch: RankScratch,
): Generator<void, VeRanking> {
  const t = at.time;
  const tn = Number(t);
  const own = anchor.accounts.length;
  // Owners not at the anchor: indexes from `own` on (the anchor's list is not copied).
  const newOwners: string[] = [];
  const added = new Map<string, number>();
  const accountOf = (i: number) => (i < own ? anchor.accounts[i] : newOwners[i - own]) as string;
  const extra: { owner: number; lock: VeLock }[] = [];
  const replaced = scratch.bytes(0, anchor.locks.length);
  // Owners summed again lock by lock: changed locks' owners, then those with a lock expired between the two times.
  const dirty: number[] = [];
  const isDirty = scratch.bytes(1, own);
  const touch = (i: number) => {
    if (i < own && isDirty[i] === 0) {
      isDirty[i] = 1;
      dirty.push(i);
    }
  };
  for (let x = 0; x < changes.length; x++) {
    if ((x & SLICE) === SLICE) yield;
    const c = changes[x] as LockChange;
    const j = anchor.indexOfToken(c.tokenId);
    if (j !== undefined) {
      replaced[j] = 1;
      touch(anchor.owner[j] as number);
    }
    if (c.lock === null) continue;
    let i = anchor.accountIndex(c.lock.owner) ?? added.get(c.lock.owner);
    if (i === undefined) {
      i = own + newOwners.length;
      newOwners.push(c.lock.owner);
      added.set(c.lock.owner, i);
    }
    touch(i);
    extra.push({ owner: i, lock: c.lock });
  }
  const ta = Number(anchor.time);
  const [lo, hi] = ta <= tn ? [ta, tn] : [tn, ta];
  for (let k = upperBound(anchor.endsSorted, lo); k < anchor.endsSorted.length; k++) {
    if ((anchor.endsSorted[k] as number) > hi) break;
    touch(anchor.owner[anchor.byEnd[k] as number] as number);
  }
  for (let i = 0; i < own; i++) {
    if (anchor.odd[i] === 1) touch(i);
    if ((i & SLICE) === SLICE) yield;
  }

  const n = own + newOwners.length;
  // Each owner's ve as a double key with an error bound (tol); its exact bigint made when a row is shown or two keys
  // are too close to tell apart. Owners summed again lock by lock are exact from the start.
  const key = scratch.doubles(0, n);
  const tol = scratch.doubles(1, n);
  // Few entries (owners summed again, rows shown, keys too close): maps, not arrays of every owner per block.
  const exact = new Map<number, bigint>();
  const lockedOf = new Map<number, bigint>();
  const countOf = new Map<number, number>();
  // Per unchanged owner: the sum of its locks' shares floor(r·d / MAX), exact in doubles; `late` marks the few
  // owners with a share past 2^53, whose ve is summed in bigints at once.
  const share = scratch.doubles(2, own);
  share.fill(0);
  const late = scratch.bytes(2, own);
  const locks = anchor.locks;
  for (let j = 0; j < locks.length; j++) {
    if ((j & SLICE) === SLICE) yield;
    const i = anchor.owner[j] as number;
    const end = anchor.end[j] as number;
    if (isDirty[i] === 1 || !(end > tn) || (locks[j] as VeLock).autoMax) continue;
    const f = floorShare(anchor.r[j] as number, end - tn);
    if (f >= 0) share[i] = (share[i] as number) + f;
    else late[i] = 1;
  }
  // An unchanged owner's exact ve (its row shown, two keys too close), also after this pass (so from the anchor alone,
  // not the scratch above): none when every lock has expired; else C − t·Q + its shares (each lock unexpired at the
  // anchor is at `t`, the others expired at both: the owner is unchanged), each lock's ve being q·d + floor(r·d / MAX)
  // with the shares summed exactly in doubles; lock by lock in bigints where a share or an end is past 2^53.
  const cleanExact = (i: number): bigint => {
    if ((anchor.lastEnd[i] as number) <= tn) return 0n;
    if (anchor.odd[i] === 0) {
      let shares = 0;
      for (let k = anchor.first[i] as number; k < (anchor.first[i + 1] as number); k++) {
        const j = anchor.byOwner[k] as number;
        const end = anchor.end[j] as number;
        if (!(end > tn) || (locks[j] as VeLock).autoMax) continue;
        const f = floorShare(anchor.r[j] as number, end - tn);
        if (f < 0) return lockByLock(i);
        shares += f;
      }
      return (anchor.c[i] as bigint) - t * (anchor.q[i] as bigint) + BigInt(shares);
    }
    return lockByLock(i);
  };
  // By the rules (protocol.md §2): its locks at the anchor are its locks at `at`.
  const lockByLock = (i: number): bigint => {
    let v = 0n;
    for (let k = anchor.first[i] as number; k < (anchor.first[i + 1] as number); k++) {
      const lock = locks[anchor.byOwner[k] as number] as VeLock;
      if (lock.autoMax) v += lock.amount;
      else if (lock.lockEnd > t) v += (lock.amount * (lock.lockEnd - t)) / MAX;
    }
    return v;
  };
  for (let i = 0; i < own; i++) {
    if ((i & SLICE) === SLICE) yield;
    if (isDirty[i] === 1) continue;
    if ((anchor.lastEnd[i] as number) <= tn) {
      // Every lock expired: ve 0 exactly, below any ranked key (ranked() is then false without a sum).
      key[i] = -1;
      tol[i] = 0;
      continue;
    }
    if (late[i] === 1) {
      const v = cleanExact(i);
      exact.set(i, v);
      key[i] = Number(v);
      tol[i] = Math.abs(key[i] as number) * EPS;
      continue;
    }
    // C − t·Q + share in doubles: each of the three roundings (and the two inputs') is within 2^-53 of its operands.
    const c = anchor.cn[i] as number;
    const qn = anchor.qn[i] as number;
    key[i] = c - tn * qn + (share[i] as number);
    tol[i] = (Math.abs(c) + tn * Math.abs(qn) + (share[i] as number)) * EPS + 2;
  }
  // Owners summed again: their locks at the anchor not replaced, and the changed locks now theirs.
  const add = (i: number, lock: VeLock) => {
    countOf.set(i, (countOf.get(i) ?? 0) + 1);
    lockedOf.set(i, (lockedOf.get(i) ?? 0n) + lock.amount);
    const v = exact.get(i) ?? 0n;
    if (lock.autoMax) exact.set(i, v + lock.amount);
    else if (lock.lockEnd > t) exact.set(i, v + (lock.amount * (lock.lockEnd - t)) / MAX);
  };
  const summed: number[] = [...dirty];
  for (let i = own; i < n; i++) summed.push(i);
  for (const i of summed) {
    exact.set(i, 0n);
    lockedOf.set(i, 0n);
    countOf.set(i, 0);
  }
  for (const i of dirty) {
    for (let k = anchor.first[i] as number; k < (anchor.first[i + 1] as number); k++) {
      const j = anchor.byOwner[k] as number;
      if (replaced[j] === 0) add(i, locks[j] as VeLock);
    }
  }
  for (const { owner, lock } of extra) add(owner, lock);
  for (const i of summed) {
    key[i] = Number(exact.get(i) as bigint);
    tol[i] = Math.abs(key[i] as number) * EPS;
  }
  const veOf = (i: number): bigint => {
    let v = exact.get(i);
    if (v === undefined) {
      v = cleanExact(i);
      exact.set(i, v);
    }
    return v;
  };
  // Ranked: ve > 0 — certain where the key is above its error, else decided exactly.
  const ranked = (i: number) =>
    (key[i] as number) > (tol[i] as number) || ((key[i] as number) >= -(tol[i] as number) && veOf(i) > 0n);
  const cmp = (a: number, b: number): number => {
    const d = (key[a] as number) - (key[b] as number);
    const within = (tol[a] as number) + (tol[b] as number);
    // Keys further apart than both errors order as the exact values do; closer ones are compared exactly.
    if (d > within) return -1;
    if (d < -within) return 1;
    const va = veOf(a);
    const vb = veOf(b);
    if (va !== vb) return va > vb ? -1 : 1;
    const aa = accountOf(a);
    const ab = accountOf(b);
    return aa < ab ? -1 : aa > ab ? 1 : 0;
  };
  // Unchanged owners in the previous ranking's order (nearly right now), put in order by insertion; the others
  // (changed, new, or not ranked before) sorted apart and merged in, each where a binary search puts it.
  // (Indexed loops over typed arrays: an iterator here allocated a result per owner under `--optimize-for-size`.)
  const seq = scratch.ints(0, n);
  const placed = scratch.bytes(3, n);
  let m = 0;
  const previous = anchor.order;
  if (previous !== null) {
    for (let k = 0; k < previous.length; k++) {
      if ((k & SLICE) === SLICE) yield;
      const i = previous[k] as number;
      if (i < own && isDirty[i] === 0 && placed[i] === 0 && ranked(i)) {
        seq[m++] = i;
        placed[i] = 1;
      }
    }
  }
  const aside: number[] = [];
  for (let i = 0; i < n; i++) {
    if (placed[i] === 0 && ranked(i)) aside.push(i);
    if ((i & SLICE) === SLICE) yield;
  }
  let ranks: Int32Array;
  if (insertionSorted(seq, m, cmp, 4 * m + 1_024)) {
    aside.sort(cmp);
    ranks = new Int32Array(m + aside.length);
    let from = 0;
    let w = 0;
    for (const x of aside) {
      const to = firstAfterIn(seq, from, m, x, cmp);
      ranks.set(seq.subarray(from, to), w);
      w += to - from;
      ranks[w++] = x;
      from = to;
    }
    ranks.set(seq.subarray(from, m), w);
  } else {
    // Far from the previous ranking in time: sorted whole, as the first ranking of an anchor is.
    const all = Array.from(seq.subarray(0, m));
    for (const x of aside) all.push(x);
    all.sort(cmp);
    ranks = Int32Array.from(all);
  }
  if (keepOrder) keepOrderOf(anchor, ranks);
  const ranking = rankingOver({
    anchor,
    t,
    ranks,
    owners: {
      count: n,
      accountOf,
      indexOf: (address) => anchor.accountIndex(address) ?? added.get(address),
    },
    veOf,
    locked: (i) => lockedOf.get(i) ?? (anchor.locked[i] as bigint),
    count: (i) => countOf.get(i) ?? (anchor.count[i] as number),
  });
  if (forPatch) aidsOf.set(ranking, yield* aidsFor(ranks, key, tol, n));
  return ranking;
}

/**
 * The ranking's order kept as the next one's start: the ranking's own array (VeAnchor.order), not a copy of the
 * anchor's accounts only — a pass over every owner while a patched block's first reader waited (~0.4 ms at Base scale:
 * a loop run once a block is never optimised).
 */
function keepOrderOf(anchor: VeAnchor, ranks: Int32Array): void {
  anchor.order = ranks;
}

/** The owners a derived ranking numbers: the anchor's accounts (0 … own − 1), then those new since it. */
type Owners = {
  /** How many (the anchor's and the new ones). */
  count: number;
  accountOf(i: number): string;
  indexOf(address: string): number | undefined;
};

/**
 * What a ranking derived from an anchor is made of: its order (owner indexes) and each owner's exact figures at `t`,
 * made as asked. Kept beside the ranking (a WeakMap: readers see only VeRanking) so a ranking made ahead can be patched
 * (patchRanking).
 */
type Derived = {
  anchor: VeAnchor;
  t: bigint;
  ranks: Int32Array;
  owners: Owners;
  veOf(i: number): bigint;
  locked(i: number): bigint;
  count(i: number): number;
};

const derivedOf = new WeakMap<VeRanking, Derived>();

/**
 * What patching a ranking made ahead (rankVe `forPatch`) needs at once, made with it between heads rather than while
 * the block's first reader waits: each ranked owner's place (the owners a block's events touch are taken out there,
 * not found by a binary search over exact values made as it goes), each owner's double key with its error bound (where
 * a touched owner goes back in: exact values only where two keys are too close), and the patched order's array with
 * its pages touched (a fresh 240 kB typed array, written first while the reader waited, cost ~0.3–1 ms in page faults
 * on these machines). Taken by the first patch, or dropped (dropPatchAids) when the ranking is used as it is.
 */
type PatchAids = { place: Int32Array; key: Float64Array; tol: Float64Array; spare: Int32Array };

const aidsOf = new WeakMap<VeRanking, PatchAids>();

function* aidsFor(ranks: Int32Array, key: Float64Array, tol: Float64Array, n: number): Generator<void, PatchAids> {
  const place = new Int32Array(n).fill(-1);
  yield;
  for (let k = 0; k < ranks.length; k++) {
    place[ranks[k] as number] = k;
    if ((k & SLICE) === SLICE) yield;
  }
  // Rows a patch may add to its base: each differing lock touches at most three owners.
  const spare = new Int32Array(ranks.length + 3 * PATCH_LIMIT).fill(0);
  yield;
  const keys = key.slice(0, n);
  yield;
  return { place, key: keys, tol: tol.slice(0, n), spare };
}

/** A ranking made ahead and used as it is (its block changed no lock): what a patch would have needed, let go. */
export function dropPatchAids(ranking: VeRanking): void {
  aidsOf.delete(ranking);
}

/** The readers' view of a derived ranking: rows made as asked, keyset places and rank lookups by binary search. */
function rankingOver(d: Derived): VeRanking {
  const { ranks, owners, veOf } = d;
  const accountOf = owners.accountOf;
  const row = (k: number): HolderVe | undefined => {
    if (k < 0 || k >= ranks.length) return undefined;
    const i = ranks[k] as number;
    return { address: accountOf(i) as Address, ve: veOf(i), locked: d.locked(i), locks: d.count(i) };
  };
  const after = (k: { ve: bigint; address: string }) => {
    // The first rank strictly after key in board order: a binary search over exact values (made as needed).
    let lo = 0;
    let hi = ranks.length;
    const address = k.address.toLowerCase();
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = ranks[mid] as number;
      const v = veOf(i);
      const before = k.ve !== v ? k.ve > v : address < accountOf(i);
      if (before) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  const ranking: VeRanking = {
    length: ranks.length,
    get: row,
    after,
    // A rank lookup: the owner's exact ve, then its keyset place (no map of this block's own), lower-case addresses.
    indexOf: (address) => {
      const i = owners.indexOf(address);
      if (i === undefined) return undefined;
      const v = veOf(i);
      if (v <= 0n) return undefined;
      const k = after({ ve: v, address: accountOf(i) }) - 1;
      return k >= 0 && ranks[k] === i ? k : undefined;
    },
  };
  derivedOf.set(ranking, d);
  return ranking;
}

/** Locks whose state differs between two lists of changes beyond which a ranking is made again, not patched. */
export const PATCH_LIMIT = 256;

/** Whether two states of a lock are the same (null: not live). */
function sameLock(x: VeLock | null, y: VeLock | null): boolean {
  if (x === y) return true;
  if (x === null || y === null) return false;
  return x.owner === y.owner && x.amount === y.amount && x.lockEnd === y.lockEnd && x.autoMax === y.autoMax;
}

/**
 * A lock whose state differs between two lists of changes since one anchor: its state in each (null: not live), or
 * undefined where the list does not name it (the lock is then as it was at the anchor).
 */
export type LockDiff = { tokenId: bigint; was: VeLock | null | undefined; now: VeLock | null | undefined };

/** Lists of changes known to name their locks in ascending token order (checked once each). */
const ordered = new WeakSet<readonly LockChange[]>();

/**
 * Whether a list of changes names its locks in ascending token order: the statement's (atBlock.ts veLockDelta) and
 * those made from it by a block's carried events (quietBlocks.ts applyCarried) do. Remembered per list.
 */
export function inTokenOrder(list: readonly LockChange[]): boolean {
  if (ordered.has(list)) return true;
  for (let k = 1; k < list.length; k++) {
    if ((list[k - 1] as LockChange).tokenId >= (list[k] as LockChange).tokenId) return false;
  }
  ordered.add(list);
  return true;
}

/** Marks a list made in ascending token order (inTokenOrder then need not check it). */
export function madeInTokenOrder<T extends readonly LockChange[]>(list: T): T {
  ordered.add(list);
  return list;
}

/**
 * The locks whose state differs between two lists of changes (each lock once in a list), in no set order. Walked side
 * by side: while both name the same lock at the same place, then, where both are in token order (the statement's and
 * the lists made from it are), merged by token; through a map only where one is not. At Base scale after a burst,
 * thousands of locks changed since the anchor, and maps of them cost ~0.3 µs a lock while the block's first reader
 * waited.
 */
export function differingLocks(was: readonly LockChange[], now: readonly LockChange[]): LockDiff[] {
  const diff: LockDiff[] = [];
  const n = Math.min(was.length, now.length);
  let k = 0;
  for (; k < n; k++) {
    const a = was[k] as LockChange;
    const b = now[k] as LockChange;
    if (a.tokenId !== b.tokenId) break;
    if (!sameLock(a.lock, b.lock)) diff.push({ tokenId: a.tokenId, was: a.lock, now: b.lock });
  }
  if (k === was.length && k === now.length) return diff;
  if (inTokenOrder(was) && inTokenOrder(now)) {
    let i = k;
    let j = k;
    while (i < was.length || j < now.length) {
      const a = was[i];
      const b = now[j];
      if (b === undefined || (a !== undefined && a.tokenId < b.tokenId)) {
        diff.push({ tokenId: (a as LockChange).tokenId, was: (a as LockChange).lock, now: undefined });
        i++;
      } else if (a === undefined || b.tokenId < a.tokenId) {
        diff.push({ tokenId: b.tokenId, was: undefined, now: b.lock });
        j++;
      } else {
        if (!sameLock(a.lock, b.lock)) diff.push({ tokenId: a.tokenId, was: a.lock, now: b.lock });
        i++;
        j++;
      }
    }
    return diff;
  }
  // The rest by a map: a lock named in the first k of one list is in neither rest (each lock once in a list).
  const at = new Map<bigint, number>();
  for (let i = k; i < was.length; i++) at.set((was[i] as LockChange).tokenId, i);
  const matched = new Uint8Array(was.length);
  for (let j = k; j < now.length; j++) {
    const { tokenId, lock } = now[j] as LockChange;
    const i = at.get(tokenId);
    if (i === undefined) {
      diff.push({ tokenId, was: undefined, now: lock });
      continue;
    }
    matched[i] = 1;
    const before = (was[i] as LockChange).lock;
    if (!sameLock(before, lock)) diff.push({ tokenId, was: before, now: lock });
  }
  for (let i = k; i < was.length; i++) {
    if (matched[i] === 0)
      diff.push({ tokenId: (was[i] as LockChange).tokenId, was: (was[i] as LockChange).lock, now: undefined });
  }
  return diff;
}

/**
 * Each lock of `diff` taken out as it was (-1) and put in as it is (1): where a list does not name it, as at the anchor
 * (or not at all: minted since).
 */
export function replayDiff(
  anchor: VeAnchor,
  diff: readonly LockDiff[],
  move: (lock: VeLock, sign: 1 | -1) => void,
): void {
  const atAnchor = (tokenId: bigint): VeLock | null => {
    const j = anchor.indexOfToken(tokenId);
    return j === undefined ? null : (anchor.locks[j] as VeLock);
  };
  for (const c of diff) {
    const was = c.was === undefined ? atAnchor(c.tokenId) : c.was;
    const now = c.now === undefined ? atAnchor(c.tokenId) : c.now;
    if (was !== null) move(was, -1);
    if (now !== null) move(now, 1);
  }
}

/**
 * The ranking at `base`'s time with the changes it was made with replaced as `diff` says (differingLocks: same anchor,
 * same time), equal to rankVe(at, anchor, changes): a block made ahead whose own events changed a few locks (about one
 * block in thirty on Base). Only the owners of the locks that differ are touched; each one's figures are base's with
 * its locks that differ taken out as they were (in base's list, else at the anchor) and put in as they are — by the
 * rules, lock by lock, O(differing locks), not a pass over the changes since the anchor. They are taken out of base's
 * order and put back where a binary search places them: by the double keys made with base (rankVe `forPatch`),
 * exact values only where two keys are too close, else by exact values made as it goes. Undefined when `base` is not
 * a derived ranking of this anchor and time, or more than PATCH_LIMIT locks differ: then the caller ranks it whole.
 * `samePrefix`: how many of its first rows are `base`'s, the same owners with the same values (before the first owner
 * taken out or put back).
 */
export function patchRanking(
  base: VeRanking,
  anchor: VeAnchor,
  t: bigint,
  diff: readonly LockDiff[],
  { keepOrder = true }: { keepOrder?: boolean } = {},
): { ranking: VeRanking; samePrefix: number } | undefined {
  const d = derivedOf.get(base);
  if (d === undefined || d.anchor !== anchor || d.t !== t) return undefined;
  if (diff.length > PATCH_LIMIT) return undefined;
  const aids = aidsOf.get(base);
  aidsOf.delete(base);
  if (diff.length === 0) return { ranking: base, samePrefix: base.length };

  // Owners new since base (a lock moved to an account with no lock at the anchor or in base's changes): numbered on
  // from base's, base's own numbering left as it is.
  const more: string[] = [];
  const moreAt = new Map<string, number>();
  const baseCount = d.owners.count;
  const indexOf = (address: string) => d.owners.indexOf(address) ?? moreAt.get(address);
  type Sums = { i: number; address: string; ve: bigint; locked: bigint; count: number };
  const sums = new Map<number, Sums>();
  const sumsOf = (address: string): Sums => {
    let i = indexOf(address);
    if (i === undefined) {
      i = baseCount + more.length;
      more.push(address);
      moreAt.set(address, i);
    }
    let s = sums.get(i);
    if (s === undefined) {
      const known = i < baseCount;
      s = {
        i,
        address,
        ve: known ? d.veOf(i) : 0n,
        locked: known ? d.locked(i) : 0n,
        count: known ? d.count(i) : 0,
      };
      sums.set(i, s);
    }
    return s;
  };
  const move = (lock: VeLock, sign: 1 | -1) => {
    const s = sumsOf(lock.owner);
    const ve = lockVe(lock, t);
    if (sign === 1) {
      s.ve += ve;
      s.locked += lock.amount;
      s.count++;
    } else {
      s.ve -= ve;
      s.locked -= lock.amount;
      s.count--;
    }
  };
  replayDiff(anchor, diff, move);
  const owners: Owners = {
    count: baseCount + more.length,
    accountOf: (i) => (i < baseCount ? d.owners.accountOf(i) : (more[i - baseCount] as string)),
    indexOf,
  };

  // Out: the touched owners ranked in base (at their places there). In: those with ve > 0 now, in board order, each
  // before the first of base's rows that goes after it — found in base's order by base's values, where the owners
  // taken out still stand (base is in order by them, so every other row is on the right side) — in one copy.
  const out: number[] = [];
  for (const s of sums.values()) {
    if (s.i >= baseCount) continue;
    const k = aids !== undefined ? (aids.place[s.i] as number) : (base.indexOf(s.address) ?? -1);
    if (k >= 0) out.push(k);
  }
  out.sort((a, b) => a - b);
  const into = [...sums.values()]
    .filter((s) => s.ve > 0n)
    .sort((a, b) => (a.ve !== b.ve ? (a.ve > b.ve ? -1 : 1) : a.address < b.address ? -1 : 1));
  const accountOf = d.owners.accountOf;
  const from = d.ranks;
  const size = from.length - out.length + into.length;
  const ranks = aids !== undefined && aids.spare.length >= size ? aids.spare.subarray(0, size) : new Int32Array(size);
  let w = 0;
  let next = 0; // the next row of base to copy
  let o = 0; // the next owner taken out
  // base's rows up to `to` (exclusive), but those taken out.
  const copyTo = (to: number) => {
    for (; o < out.length && (out[o] as number) < to; o++) {
      ranks.set(from.subarray(next, out[o]), w);
      w += (out[o] as number) - next;
      next = (out[o] as number) + 1;
    }
    if (to > next) {
      ranks.set(from.subarray(next, to), w);
      w += to - next;
      next = to;
    }
  };
  // Whether base's row of owner i goes before an owner of exact value ve (and address): by the keys where they tell.
  const goesBefore = (i: number, ve: bigint, veKey: number, address: string): boolean => {
    if (aids !== undefined) {
      const gap = (aids.key[i] as number) - veKey;
      const within = (aids.tol[i] as number) + Math.abs(veKey) * EPS;
      if (gap > within) return true;
      if (gap < -within) return false;
    }
    const v = d.veOf(i);
    return v > ve || (v === ve && accountOf(i) < address);
  };
  // Rows before the first owner taken out (in base) or put back (here) are base's.
  let samePrefix = out[0] ?? Number.POSITIVE_INFINITY;
  let lo = 0;
  for (const s of into) {
    const veKey = Number(s.ve);
    let hi = from.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (goesBefore(from[mid] as number, s.ve, veKey, s.address)) lo = mid + 1;
      else hi = mid;
    }
    copyTo(lo);
    samePrefix = Math.min(samePrefix, w);
    ranks[w++] = s.i;
  }
  copyTo(from.length);
  samePrefix = Math.min(samePrefix, ranks.length);
  if (keepOrder) keepOrderOf(anchor, ranks);
  const patched = new Map<number, Sums>();
  for (const s of sums.values()) patched.set(s.i, s);
  const ranking = rankingOver({
    anchor,
    t,
    ranks,
    owners,
    veOf: (i) => patched.get(i)?.ve ?? d.veOf(i),
    locked: (i) => patched.get(i)?.locked ?? d.locked(i),
    count: (i) => patched.get(i)?.count ?? d.count(i),
  });
  return { ranking, samePrefix };
}
