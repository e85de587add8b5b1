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
  readonly #accountIndex = new Map<string, number>();
  readonly #indexOf = new Map<bigint, number>();
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
  /** The newest ranking's order (owner indexes, ve descending): where the next sort starts. */
  order: Int32Array | null = null;
  /** Two buffers for the order, used in turn (the next is written while the newest is read). */
  readonly #orders = [new Int32Array(0), new Int32Array(0)];

  /** The order buffer not holding the newest order, at least n long. */
  spareOrder(n: number): Int32Array {
    const k = this.order !== null && this.order.buffer === (this.#orders[0] as Int32Array).buffer ? 1 : 0;
    if ((this.#orders[k] as Int32Array).length < n) this.#orders[k] = new Int32Array(n);
    return this.#orders[k] as Int32Array;
  }

  constructor(at: At, locks: readonly VeLock[]) {
    this.block = at.block;
    this.time = at.time;
    this.locks = locks;
    this.accounts = [];
    const n = locks.length;
    this.owner = new Int32Array(n);
    const qOf = new Array<bigint>(n);
    this.r = new Float64Array(n);
    this.end = new Float64Array(n);
    locks.forEach((lock, j) => {
      this.#indexOf.set(lock.tokenId, j);
      let i = this.#accountIndex.get(lock.owner);
      if (i === undefined) {
        i = this.accounts.length;
        this.accounts.push(lock.owner);
        this.#accountIndex.set(lock.owner, i);
      }
      this.owner[j] = i;
      const q = lock.amount / MAX;
      qOf[j] = q;
      this.r[j] = Number(lock.amount - q * MAX);
      this.end[j] = lock.lockEnd <= SAFE ? Number(lock.lockEnd) : Number.NaN;
    });
    const a = this.accounts.length;
    this.first = new Int32Array(a + 1);
    for (let j = 0; j < n; j++) {
      const i = (this.owner[j] as number) + 1;
      this.first[i] = (this.first[i] as number) + 1;
    }
    for (let i = 0; i < a; i++) this.first[i + 1] = (this.first[i + 1] as number) + (this.first[i] as number);
    this.byOwner = new Int32Array(n);
    const next = this.first.slice(0, a);
    for (let j = 0; j < n; j++) {
      const i = this.owner[j] as number;
      const k = next[i] as number;
      this.byOwner[k] = j;
      next[i] = k + 1;
    }
    const c = new Array<bigint>(a).fill(0n);
    const qs = new Array<bigint>(a).fill(0n);
    this.locked = new Array<bigint>(a).fill(0n);
    this.count = new Int32Array(a);
    this.odd = new Uint8Array(a);
    this.lastEnd = new Float64Array(a).fill(Number.NEGATIVE_INFINITY);
    const tn = Number(at.time);
    const plain: number[] = [];
    for (let j = 0; j < n; j++) {
      const lock = locks[j] as VeLock;
      const i = this.owner[j] as number;
      this.locked[i] = (this.locked[i] as bigint) + lock.amount;
      this.count[i] = (this.count[i] as number) + 1;
      const end = this.end[j] as number;
      if (lock.autoMax || Number.isNaN(end)) this.lastEnd[i] = Number.POSITIVE_INFINITY;
      else if (end > (this.lastEnd[i] as number)) this.lastEnd[i] = end;
      if (lock.autoMax) {
        c[i] = (c[i] as bigint) + lock.amount;
        continue;
      }
      if (Number.isNaN(end)) {
        this.odd[i] = 1;
        continue;
      }
      plain.push(j);
      if (end > tn) {
        c[i] = (c[i] as bigint) + (qOf[j] as bigint) * lock.lockEnd;
        qs[i] = (qs[i] as bigint) + (qOf[j] as bigint);
      }
    }
    this.cn = Float64Array.from(c, (v) => Number(v));
    this.qn = Float64Array.from(qs, (v) => Number(v));
    this.c = c;
    this.q = qs;
    plain.sort((x, y) => (this.end[x] as number) - (this.end[y] as number));
    this.byEnd = Int32Array.from(plain);
    this.endsSorted = Float64Array.from(plain, (j) => this.end[j] as number);
  }

  /** The anchor's lock of a token, by index (undefined when the token was not live at the anchor). */
  indexOfToken(tokenId: bigint): number | undefined {
    return this.#indexOf.get(tokenId);
  }

  accountIndex(owner: string): number | undefined {
    return this.#accountIndex.get(owner);
  }

  /** The live locks at `at`, given the locks that changed between this anchor and `at` (a moved anchor). */
  withChanges(at: At, changes: readonly LockChange[]): VeAnchor {
    if (changes.length === 0) return new VeAnchor(at, this.locks);
    const changed = new Set<bigint>(changes.map((c) => c.tokenId));
    const locks = this.locks.filter((lock) => !changed.has(lock.tokenId));
    for (const c of changes) if (c.lock !== null) locks.push(c.lock);
    return new VeAnchor(at, locks);
  }
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
      if (isDirty[i] === 0 && placed[i] === 0 && ranked(i)) {
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
  if (keepOrder) {
    // Only the anchor's own accounts carry over (indexes past them are this block's).
    const order = anchor.spareOrder(own);
    let kept = 0;
    for (let k = 0; k < ranks.length; k++) {
      const i = ranks[k] as number;
      if (i < own) order[kept++] = i;
    }
    anchor.order = order.subarray(0, kept);
  }
  const row = (k: number): HolderVe | undefined => {
    if (k < 0 || k >= ranks.length) return undefined;
    const i = ranks[k] as number;
    return {
      address: accountOf(i) as Address,
      ve: veOf(i),
      locked: lockedOf.get(i) ?? (anchor.locked[i] as bigint),
      locks: countOf.get(i) ?? (anchor.count[i] as number),
    };
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
  return {
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
}
