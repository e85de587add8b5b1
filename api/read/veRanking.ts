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
 * call), grown as needed. Per block the process then allocates little besides the ranking's own order (one Int32Array)
 * and a few small maps: the API process runs with a small young generation (docs/operations.md), where a block's
 * garbage of ~60,000-element arrays meant a scavenge or more per block and a mark-compact every few blocks.
 */
const scratch = {
  b: [new Uint8Array(0), new Uint8Array(0), new Uint8Array(0), new Uint8Array(0)],
  d: [new Float64Array(0), new Float64Array(0), new Float64Array(0)],
  i: [new Int32Array(0)],
  /** Zeroed. */
  bytes(k: number, n: number): Uint8Array {
    if ((this.b[k] as Uint8Array).length < n) this.b[k] = new Uint8Array(Math.ceil(n * 1.25));
    const b = (this.b[k] as Uint8Array).subarray(0, n);
    b.fill(0);
    return b;
  },
  doubles(k: number, n: number): Float64Array {
    if ((this.d[k] as Float64Array).length < n) this.d[k] = new Float64Array(Math.ceil(n * 1.25));
    return (this.d[k] as Float64Array).subarray(0, n);
  },
  ints(k: number, n: number): Int32Array {
    if ((this.i[k] as Int32Array).length < n) this.i[k] = new Int32Array(Math.ceil(n * 1.25));
    return (this.i[k] as Int32Array).subarray(0, n);
  },
};

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
export function rankVe(
  at: At,
  anchor: VeAnchor,
  changes: readonly LockChange[],
  { keepOrder = true }: { keepOrder?: boolean } = {},
): VeRanking {
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
  for (const c of changes) {
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
  for (let i = 0; i < own; i++) if (anchor.odd[i] === 1) touch(i);

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
      const i = previous[k] as number;
      if (i < own && isDirty[i] === 0 && placed[i] === 0 && ranked(i)) {
        seq[m++] = i;
        placed[i] = 1;
      }
    }
  }
  const aside: number[] = [];
  for (let i = 0; i < n; i++) if (placed[i] === 0 && ranked(i)) aside.push(i);
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
  return rankingOver({
    anchor,
    t,
    ranks,
    newOwners,
    added,
    veOf,
    locked: (i) => lockedOf.get(i) ?? (anchor.locked[i] as bigint),
    count: (i) => countOf.get(i) ?? (anchor.count[i] as number),
  });
}

/**
 * The ranking's order kept as the next one's start: the ranking's own array (VeAnchor.order), not a copy of the
 * anchor's accounts only — a pass over every owner while a patched block's first reader waited (~0.4 ms at Base scale:
 * a loop run once a block is never optimised).
 */
function keepOrderOf(anchor: VeAnchor, ranks: Int32Array): void {
  anchor.order = ranks;
}

/**
 * What a ranking derived from an anchor is made of: its order (owner indexes; the anchor's accounts, then the owners
 * new since it) and each owner's exact figures at `t`, made as asked. Kept beside the ranking (a WeakMap: readers see
 * only VeRanking) so a ranking made ahead can be patched (patchRanking).
 */
type Derived = {
  anchor: VeAnchor;
  t: bigint;
  ranks: Int32Array;
  /** Owners not at the anchor, by index − the anchor's account count; `added` the other way round. */
  newOwners: readonly string[];
  added: ReadonlyMap<string, number>;
  veOf(i: number): bigint;
  locked(i: number): bigint;
  count(i: number): number;
};

const derivedOf = new WeakMap<VeRanking, Derived>();

/** The readers' view of a derived ranking: rows made as asked, keyset places and rank lookups by binary search. */
function rankingOver(d: Derived): VeRanking {
  const { anchor, ranks, newOwners, added, veOf } = d;
  const own = anchor.accounts.length;
  const accountOf = (i: number) => (i < own ? anchor.accounts[i] : newOwners[i - own]) as string;
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
      const i = anchor.accountIndex(address) ?? added.get(address);
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
export function sameLock(x: VeLock | null, y: VeLock | null): boolean {
  if (x === null || y === null) return x === y;
  return x.owner === y.owner && x.amount === y.amount && x.lockEnd === y.lockEnd && x.autoMax === y.autoMax;
}

/**
 * The ranking at `base`'s time with `changes` instead of the changes `base` was made with (`was`; same anchor, same
 * time), equal to rankVe(at, anchor, changes): a block made ahead whose own events changed a few locks (about one
 * block in thirty on Base). Only the owners of the locks whose state differs are summed again (by the rules, lock by
 * lock); every other owner's locks, hence its exact ve, are as in `base`. They are taken out of `base`'s order and put
 * back where a binary search over exact values places them: O(k log n) and two copies of the order, not a pass over
 * every live lock. Undefined when `base` is not a derived ranking of this anchor and time, or more than PATCH_LIMIT
 * locks differ: then the caller ranks it whole. `samePrefix`: how many of its first rows are `base`'s, the same owners
 * with the same values (before the first owner taken out or put back).
 */
export function patchRanking(
  base: VeRanking,
  anchor: VeAnchor,
  t: bigint,
  was: readonly LockChange[],
  changes: readonly LockChange[],
  { keepOrder = true }: { keepOrder?: boolean } = {},
): { ranking: VeRanking; samePrefix: number } | undefined {
  const d = derivedOf.get(base);
  if (d === undefined || d.anchor !== anchor || d.t !== t) return undefined;
  const before = new Map<bigint, VeLock | null>();
  for (const c of was) before.set(c.tokenId, c.lock);
  const now = new Map<bigint, VeLock | null>();
  for (const c of changes) now.set(c.tokenId, c.lock);
  // The owners a differing lock belongs to in `was` or now, and its owner at the anchor where the lock is changed in
  // only one of the two (where it is in both, neither counts its anchor state) — lower-case, as stored.
  const touched = new Set<string>();
  let differing = 0;
  const touch = (tokenId: bigint) => {
    differing++;
    const j = anchor.indexOfToken(tokenId);
    if (j !== undefined && before.has(tokenId) !== now.has(tokenId)) {
      touched.add(anchor.accounts[anchor.owner[j] as number] as string);
    }
    const x = before.get(tokenId);
    if (x) touched.add(x.owner);
    const y = now.get(tokenId);
    if (y) touched.add(y.owner);
  };
  for (const [tokenId, lock] of now) {
    if (!before.has(tokenId) || !sameLock(before.get(tokenId) ?? null, lock)) touch(tokenId);
  }
  for (const tokenId of before.keys()) if (!now.has(tokenId)) touch(tokenId);
  if (differing > PATCH_LIMIT) return undefined;
  if (differing === 0) return { ranking: base, samePrefix: base.length };

  // Each touched owner summed again at `t` with `changes`: its anchor locks not changed since, and the changed locks
  // now its own.
  const own = anchor.accounts.length;
  const newOwners = [...d.newOwners];
  const added = new Map(d.added);
  type Sums = { i: number; address: string; ve: bigint; locked: bigint; count: number };
  const sums = new Map<string, Sums>();
  for (const address of touched) {
    let i = anchor.accountIndex(address) ?? added.get(address);
    if (i === undefined) {
      i = own + newOwners.length;
      newOwners.push(address);
      added.set(address, i);
    }
    sums.set(address, { i, address, ve: 0n, locked: 0n, count: 0 });
  }
  const add = (s: Sums, lock: VeLock) => {
    s.ve += lockVe(lock, t);
    s.locked += lock.amount;
    s.count++;
  };
  for (const s of sums.values()) {
    if (s.i >= own) continue;
    for (let k = anchor.first[s.i] as number; k < (anchor.first[s.i + 1] as number); k++) {
      const lock = anchor.locks[anchor.byOwner[k] as number] as VeLock;
      if (!now.has(lock.tokenId)) add(s, lock);
    }
  }
  for (const c of changes) {
    const s = c.lock === null ? undefined : sums.get(c.lock.owner);
    if (s !== undefined) add(s, c.lock as VeLock);
  }
  const patched = new Map<number, Sums>();
  for (const s of sums.values()) patched.set(s.i, s);

  // Out: the touched owners ranked in `base` (at their places there). In: those with ve > 0 now, in board order, each
  // before the first of base's rows that goes after it — found in base's order by base's values, where the owners
  // taken out still stand (base is in order by them, so every other row is on the right side) — in one copy.
  const out: number[] = [];
  for (const address of touched) {
    const k = base.indexOf(address);
    if (k !== undefined) out.push(k);
  }
  out.sort((a, b) => a - b);
  const into = [...sums.values()]
    .filter((s) => s.ve > 0n)
    .sort((a, b) => (a.ve !== b.ve ? (a.ve > b.ve ? -1 : 1) : a.address < b.address ? -1 : 1));
  const accountOf = (i: number) => (i < own ? anchor.accounts[i] : newOwners[i - own]) as string;
  const from = d.ranks;
  const ranks = new Int32Array(from.length - out.length + into.length);
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
  // Rows before the first owner taken out (in base) or put back (here) are base's.
  let samePrefix = out[0] ?? Number.POSITIVE_INFINITY;
  let lo = 0;
  for (const s of into) {
    let hi = from.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = from[mid] as number;
      const v = d.veOf(i);
      if (v < s.ve || (v === s.ve && accountOf(i) > s.address)) hi = mid;
      else lo = mid + 1;
    }
    copyTo(lo);
    samePrefix = Math.min(samePrefix, w);
    ranks[w++] = s.i;
  }
  copyTo(from.length);
  samePrefix = Math.min(samePrefix, ranks.length);
  if (keepOrder) keepOrderOf(anchor, ranks);
  const ranking = rankingOver({
    anchor,
    t,
    ranks,
    newOwners,
    added,
    veOf: (i) => patched.get(i)?.ve ?? d.veOf(i),
    locked: (i) => patched.get(i)?.locked ?? d.locked(i),
    count: (i) => patched.get(i)?.count ?? d.count(i),
  });
  return { ranking, samePrefix };
}
