/**
 * The ve ranking of one block, computed at most once per block and shared by every reader of this process
 * (design.md: ve changes with time even without events, so the board is a function of the block; api/index/
 * blockMemo.ts). A reader paging at its cursor's block, or a rank lookup, costs a binary search and no SQL.
 *
 * Pages are keyset pages — strictly after (ve, address) in the order ve descending, address ascending — found by
 * binary search, so page 500 costs what page 1 costs.
 */
import type { Address } from "viem";
import { BlockMemo, type BlockMemoOptions, requireInRange } from "./blockMemo";
import { checksummedAddress } from "./checksum";
import type { ComputeLane } from "./computeGate";
import {
  type AtBlock,
  type HolderVe,
  type IndexHead,
  type LockChange,
  type LockStats,
  type RankingSealing,
  type Seal,
  type SealBasis,
  sealingOf,
  type VeLock,
  type VeLocksAnswer,
} from "./contract";
import {
  differingLocks,
  dropPatchAids,
  type LockDiff,
  patchRanking,
  RankScratch,
  rankVe,
  rankVePaced,
  VeAnchor,
  type VeRanking,
  type VeRows,
} from "./veRanking";
import { hasStatsBase, patchStats, prepareStats, statsAt } from "./veStats";

export type VeBoard = {
  block: bigint;
  time: bigint;
  /** The index's head when the board was read (the answers' freshness). */
  head: IndexHead;
  /**
   * The block's stats, derived with a ranking made near the anchor (api/read/veStats.ts; made on first ask, kept);
   * null for a ranking computed whole (a block far from the anchor: the stats are the statement's there).
   */
  stats: (() => LockStats) | null;
  /** In board order, made as asked for (a derived ranking keeps numbers, not 60,000 row objects per block). */
  rows: VeRows;
  /** Lower-case address → index in rows (rank − 1). */
  position: { get(address: string): number | undefined };
  /** Row i's address, EIP-55 (remembered by the process, api/read/checksum.ts: keccak per address is not free). */
  checksummed(i: number): Address;
  /** Its heap where its ranking says (VeRanking.bytes); else estimated by its rows (BOARD_ROW_BYTES). */
  bytes: number | undefined;
  /**
   * What its pages' cursors are sealed with (api/read/cursorSeal.ts): the seal read with the rows it was ranked from,
   * or their basis. Undefined only on a board made ahead until its block takes it.
   */
  sealing: RankingSealing | undefined;
  /**
   * A board of the same block whose first `rows` rows are this one's, row for row, with as many rows in all: the
   * board made ahead that this one was patched from (its block's own lock events moved no owner among those rows).
   * What readers made of those rows of it (a page's text) is this board's too.
   */
  sameRowsAs?: { board: VeBoard; rows: number };
};

/** The board order: ve descending, then address ascending in byte order (as the SQL's COLLATE "C"). */
export function beforeInBoard(a: { ve: bigint; address: string }, b: { ve: bigint; address: string }): boolean {
  if (a.ve !== b.ve) return a.ve > b.ve;
  return a.address.toLowerCase() < b.address.toLowerCase();
}

/** The index of the first row strictly after `key` in board order (rows are in board order, all distinct). */
export function firstAfter(rows: readonly HolderVe[], key: { ve: bigint; address: string }): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (beforeInBoard(key, rows[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * How far a ranking is derived from its board's anchor (the ve board's here, the duration boards' in
 * api/read/durationBoards.ts): within 4,096 blocks (2 h 16 min on Base), beyond that computed whole; the anchor moves
 * up to the finalized block once that is 64 blocks on.
 */
export const DERIVE = { span: 4_096, advance: 64 } as const;

type At = { block: bigint; time: bigint };
/** Why the live locks or changes are read: a reader's block, or the anchor moving (no reader waits for it). */
export type VePurpose = "read" | "anchor";

/** How a ranking near the anchor is derived (api/read/veRanking.ts); without it every block's is computed whole. */
export type VeDerivation = {
  /** The live locks at a block (api/read/atBlock.ts veLocks): read for the anchor, a finalized block. */
  locks: (at: At, lane: ComputeLane, purpose: VePurpose) => Promise<VeLocksAnswer<VeLock>>;
  /** The locks that changed between `from` and `at`, at their state at `at` (api/read/atBlock.ts veLockDelta). */
  delta: (from: At, at: At, lane: ComputeLane, purpose: VePurpose) => Promise<VeLocksAnswer<LockChange>>;
  /** The finalized block and its time, when nothing read has said it yet (null before the index has one). */
  finalized: () => Promise<At | null>;
  /** Blocks from the anchor within which a ranking is derived; default DERIVE.span (as the duration boards'). */
  span?: number;
  /** Finalized blocks past the anchor before it moves up; default DERIVE.advance. */
  advance?: number;
  /**
   * How long after a head's ranking the next block's is made ahead: by default half the step between heads (1 s on
   * Base), so its pass (a few ms of the event loop at Base scale) does not meet the head's readers, who come just
   * after it.
   */
  aheadDelayMs?: number;
};

export type VeBoardsOptions = Omit<BlockMemoOptions<VeBoard>, "load" | "sizeOf"> & {
  /** Computes the ranking of a block whole (api/read/atBlock.ts holders): a block far from the anchor. */
  load: (at: { block: bigint; time: bigint }, lane: ComputeLane) => Promise<AtBlock<VeRanking>>;
  derive?: VeDerivation;
  /** Told each block whose ranking (and board) made ahead was taken as it was: the block changed no lock (metrics). */
  onTakenAhead?: () => void;
  /** Told each block whose ranking was the one made ahead with the locks its own events changed summed again. */
  onPatchedAhead?: () => void;
};

/**
 * A ranked row's heap, estimated, where its ranking does not say (`bytes`): the row (an object, a 42-character
 * address, two bigints) ~200 B, its entry in `position` ~100 B, its checksummed address once shown ~70 B (measured
 * with node --expose-gc over 60,000 rows).
 */
export const BOARD_ROW_BYTES = 400;
/**
 * The boards kept by default: 8 blocks' and 64 MiB of them (at Base scale, ~60,000 holders, a board is ~25 MB by the
 * row estimate; a ranking computed whole, kept as its text, ~5.5 MB).
 */
export const BOARDS_KEPT = { capacity: 8, maxBytes: 64 * 1024 * 1024 } as const;

/**
 * A ranking of rows in board order (an array), with a map of where each address is, built at the first rank lookup
 * (tests and benches rank arrays; the statement's ranking is kept as its text: api/read/textRanking.ts).
 */
export function rankingOf(array: readonly HolderVe[]): VeRanking {
  let map: Map<string, number> | undefined;
  const where = () => {
    if (map === undefined) {
      map = new Map();
      for (let i = 0; i < array.length; i++) map.set(array[i]!.address.toLowerCase(), i);
    }
    return map;
  };
  return {
    length: array.length,
    get: (i) => array[i],
    after: (key) => firstAfter(array, key),
    indexOf: (address) => where().get(address),
  };
}

/** A board of ranked rows, with where an address is in them and its rows' checksummed addresses. */
function boardOf(
  at: { block: bigint; time: bigint; head: IndexHead; seal?: Seal | null; basis?: SealBasis },
  ranking: VeRanking,
  stats: (() => LockStats) | null = null,
): VeBoard {
  const sealing = sealingOf(at);
  const rows: VeRows = { length: ranking.length, get: ranking.get, after: ranking.after };
  const position = { get: ranking.indexOf };
  // The process's memo of EIP-55 addresses: the top rows are the same accounts block after block.
  const checksummed = (i: number) => checksummedAddress((rows.get(i) as HolderVe).address);
  const bytes = ranking.bytes;
  return { block: at.block, time: at.time, head: at.head, rows, position, checksummed, stats, bytes, sealing };
}

/** A later turn of the event loop (after its I/O): between the slices of a paced build. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Thrown at a slice of the ranking made ahead once it is no longer wanted (a newer head or anchor): it stops there. */
const GAVE_UP = new Error("the ranking made ahead is no longer wanted");

/** `make`'s value, made on the first call and kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/** The rows of a ranking made ahead whose exact values are made with it: the default page (api/index/query.ts). */
const AHEAD_ROWS = 100;

/**
 * The next block's ranking, made ahead at the head: ve moves with time alone, and most blocks change no lock (Base
 * makes one every 2 s; at 520,000 events a year, about one block in thirty has a lock event). So once a head's ranking
 * is made, the next block's is made too (and its stats), halfway to it, for the time it will most likely have (the
 * last step between consecutive heads) and with the same changes since the anchor. When that block comes, its
 * delta (read as always) is compared with them: the same locks in the same states at the expected time make the same
 * ranking (rankVe is a function of the time, the anchor and the changes), so it is taken as it is and the block's
 * first reader waits only for the delta's statement. At the expected time with other changes (the block's own lock
 * events), it is patched: only the owners of the locks that differ are summed again and put in place
 * (veRanking.ts patchRanking), not a pass over every live lock while the first reader waits. Otherwise (another
 * time, another anchor) the ranking is made as before.
 */
type MadeAhead = {
  anchor: VeAnchor;
  time: bigint;
  changes: readonly LockChange[];
  ranking: VeRanking;
  /** The block's stats, made with it (api/read/veStats.ts). */
  stats: LockStats;
  /**
   * The block's board, made with them (its head the last one's until taken): what readers make of it (a page's text,
   * kept beside it) is made ahead too (`onMadeAhead`), so the block's first reader finds it.
   */
  board: VeBoard;
};

/** Whether two lists of changes name the same locks in the same states (each lock once in a list). */
export function sameChanges(a: readonly LockChange[], b: readonly LockChange[]): boolean {
  return a.length === b.length && differingLocks(a, b).length === 0;
}

/**
 * The ve rankings of the blocks asked for: one per block, shared (api/read/blockMemo.ts). With a derivation, a block
 * within `span` of the anchor (the live locks of a finalized block, read once) is ranked in the process from the
 * anchor and the locks changed since (api/read/veRanking.ts); the anchor moves up in the background by the same
 * changes, and the block's stats are derived with its ranking (api/read/veStats.ts); at the head the next block's is
 * made ahead (above). A block farther away is computed whole, by the statement.
 */
export class VeBoards extends BlockMemo<VeBoard> {
  #anchor: VeAnchor | undefined;
  /** The next block's ranking made ahead (one at a time), the newest head ranked, and rankings taken from it. */
  #ahead: MadeAhead | undefined;
  /** The next block's ranking being made in slices (one run at a time), and the buffers those runs use. */
  #makingAhead: Promise<void> = Promise.resolve();
  readonly #aheadScratch = new RankScratch();
  #lastHead: At | undefined;
  #takenAhead = 0;
  #patchedAhead = 0;
  #anchoring = false;
  #finalized: At | undefined;
  /**
   * Told each next block's board made ahead (above), between heads: ComputeAhead.madeAhead makes the head's page text
   * of it then (api/read/runtime.ts), not at the block's commit while its first reader waits.
   */
  onMadeAhead: ((board: VeBoard) => void) | undefined;
  #whole = 0;
  #derived = 0;
  readonly #derive: VeDerivation | undefined;
  readonly #loadWhole: VeBoardsOptions["load"];
  readonly #onTakenAhead: (() => void) | undefined;
  readonly #onPatchedAhead: (() => void) | undefined;

  constructor({ load, derive, onTakenAhead, onPatchedAhead, ...options }: VeBoardsOptions) {
    super({
      name: "board",
      ...BOARDS_KEPT,
      ...options,
      sizeOf: (board) => 1024 + (board.bytes ?? board.rows.length * BOARD_ROW_BYTES),
      load: (at, lane) => (this as VeBoards).#rank(at, lane),
    });
    this.#derive = derive;
    this.#loadWhole = load;
    this.#onTakenAhead = onTakenAhead;
    this.#onPatchedAhead = onPatchedAhead;
  }

  /** Rankings computed whole by the statement over every lock. */
  get computedWhole(): number {
    return this.#whole;
  }

  /** Rankings derived from the anchor (one statement over the locks changed since, and a pass in the process). */
  get derived(): number {
    return this.#derived;
  }

  /** Rankings that were the next block's made ahead (no lock changed in the block, its time as expected). */
  get takenAhead(): number {
    return this.#takenAhead;
  }

  /** Rankings patched from the next block's made ahead (its own events changed a few locks; veRanking.ts). */
  get patchedAhead(): number {
    return this.#patchedAhead;
  }

  /** Forgets the rankings and the anchor, the ranking made ahead and the finalized block they came from (BlockMemo.forgetAll). */
  override forgetAll(): number {
    this.#anchor = undefined;
    this.#ahead = undefined;
    this.#lastHead = undefined;
    this.#finalized = undefined;
    return super.forgetAll();
  }

  /** Whether a block's ranking would be derived from the anchor now (its stats with it), not computed whole. */
  nearAnchor(block: bigint): boolean {
    const anchor = this.#anchor;
    if (this.#derive === undefined || anchor === undefined) return false;
    const span = BigInt(this.#derive.span ?? DERIVE.span);
    return (block >= anchor.block ? block - anchor.block : anchor.block - block) <= span;
  }

  /** The anchor's block, or null while there is none (tests, the benchmark). */
  get anchorBlock(): bigint | null {
    return this.#anchor?.block ?? null;
  }

  async #rank(at: At, lane: ComputeLane): Promise<VeBoard> {
    const derive = this.#derive;
    if (derive === undefined) return this.#whole_(at, lane);
    const span = BigInt(derive.span ?? DERIVE.span);
    const near = (a: At | undefined | null): a is At =>
      a != null && (at.block >= a.block ? at.block - a.block : a.block - at.block) <= span;
    let anchor = this.#anchor;
    if (!near(anchor)) {
      // No anchor near: the finalized block's live locks are, if the block asked for is near the finalized block
      // (a reader at the head, or a request's recent past block); an old block is computed whole.
      const finalized = this.#finalized ?? (await derive.finalized()) ?? undefined;
      if (finalized !== undefined) this.#learn(finalized);
      if (!near(finalized)) return this.#whole_(at, lane);
      const locks = requireInRange(await derive.locks(finalized, lane, "read"));
      // In slices (every other request served between them); the reader waits for it either way.
      anchor = this.#settle(await VeAnchor.paced(locks, locks.value, nextTurn));
    }
    const delta = requireInRange(await derive.delta(anchor, at, lane, "read"));
    this.#derived++;
    this.#learnFrom(delta);
    this.#move(delta);
    const ahead = this.#takeAhead(anchor, delta);
    if (lane === "head") this.#makeAhead(anchor, delta);
    if (ahead?.diff.length === 0) {
      // The board made ahead, with what was made of it, when it is this block's (the time matched: so did the block,
      // unless blocks came faster than one per step); the head it was read at is this read's.
      const { made } = ahead;
      if (made.board.block !== delta.block) return boardOf(delta, made.ranking, () => made.stats);
      made.board.head = delta.head;
      // Its rows are this block's changes' ranking: sealed by them (read with them, or their basis).
      made.board.sealing = sealingOf(delta);
      return made.board;
    }
    // A past block's order stays its own: the head's next ranking starts from the head's. A block made ahead whose
    // own events changed a few locks: the ranking and stats made ahead with those locks taken out and put in.
    const keepOrder = lane === "head";
    const patched = ahead && patchRanking(ahead.made.ranking, anchor, delta.time, ahead.diff, { keepOrder });
    if (patched) {
      this.#patchedAhead++;
      this.#onPatchedAhead?.();
    }
    const ranking = patched ? patched.ranking : rankVe(delta, anchor, delta.value, { keepOrder });
    const board = boardOf(
      delta,
      ranking,
      once(
        () =>
          (patched && ahead && patchStats(ahead.made.stats, anchor, delta.time, ahead.diff, ranking.length)) ||
          statsAt(delta.time, anchor, delta.value, ranking.length),
      ),
    );
    const made = ahead?.made.board;
    if (patched && made?.block === delta.block && made.rows.length === ranking.length) {
      board.sameRowsAs = { board: made, rows: patched.samePrefix };
    }
    return board;
  }

  /**
   * The ranking (and stats) made ahead, when it is for this block's anchor and time, with the locks whose state differs
   * from those it was made with: none, and it is taken as it is; else it is the start the block's are patched from.
   */
  #takeAhead(anchor: VeAnchor, delta: VeLocksAnswer<LockChange>): { made: MadeAhead; diff: LockDiff[] } | undefined {
    const made = this.#ahead;
    if (made === undefined || made.anchor !== anchor || made.time !== delta.time) return undefined;
    this.#ahead = undefined;
    const diff = differingLocks(made.changes, delta.value);
    if (diff.length === 0) {
      dropPatchAids(made.ranking);
      this.#takenAhead++;
      this.#onTakenAhead?.();
    }
    return { made, diff };
  }

  /**
   * After a head's ranking: the next block's, for the time one step on (the step between the last two consecutive
   * heads; none until two were seen) with its stats, made `aheadDelayMs` later unless a newer head or anchor has come
   * since. Past blocks (a reader's time travel) never make one.
   */
  #makeAhead(anchor: VeAnchor, head: VeLocksAnswer<LockChange>): void {
    const last = this.#lastHead;
    if (last !== undefined && head.block <= last.block) return;
    this.#lastHead = { block: head.block, time: head.time };
    if (last === undefined || head.block !== last.block + 1n || head.time <= last.time) return;
    const step = head.time - last.time;
    const next = { block: head.block + 1n, time: head.time + step };
    const delayMs = this.#derive?.aheadDelayMs ?? Math.min(Number(step) * 500, 60_000);
    setTimeout(() => {
      // One at a time (they share one set of buffers): a run still going (blocks faster than it) finishes or gives up
      // at its next slice first. A run that fails leaves its block to be ranked when first read, where a failure is
      // answered and logged as any read's.
      this.#makingAhead = this.#makingAhead.then(() => this.#madeAhead(anchor, head, next)).catch(() => {});
    }, delayMs).unref();
  }

  /**
   * The next block's ranking, its first page's exact values and its stats, made in slices between which every other
   * request is served (at Base scale ~10–30 ms of CPU once a block, which in one piece held every request the process
   * had, the supply figures' too); given up at a slice once a newer head or anchor has come.
   */
  async #madeAhead(anchor: VeAnchor, head: VeLocksAnswer<LockChange>, next: At): Promise<void> {
    const wanted = () => this.#anchor === anchor && this.#lastHead?.block === head.block;
    const pause = async () => {
      await nextTurn();
      if (!wanted()) throw GAVE_UP;
    };
    if (!wanted()) return;
    try {
      const ranking = await rankVePaced(next, anchor, head.value, { forPatch: true }, this.#aheadScratch, pause);
      // The first page's exact values too (a page is 100 rows by default): what most of the block's readers ask.
      for (let i = 0; i < Math.min(ranking.length, AHEAD_ROWS); i++) ranking.get(i);
      await pause();
      const stats = statsAt(next.time, anchor, head.value, ranking.length, { forPatch: true });
      await pause();
      const board = boardOf({ ...next, head: head.head }, ranking, () => stats);
      // Not sealed until its block's changes are read and found the same (#rank).
      board.sealing = undefined;
      this.#ahead = { anchor, time: next.time, changes: head.value, ranking, stats, board };
      this.onMadeAhead?.(board);
    } catch (error) {
      if (error !== GAVE_UP) throw error;
    }
  }

  async #whole_(at: At, lane: ComputeLane): Promise<VeBoard> {
    const answer = requireInRange(await this.#loadWhole(at, lane));
    this.#whole++;
    return boardOf(answer, answer.value);
  }

  #learn(finalized: At): void {
    if (this.#finalized === undefined || this.#finalized.block < finalized.block) this.#finalized = finalized;
  }

  #learnFrom(answer: VeLocksAnswer<unknown>): void {
    if (answer.finalizedTime !== null && answer.head.finalized > 0n) {
      this.#learn({ block: answer.head.finalized, time: answer.finalizedTime });
    }
  }

  #settle(anchor: VeAnchor): VeAnchor {
    const now = this.#anchor;
    if (now !== undefined && now.block >= anchor.block) return now;
    this.#anchor = anchor;
    return anchor;
  }

  /**
   * In the background, one at a time: the anchor moved up to the finalized block an answer named, once that is
   * `advance` blocks past it, to a multiple of `advance` (replicas then share the changes through Redis) or anywhere
   * once twice that behind. A failure leaves the anchor as it was; the next block tries again.
   */
  #move(answer: VeLocksAnswer<unknown>): void {
    const derive = this.#derive;
    const anchor = this.#anchor;
    const finalized = answer.head.finalized;
    if (derive === undefined || anchor === undefined || this.#anchoring || answer.finalizedTime === null) return;
    const advance = BigInt(derive.advance ?? DERIVE.advance);
    const behind = finalized - anchor.block;
    if (behind < advance || (finalized % advance !== 0n && behind < 2n * advance)) return;
    const at = { block: finalized, time: answer.finalizedTime };
    const span = BigInt(derive.span ?? DERIVE.span);
    this.#anchoring = true;
    // Built in slices (a few ms each), every request served between them: at Base scale a build is ~200–250 ms of
    // CPU, and in one piece it held the whole process once per move.
    const moved = async () => {
      if (behind <= span) {
        const delta = requireInRange(await derive.delta(anchor, at, "past", "anchor"));
        return VeAnchor.paced(delta, anchor.locksWith(delta.value), nextTurn);
      }
      const locks = requireInRange(await derive.locks(at, "past", "anchor"));
      return VeAnchor.paced(locks, locks.value, nextTurn);
    };
    moved()
      .then(
        (next) => {
          // The ranking order carries over as a start (account indexes differ: translated by address).
          if (anchor.order !== null) {
            const own = anchor.accounts.length;
            next.order = Int32Array.from(
              Array.from(
                anchor.order.filter((i) => i < own),
                (i) => next.accountIndex(anchor.accounts[i] as string) ?? -1,
              ).filter((i) => i >= 0),
            );
          }
          // The stats base too, in slices, where the stats were read from the anchor it replaces.
          if (this.#settle(next) === next && hasStatsBase(anchor)) prepareStats(next, nextTurn).catch(() => {});
        },
        () => {},
      )
      .finally(() => {
        this.#anchoring = false;
      });
  }
}
