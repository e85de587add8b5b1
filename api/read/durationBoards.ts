/**
 * The duration boards of one block (protocol.md §9: seven boards × four windows), each kept per block per process
 * and, with Redis, computed once for all replicas (api/read/sharedAnswers.ts), like the ve ranking
 * (api/read/veBoard.ts). A page is a binary search in the ranking; a rank lookup a map lookup.
 *
 * A ranking is computed whole only once: at a finalized block (the anchor). Every other block's ranking is the
 * anchor's with the accounts that changed between the two blocks taken out and put back at their value at the block
 * (api/read/atBlock.ts boardDelta): the accounts with an entry in the blocks between, and, for a window, those with an
 * entry whose time lies between the two windows' starts. That costs what those accounts cost — at the head, a few
 * blocks' events and a few seconds' window exits — and a pass over the anchor's rows, never the window's buckets
 * again (docs/design.md "The official leaderboards"). The anchor is a finalized block's ranking, so no
 * reorg can change what it was computed from; it moves up to the finalized block once that is ADVANCE blocks on,
 * by the same derivation. A block farther than SPAN blocks from the anchor (a request's old `?block=`) is computed
 * whole.
 */
import type { Address } from "viem";
import { BlockMemo, requireInRange, SharedBytes } from "./blockMemo";
import { checksummedAddress } from "./checksum";
import type { ComputeLane } from "./computeGate";
import {
  type BoardAnswer,
  type BoardValue,
  type BoardWindow,
  type DurationBoard,
  NOT_RANKED,
  type RankingSealing,
  type Seal,
  sealingOf,
} from "./contract";
import { BOARD_ROW_BYTES, DERIVE } from "./veBoard";

/** Where an account (lower-case address) is in a ranking's rows: its index (rank − 1), undefined when not ranked. */
export type Position = { get(address: string): number | undefined };

/** A ranking's rows in board order (rank − 1 = index): an array, or a derived ranking's view of its anchor's. */
export type RankedRows = {
  readonly length: number;
  get(i: number): BoardValue | undefined;
  /** Rows [start, end). */
  slice(start: number, end: number): BoardValue[];
  /** The index of the first row strictly after `key` in board order (a keyset page's start). */
  after(key: { value: bigint; address: string }): number;
};

export type RankedBoard = {
  block: bigint;
  time: bigint;
  rows: RankedRows;
  /** Lower-case address → index in rows (rank − 1). */
  readonly position: Position;
  checksummed(i: number): Address;
  /** What its pages' cursors are sealed with: the seal read by the statement its rows came from (cursorSeal.ts). */
  sealing: RankingSealing;
};

/** Board order: value descending, then address ascending (byte order of the lower-case hex). */
export function firstAfterValue(rows: readonly BoardValue[], key: { value: bigint; address: string }): number {
  const before = (a: { value: bigint; address: string }, b: BoardValue) =>
    a.value !== b.value ? a.value > b.value : a.address.toLowerCase() < b.address;
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(key, rows[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

type At = { block: bigint; time: bigint };
/** A ranking's block, with the seal its rows were read with (a statement's answer), if any. */
type SealedAt = At & { seal?: Seal | null };
/** Why a ranking is made: a reader asked for its block, or the anchor moves (in the background, no reader waits). */
export type Purpose = "read" | "anchor";

export type DurationBoardsOptions = {
  /** Computes a board and window's ranking at a block (api/read/atBlock.ts board); `lane` says whether it is the head. */
  load: (
    board: DurationBoard,
    window: BoardWindow,
    at: At,
    lane: ComputeLane,
    purpose: Purpose,
  ) => Promise<BoardAnswer>;
  /**
   * The accounts that changed on a board and window between block `from` and `at`, with their values at `at`
   * (api/read/atBlock.ts boardDelta). Without it every block's ranking is computed whole.
   */
  delta?: (
    board: DurationBoard,
    window: BoardWindow,
    from: At,
    at: At,
    lane: ComputeLane,
    purpose: Purpose,
  ) => Promise<BoardAnswer>;
  /** Past blocks kept per board and window; default 4. */
  capacity?: number;
  /** Bytes of one board and window's rankings kept; default DURATION_BOARDS_KEPT.eachBytes. */
  maxBytes?: number;
  /** Bytes of all 28 boards' and windows' rankings kept, the heads' included; default DURATION_BOARDS_KEPT.allBytes. */
  allBytes?: number;
  /** Blocks from the anchor within which a ranking is derived, not computed whole; default DERIVE.span. */
  span?: number;
  /** Finalized blocks past the anchor before it moves up; default DERIVE.advance. */
  advance?: number;
};

/**
 * What is kept of the rankings a request chooses the block of (issue 30). Each board and window keeps at most 4 past
 * blocks and 16 MiB; all 28 together at most 64 MiB (api/read/blockMemo.ts SharedBytes), as much as the ve boards —
 * without that sum, 28 memos of 16 MiB would be 448 MiB. A ranked row is counted as the ve board's (BOARD_ROW_BYTES):
 * a lifetime board of 60,000 accounts ~24 MB. The heads' rankings stay whatever their size (one per board and window),
 * and so do the anchors (one per board and window a reader asked for, a derived ranking shares its rows).
 */
export const DURATION_BOARDS_KEPT = { capacity: 4, eachBytes: 16 * 1024 * 1024, allBytes: 64 * 1024 * 1024 } as const;

/**
 * A ranking of rows in board order, computed whole: its position map built when first asked for (O(rows), once per
 * ranking), its addresses shown EIP-55.
 */
export function rankedOf(at: SealedAt, rows: readonly BoardValue[]): AnchorBoard {
  let position: Map<string, number> | undefined;
  const map = () => {
    if (position === undefined) {
      position = new Map<string, number>();
      for (let i = 0; i < rows.length; i++) position.set((rows[i] as BoardValue).address.toLowerCase(), i);
    }
    return position;
  };
  return {
    block: at.block,
    time: at.time,
    array: rows,
    rows: {
      length: rows.length,
      get: (i) => rows[i],
      slice: (start, end) => rows.slice(start, end),
      after: (key) => firstAfterValue(rows, key),
    },
    position: { get: (address) => map().get(address) },
    checksummed: (i) => checksummedAddress((rows[i] as BoardValue).address.toLowerCase()),
    sealing: sealingOf(at),
  };
}

/**
 * A ranking derived from `anchor` by `changes`, as a view: the anchor's rows with the changed accounts taken out and
 * put back, never copied. The view is a list of segments in board order — runs of the anchor's rows between two
 * changes, and the changed rows themselves — so a row is a binary search over the segments, a page a walk from one,
 * a keyset page's start the anchor's binary search corrected by the changes before it, and an account's position its
 * value's page start: O(log rows + log changes) each, O(changes · log rows) to build, whatever the board's size.
 */
export function derivedOf(at: SealedAt, anchor: AnchorBoard, changes: readonly BoardValue[]): RankedBoard {
  const rows = anchor.array;
  const changed = new Map<string, bigint>();
  for (const c of changes) changed.set(c.address.toLowerCase(), c.value);
  const { drop, added } = planOf(rows, changes, (address) => anchor.position.get(address));
  const addedRows = added.map((a) => a.row);
  // Segments: [derived start, anchor start, anchor end) for a run of anchor rows, or a changed row (anchor start −1).
  const starts: number[] = [];
  const from: number[] = [];
  const to: number[] = [];
  const row: (BoardValue | null)[] = [];
  let n = 0;
  let j = 0;
  const run = (end: number) => {
    if (end > j) {
      starts.push(n);
      from.push(j);
      to.push(end);
      row.push(null);
      n += end - j;
    }
    j = end;
  };
  let d = 0;
  let a = 0;
  while (d < drop.length || a < added.length) {
    const nextDrop = d < drop.length ? (drop[d] as number) : Number.POSITIVE_INFINITY;
    const next = a < added.length ? (added[a] as { at: number; row: BoardValue }) : undefined;
    if (next !== undefined && next.at <= nextDrop) {
      run(next.at);
      starts.push(n);
      from.push(-1);
      to.push(-1);
      row.push(next.row);
      n++;
      a++;
    } else {
      run(nextDrop);
      j = nextDrop + 1;
      d++;
    }
  }
  run(rows.length);
  const length = n;
  const segmentOf = (i: number) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((starts[mid] as number) <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const get = (i: number): BoardValue | undefined => {
    if (i < 0 || i >= length) return undefined;
    const s = segmentOf(i);
    const own = row[s];
    return own ?? rows[(from[s] as number) + i - (starts[s] as number)];
  };
  const lowerBound = (xs: readonly number[], x: number) => {
    let lo = 0;
    let hi = xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((xs[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const after = (key: { value: bigint; address: string }) => {
    const k = firstAfterValue(rows, key);
    return k - lowerBound(drop, k) + firstAfterValue(addedRows, key);
  };
  return {
    block: at.block,
    time: at.time,
    rows: {
      length,
      get,
      slice(start, end) {
        const out: BoardValue[] = [];
        for (let i = Math.max(0, start); i < Math.min(end, length); i++) out.push(get(i) as BoardValue);
        return out;
      },
      after,
    },
    position: {
      get(address) {
        let value = changed.get(address);
        if (value === undefined) {
          const i = anchor.position.get(address);
          if (i === undefined) return undefined;
          value = (rows[i] as BoardValue).value;
        }
        if (value === NOT_RANKED) return undefined;
        const i = after({ value, address }) - 1;
        return i >= 0 && get(i)?.address === address ? i : undefined;
      },
    },
    checksummed: (i) => checksummedAddress((get(i) as BoardValue).address.toLowerCase()),
    // The changes' statement read the block's seal with them; the anchor is final (no seal covers it).
    sealing: sealingOf(at),
  };
}

/** An anchor: a ranking whose rows are an array (computed whole, or derived and materialised once per move). */
export type AnchorBoard = RankedBoard & { array: readonly BoardValue[] };

/**
 * Where `changes` go in the anchor's `rows`: the indexes of the changed accounts' rows, ascending (`drop`), and the
 * changed accounts still ranked (a value, 0 too; not NOT_RANKED), each with the index of the first anchor row strictly after it (`added`, in
 * board order).
 */
function planOf(
  rows: readonly BoardValue[],
  changes: readonly BoardValue[],
  indexOf: (address: string) => number | undefined,
): { drop: number[]; added: { at: number; row: BoardValue }[] } {
  const drop: number[] = [];
  const added: { at: number; row: BoardValue }[] = [];
  for (const c of changes) {
    const address = c.address.toLowerCase() as Address;
    const i = indexOf(address);
    if (i !== undefined) drop.push(i);
    if (c.value !== NOT_RANKED) {
      const row = { address, value: c.value };
      added.push({ at: firstAfterValue(rows, row), row });
    }
  }
  drop.sort((a, b) => a - b);
  added.sort((a, b) => a.at - b.at || inBoardOrder(a.row, b.row));
  return { drop, added };
}

/** Board order as a comparator (value descending, then the lower-case address ascending in byte order). */
const inBoardOrder = (a: BoardValue, b: BoardValue) =>
  a.value !== b.value ? (a.value > b.value ? -1 : 1) : a.address < b.address ? -1 : a.address > b.address ? 1 : 0;

/**
 * The anchor's rows with `changes` applied: every changed account taken out (found by `indexOf`, the anchor's position
 * map, built once per anchor), those still ranked (not NOT_RANKED) put back at their place (a binary search each), the rows
 * between copied in one pass: O(rows + changes · log rows), no hashing per row.
 */
export function applyChanges(
  rows: readonly BoardValue[],
  changes: readonly BoardValue[],
  indexOf: (address: string) => number | undefined,
): BoardValue[] {
  if (changes.length === 0) return rows as BoardValue[];
  const { drop, added } = planOf(rows, changes, indexOf);
  const out = new Array<BoardValue>(rows.length - drop.length + added.length);
  let n = 0;
  let from = 0;
  let d = 0;
  let a = 0;
  const copyTo = (end: number) => {
    for (; from < end; from++) out[n++] = rows[from] as BoardValue;
  };
  // In the anchor's index order: an insert at i goes before rows[i]; a dropped row is skipped.
  while (d < drop.length || a < added.length) {
    const nextDrop = d < drop.length ? (drop[d] as number) : Number.POSITIVE_INFINITY;
    const next = a < added.length ? (added[a] as { at: number; row: BoardValue }) : undefined;
    if (next !== undefined && next.at <= nextDrop) {
      copyTo(next.at);
      out[n++] = next.row;
      a++;
    } else {
      copyTo(nextDrop);
      from = nextDrop + 1;
      d++;
    }
  }
  copyTo(rows.length);
  return out;
}

export class DurationBoards {
  readonly #memos = new Map<string, BlockMemo<RankedBoard>>();
  /** Per board and window: the ranking of a finalized block that the others are derived from. */
  readonly #anchors = new Map<string, AnchorBoard>();
  /** Per board and window: the anchor being computed or moved up (one at a time). */
  readonly #anchoring = new Set<string>();
  /** The newest finalized block an answer named, with its time (Ponder's finalized checkpoint). */
  #finalized: At | undefined;
  readonly #options: DurationBoardsOptions;
  readonly #shared: SharedBytes;
  #whole = 0;
  #derived = 0;

  constructor(options: DurationBoardsOptions) {
    this.#options = options;
    this.#shared = new SharedBytes(options.allBytes ?? DURATION_BOARDS_KEPT.allBytes);
  }

  /** How many rankings this process has made (all boards and windows): computed whole or derived. */
  get computed(): number {
    let n = 0;
    for (const memo of this.#memos.values()) n += memo.computed;
    return n;
  }

  /** Rankings this process computed whole (each a statement over the window's buckets), anchors included. */
  get computedWhole(): number {
    return this.#whole;
  }

  /** Rankings this process derived from an anchor (each a statement over the accounts that changed), anchors included. */
  get derived(): number {
    return this.#derived;
  }

  /** Estimated bytes of every ranking kept (all boards and windows, the heads' included). */
  get bytes(): number {
    return this.#shared.bytes;
  }

  /** The anchor of a board and window (tests, the benchmark): its block, or null while it has none. */
  anchorOf(board: DurationBoard, window: BoardWindow): bigint | null {
    return this.#anchors.get(`${board}:${window}`)?.block ?? null;
  }

  /** Forgets every ranking, the anchors and the finalized block they came from (another build: BlockMemo.forgetAll). */
  forgetAll(): number {
    this.#anchors.clear();
    this.#finalized = undefined;
    let n = 0;
    for (const memo of this.#memos.values()) n += memo.forgetAll();
    return n;
  }

  /** Forgets every ranking at `block` or above, of every board and window (a reorg: BlockMemo.forgetFrom). */
  forgetFrom(block: bigint): number {
    let n = 0;
    for (const memo of this.#memos.values()) n += memo.forgetFrom(block);
    return n;
  }

  /**
   * The rankings of one board and window, by block: what the runtime's gated reads take (api/read/runtime.ts
   * answerAt, blockAnswer), so a ranking held (`has`, `kept`) is answered without the gate, and one to compute is
   * admitted, charged and run in its lane like the ve board's.
   */
  memo(board: DurationBoard, window: BoardWindow): BlockMemo<RankedBoard> {
    const key = `${board}:${window}`;
    let memo = this.#memos.get(key);
    if (memo === undefined) {
      memo = new BlockMemo<RankedBoard>({
        name: `board:${key}`,
        capacity: this.#options.capacity ?? DURATION_BOARDS_KEPT.capacity,
        maxBytes: this.#options.maxBytes ?? DURATION_BOARDS_KEPT.eachBytes,
        shared: this.#shared,
        sizeOf: (v) => 1024 + v.rows.length * BOARD_ROW_BYTES,
        load: (at, lane) => this.#rank(board, window, at, lane),
      });
      this.#memos.set(key, memo);
    }
    return memo;
  }

  async #rank(board: DurationBoard, window: BoardWindow, at: At, lane: ComputeLane): Promise<RankedBoard> {
    const key = `${board}:${window}`;
    const span = BigInt(this.#options.span ?? DERIVE.span);
    const near = (a: AnchorBoard | At | undefined): a is AnchorBoard | At =>
      a !== undefined && (at.block >= a.block ? at.block - a.block : a.block - at.block) <= span;
    let anchor = this.#anchors.get(key);
    // No anchor yet, a block above the finalized one asked for, and that block known (another board's answer said
    // it): the finalized block's ranking, computed whole for this reader, is the anchor, and the block asked for is
    // derived from it — a whole computation either way, and the anchor never waits for a free slot. (A finalized
    // block asked for is computed whole and is its own anchor, below.)
    const finalized = this.#finalized;
    if (this.#options.delta && !near(anchor) && near(finalized) && at.block > finalized.block) {
      const whole = requireInRange(await this.#options.load(board, window, finalized, lane, "read"));
      this.#whole++;
      this.#learn(whole);
      anchor = this.#settle(key, rankedOf(whole, whole.value));
    }
    if (this.#options.delta && near(anchor)) {
      const answer = requireInRange(await this.#options.delta(board, window, anchor, at, lane, "read"));
      this.#derived++;
      this.#learn(answer);
      this.#moveAnchor(board, window, answer);
      return derivedOf(answer, anchor, answer.value);
    }
    const answer = requireInRange(await this.#options.load(board, window, at, lane, "read"));
    this.#whole++;
    this.#learn(answer);
    const ranked = rankedOf(answer, answer.value);
    // A finalized block's ranking is an anchor as it is; else the finalized block's is computed beside.
    if (answer.block <= answer.head.finalized) {
      if (anchor === undefined || (anchor.block < answer.block && near(anchor))) this.#anchors.set(key, ranked);
    } else {
      this.#moveAnchor(board, window, answer);
    }
    return ranked;
  }

  /** The newest finalized block (and its time) an answer named: where a board without an anchor gets one. */
  #learn(answer: BoardAnswer): void {
    if (answer.finalizedTime === null || answer.head.finalized <= 0n) return;
    if (this.#finalized === undefined || this.#finalized.block < answer.head.finalized) {
      this.#finalized = { block: answer.head.finalized, time: answer.finalizedTime };
    }
  }

  /** Keeps `ranked` as the anchor unless a newer one is there already; returns the anchor. */
  #settle(key: string, ranked: AnchorBoard): AnchorBoard {
    const now = this.#anchors.get(key);
    if (now !== undefined && now.block >= ranked.block) return now;
    this.#anchors.set(key, ranked);
    return ranked;
  }

  /**
   * In the background, one at a time per board and window: the anchor moved up to the finalized block `answer`'s head
   * named, once that is ADVANCE blocks past it (derived from it), or computed there whole when there is none yet. A
   * failure (a busy gate, an index away) leaves the anchor as it was; the next block tries again.
   */
  #moveAnchor(board: DurationBoard, window: BoardWindow, answer: BoardAnswer): void {
    const key = `${board}:${window}`;
    const anchor = this.#anchors.get(key);
    const finalized = answer.head.finalized;
    if (answer.finalizedTime === null || finalized <= 0n || this.#anchoring.has(key)) return;
    // It moves to a multiple of ADVANCE (replicas reading every block then pick the same blocks, and share the
    // changes from them through Redis), or anywhere once it is twice that behind.
    const advance = BigInt(this.#options.advance ?? DERIVE.advance);
    if (anchor !== undefined) {
      const behind = finalized - anchor.block;
      if (behind < advance || (finalized % advance !== 0n && behind < 2n * advance)) return;
    }
    const at = { block: finalized, time: answer.finalizedTime };
    const span = BigInt(this.#options.span ?? DERIVE.span);
    this.#anchoring.add(key);
    const moved = async () => {
      if (anchor !== undefined && this.#options.delta && finalized - anchor.block <= span) {
        const delta = requireInRange(await this.#options.delta(board, window, anchor, at, "past", "anchor"));
        this.#derived++;
        // An anchor of its own: its position map is built once, for the rankings derived from it.
        return rankedOf(
          delta,
          applyChanges(anchor.array, delta.value, (address) => anchor.position.get(address)),
        );
      }
      const whole = requireInRange(await this.#options.load(board, window, at, "past", "anchor"));
      this.#whole++;
      return rankedOf(whole, whole.value);
    };
    moved()
      .then(
        (ranked) => {
          this.#settle(key, ranked);
        },
        () => {},
      )
      .finally(() => this.#anchoring.delete(key));
  }
}
