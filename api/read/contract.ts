/**
 * The read model's contract: what REST (api/index), GraphQL (api/graphql) and MCP (api/mcp) may know of the index.
 * They import this file and the runtime (api/read/runtime.ts), never the SQL behind them (api/read/atBlock.ts,
 * api/read/store.ts) or another feature's folder. One rule answers every question, at the head or at any block B
 * (docs/design.md, "The read model"): the state of a lock at B is its newest lock_event row at or before B.
 */
import type { Address, Hex } from "viem";
import type { DurationBoard } from "../../indexer/boards";
import { CancelledError, type CancelSignal, DEADLINE_REASON } from "../chain/rpc";

export { BOARD_UNIT, DURATION_BOARDS, type DurationBoard } from "../../indexer/boards";

/** The index's head: Ponder's latest checkpoint (block, its timestamp) and its finalized block. */
/**
 * The index's head as a statement read it. `build`: a digest of the Ponder build whose rows the statement read
 * (`_ponder_meta`'s build_id); absent when the index names none (a database without Ponder's meta row).
 */
export type IndexHead = { block: bigint; time: bigint; finalized: bigint; build?: string };

/**
 * Where to read: the head (null), or block `block` with its timestamp when the caller knows it (else the index's:
 * the head's, or an event row's of that block; BlockTimeUnknownError when it has none).
 */
export type ReadAt = { block: bigint; time: bigint | null } | null;

/**
 * An answer of one statement: the head it saw, the block and time it is of, and whether that block was ≤ head; a
 * paged list's statement also says its `seal` (asked with a SealAsk), read in the same snapshot as its rows.
 */
export type AtBlock<T> = {
  head: IndexHead;
  block: bigint;
  time: bigint;
  inRange: boolean;
  value: T;
  seal?: Seal | null;
};

/**
 * What a page's cursor commits to of the rows its block could still lose (api/read/cursor.ts): the index's own events
 * (lock_event and protocol_event: every list derives from them) in blocks `from` + 1 to the block, as a digest. Null
 * when the block is at or below Ponder's finalized checkpoint: its rows are never rewritten.
 */
export type Seal = { from: bigint; digest: string };

/**
 * A statement asked for its block's seal: `from` the first page's (a later page recomputes the cursor's range), or
 * null to take it from the finalized checkpoint in the statement's own snapshot. Absent: no seal read.
 */
export type SealAsk = { from: bigint | null };

/** A duration board's rows at a block, and the time of the finalized block its head named (null before there is one). */
export type BoardAnswer = AtBlock<BoardValue[]> & { finalizedTime: bigint | null };

/** The state of one lock at a block. `owner` is lower-case hex as Ponder stores it; lockEnd is the stored end. */
export type LockState = {
  tokenId: bigint;
  owner: Address | null;
  amount: bigint;
  lockEnd: bigint;
  autoMax: boolean;
  listed: boolean;
  burned: boolean;
  createdBlock: bigint;
};

/** One lock_event row: the event, and its lock's state right after it. */
export type LockEventState = {
  kind: string;
  tokenId: bigint;
  account: Address;
  amount: bigint | null;
  /** The stored end; what an answer says is getLockInfo's at the event's block (shapes.ts eventJson). */
  lockEnd: bigint;
  autoMax: boolean;
  fromTokenId: bigint | null;
  recipient: Address | null;
  owner: Address | null;
  lockAmount: bigint;
  listed: boolean;
  burned: boolean;
  blockNumber: bigint;
  blockTime: bigint;
  txHash: Hex;
  logIndex: number;
};

/** A position in the newest-first order of events: the page continues strictly after (older than) it. */
export type EventKey = { block: bigint; logIndex: number };

/** One holder of live locks at a block: the sum of its locks' ve and amounts (lower-case address). */
export type HolderVe = { address: Address; ve: bigint; locked: bigint; locks: number };

/** Rows in board order: ve descending, then address ascending (byte order of the lower-case hex). */
export type VeRows = {
  readonly length: number;
  /** Row i (rank i + 1), undefined past the end. */
  get(i: number): HolderVe | undefined;
  /** The index of the first row strictly after `key` in board order (a keyset page's start). */
  after(key: { ve: bigint; address: string }): number;
};

/**
 * A ranking's rows in board order (made when asked for), and where a (lower-case) address is in them; `bytes`, where
 * known, its heap (else a kept board is estimated by its rows: api/read/veBoard.ts BOARD_ROW_BYTES).
 */
export type VeRanking = VeRows & { indexOf(address: string): number | undefined; bytes?: number };

/** A live lock as the ve ranking needs it (`owner` lower-case hex as Ponder stores it). */
export type VeLock = { tokenId: bigint; owner: Address; amount: bigint; lockEnd: bigint; autoMax: boolean };

/** A lock that changed between two blocks: its state at the block read, null when it is not live there. */
export type LockChange = { tokenId: bigint; lock: VeLock | null };

/**
 * Live locks, or lock changes, at a block, with the finalized block's time (Ponder's finalized checkpoint). `basis`:
 * changes made without a statement of their block, from an earlier block's (api/read/quietBlocks.ts); what its
 * rankings' cursors are sealed with then (RankingSealing).
 */
export type VeLocksAnswer<T> = AtBlock<T[]> & { finalizedTime: bigint | null; basis?: SealBasis };

/**
 * Where a ranking's rows came from, for its pages' cursor seals (api/read/cursorSeal.ts). `seal`: the seal read by the
 * statement that read its rows (same snapshot: it describes those rows), null at a final block or from an index that
 * reads none. `basis`: rows carried from an earlier block's statement (a quiet block's ve changes), checked by a seal
 * read of their own.
 */
export type RankingSealing = { seal: Seal | null } | { basis: SealBasis };

/** What a ranking made of `answer`'s rows is sealed with (a statement's seal, or its carried rows' basis). */
export function sealingOf(answer: { seal?: Seal | null; basis?: SealBasis }): RankingSealing {
  return answer.basis !== undefined ? { basis: answer.basis } : { seal: answer.seal ?? null };
}

/**
 * A ranking's rows carried from the statement of block `block` (its seal `seal`, read with those rows) and the lock
 * events of the blocks after it up to the ranking's, as notifications carried them (`lines`, indexSignal.ts's format,
 * ";"-joined; "" when none: a quiet block).
 */
export type SealBasis = { block: bigint; seal: Seal | null; lines: string };

/**
 * A board cursor's seal for a ranking carried from an earlier block's statement (SealBasis): that statement's block and
 * seal, and a digest of the lock events carried since (96 bits of base64url, as a seal's). No statement reads it for
 * the first page; each later page checks, in its own snapshot, that the index still holds the same (cursorSeal.ts).
 */
export type CarriedSeal = { basis: bigint; seal: Seal | null; lines: string };

/** What a board cursor is sealed with: a statement's seal of its block, or its ranking's carried basis. */
export type BoardSeal = Seal | CarriedSeal;

/**
 * What a seal statement asked with a basis block found in its snapshot: the digest of its range up to that block (null
 * without a range), and the lock events after that block up to the block read, in the carried format.
 */
export type BasisFound = { digest: string | null; lines: string };

export type LockStats = {
  totalLocked: bigint;
  totalVe: bigint;
  /** Owners of at least one live lock. */
  holders: number;
  /** Owners whose ve is above zero (the board's rows). */
  veHolders: number;
  liveLocks: number;
  autoMaxLocks: number;
  autoMaxLocked: bigint;
  /** Non-AutoMax locks already past their end, not yet unlocked. */
  expiredLocked: bigint;
  /** Non-AutoMax amounts by the unix week (floor(lockEnd / 7 d)) they unlock in, for ends after t. */
  unlocksByWeek: Map<bigint, bigint>;
};

export type EventsOf = { tokenId: bigint } | { account: Address };

/**
 * The per-request reads take an optional `signal`: when it fires first (the request's deadline passed, its client
 * hung up) the statement is cancelled where the connection allows it (node-postgres: api/read/statements.ts).
 */
export interface LockIndex {
  /** The head alone, and the timestamp of block `block` if the index holds an event in it (else null). */
  probe(
    block: bigint | null,
    signal?: CancelSignal,
  ): Promise<{ head: IndexHead; eventTime: bigint | null; finalizedTime?: bigint | null }>;
  /** The lock at the block, or null when it was not minted by then. */
  lock(tokenId: bigint, at: ReadAt, signal?: CancelSignal): Promise<AtBlock<LockState | null>>;
  /** The owner's live locks at the block, by token id (and the block's seal when asked: GraphQL's `locks` pages). */
  locksOf(owner: Address, at: ReadAt, signal?: CancelSignal, seal?: SealAsk): Promise<AtBlock<LockState[]>>;
  /** Up to `limit` events, newest first, strictly older than `after` when given; the block's seal when asked. */
  events(
    of: EventsOf,
    at: ReadAt,
    page: { limit: number; after: EventKey | null; seal?: SealAsk },
    signal?: CancelSignal,
  ): Promise<AtBlock<LockEventState[]>>;
  /**
   * Every holder with ve > 0 at the block: ve descending, then address ascending (byte order); with the block's seal
   * read in the same statement (a ranking's rows: RankingSealing), as the boards' statements below.
   */
  holders(at: ReadAt): Promise<AtBlock<VeRanking>>;
  stats(at: ReadAt): Promise<AtBlock<LockStats>>;
  /**
   * What changed in blocks from..to (inclusive, capped at the head), by block: the streams' one read per block. Each
   * event (lock_event and protocol_event) and, when `since` is given (the timestamp of block from − 1), each duration
   * board entry that left a trailing window in the range (BoardExit).
   */
  changes(from: bigint, to: bigint, since?: bigint | null): Promise<AtBlock<BlockChange[]>>;
  /**
   * The newest event (of lock_event and protocol_event) at or below the head's finalized block, or null when there is
   * none: what api/read/branchCheck.ts asks the node about. Absent from a stand-in index, which is then not checked.
   */
  finalEvent?(signal?: CancelSignal): Promise<AtBlock<FinalEvent | null>>;
  /**
   * Ponder's journal (its `_reorg__*` tables, one per table, numbered by one sequence): the newest entry, whether entry
   * `kept` (the newest one read before) is still there, and the checkpoints, in one statement. A revert deletes every
   * entry from the first one above the fork up, finalization only entries at or below the finalized checkpoint: so
   * the newest entry gone while its block is above the finalized one is a revert (api/read/indexSignal.ts
   * WatermarkSignal, where no trigger tells it), and so is a change of the journal's triggers (JournalMark.triggers),
   * which also tells one whose entries no read saw. Null where the schema has no journal (a views schema). Absent from
   * a stand-in index.
   */
  journal?(kept: bigint | null): Promise<JournalMark | null>;
  /**
   * Which tables the rows are read from: the schema behind the views (the one Ponder writes), or the schema itself
   * without views, as "name:oid" (a schema dropped and made again is another); null when it is not there. A redeploy
   * or a recovery that re-indexes into a new schema changes it: the webhooks' feeder checks what it delivered then
   * (api/webhooks/engine.ts, through sourceHead). Absent from a stand-in index, which never switches.
   */
  source?(): Promise<string | null>;
  /**
   * `source` and the head (its build: another build's rows may be shaped otherwise) in one statement, for the
   * webhooks' feeder, which reads both twice per head. null when `source` is; otherwise it fails as `probe` does (the
   * index not started, recovering, another chain's). Absent where `source` is.
   */
  sourceHead?(): Promise<{ source: string; head: IndexHead } | null>;
  /**
   * The block's seal alone (a later board page's judge: api/read/cursorSeal.ts). With `basis` (a block below the one
   * read), also what its snapshot holds of a ranking's basis (SealBasis): the digest of the seal's range up to it, and
   * the lock events after it. Optional: an index without it (a test's stand-in) hands out cursors without one.
   */
  seal?(at: ReadAt, seal: SealAsk, signal?: CancelSignal, basis?: bigint): Promise<AtBlock<BasisFound | null>>;
}

/** An event's block and transaction, as the index holds them (the node can be asked for its receipt). */
export type FinalEvent = { block: bigint; txHash: Hex };

/**
 * A duration board entry leaving a window: an entry of time ts counts at a block of time T iff ts ≥ T − window (the
 * window is inclusive at its start, as the reference's board SQL), so it leaves at the first block whose
 * T > ts + window — here the first block of the range whose time the index knows (one with an event, or the range's
 * end when it is the head) past it.
 */
export type BoardExit = { board: DurationBoard; window: Exclude<BoardWindow, "lifetime"> };

/**
 * One change's reach, for the streams (api/index/stream.ts) — an event: its block, the locks and accounts it
 * touches, its activity kind (`create`…, `takeover`…), `lock` whether it is a VeLockNFT event; or a board exit
 * (no locks, accounts or kind).
 */
export type BlockChange = {
  block: bigint;
  tokenIds: bigint[];
  accounts: Address[];
  kind: string | null;
  lock: boolean;
  exit: BoardExit | null;
};

/** The index has no checkpoint yet: Ponder has not started (or not finished its first batch). */
export class IndexNotStartedError extends Error {
  override name = "IndexNotStartedError";
  constructor() {
    super("the lock index has no checkpoint yet");
  }
}

/**
 * The index is not ready (Ponder's `_ponder_meta` is_ready 0): back-filling, or recovering after a restart, when its
 * rows are rewound to the safe checkpoint before the checkpoint itself is moved back (ponder database/index.js).
 */
export class IndexRecoveringError extends Error {
  override name = "IndexRecoveringError";
  constructor() {
    super("the lock index is back-filling or recovering after a restart (is_ready 0)");
  }
}

/**
 * The index was built for another chain than the one this API serves (NETWORK's): Ponder's checkpoint, read in the
 * same statement as the rows, names `indexChainId`. Nothing of the statement is answered: another chain's locks would
 * go out labelled `chainId`.
 */
export class IndexChainMismatchError extends Error {
  override name = "IndexChainMismatchError";
  constructor(
    readonly indexChainId: number,
    readonly chainId: number,
  ) {
    super(`the lock index is of chain ${indexChainId}, this API serves chain ${chainId}`);
  }
}

/**
 * A read at a block below the head with no timestamp given, in which the index holds no event: the caller must
 * find the block's time (the node) and read again. Carries the head the statement saw.
 */
export class BlockTimeUnknownError extends Error {
  override name = "BlockTimeUnknownError";
  constructor(
    readonly block: bigint,
    readonly head: IndexHead,
  ) {
    super(`the index does not know the timestamp of block ${block}`);
  }
}

/**
 * The statement never had a connection: the index's pool had more statements waiting than it serves within the
 * checkout's wait (`queue full`, refused at once), or it waited that long (`wait expired`). The database was not
 * asked anything; a retry after `retryAfterSec` finds the queue drained (api/server/indexPool.ts).
 */
export class IndexPoolBusyError extends Error {
  override name = "IndexPoolBusyError";
  constructor(
    readonly why: "queue full" | "wait expired",
    readonly retryAfterSec: number,
    cause?: unknown,
  ) {
    super(`the index's connections are all taken (${why})`, cause === undefined ? undefined : { cause });
  }
}

/** The query was cancelled by its signal; nothing of its result is known. */
export class QueryCancelledError extends CancelledError {
  override name = "QueryCancelledError";
  /**
   * Its request's deadline passed (the signal's reason "deadline", api/http/cancellation.ts), rather than its client
   * hanging up: the index did not answer within the request's time, which /ready's failure streak counts.
   */
  readonly byDeadline: boolean;
  constructor(reason?: unknown) {
    super("index query cancelled: its request was abandoned");
    this.byDeadline = reason === DEADLINE_REASON;
  }
}

/** One live lock of a user, as the state endpoint lists it. */
export type LiveLock = { tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };

/**
 * What the index says about a user at one moment, read in one SQL statement (one snapshot of the tables):
 * which token ids to read on chain — never their values, which the chain gives at the answer's block.
 */
export type IndexedLockIds = IndexMark & {
  /** The owner's unburned token ids by the index, ascending. */
  tokenIds: bigint[];
};

/** What LockIndex.journal reads of Ponder's journal and checkpoint. */
export type JournalMark = {
  /** The newest journal entry (its operation id, and the block of its checkpoint), or null when the journal is empty. */
  newest: { id: bigint; block: bigint } | null;
  /** Whether the entry asked about is still there (true when none was asked about). */
  kept: boolean;
  /** Ponder's latest checkpoint, whole (it changes with every block committed), and its block. */
  latest: string;
  head: bigint;
  /** The finalized checkpoint's block. */
  finalized: bigint;
  /**
   * The object ids of Ponder's journal triggers (`reorg`, one per table: database/actions.js createTriggers), in
   * order; null when there are none (a back-fill, which writes no journal). Ponder drops them and creates them again
   * in each revert's transaction (and in a restart's recovery), so they change with every revert, also one whose
   * entries were committed and deleted between two reads.
   */
  triggers: string | null;
};

/** How far the index is, for no owner in particular (api/read/watermark.ts polls it). */
export type IndexMark = {
  /** The highest token id the index has seen minted (any owner, burned or not); 0 when none. Ids are
   *  sequential and never reused, so every id minted after the indexed block is above it. */
  maxTokenId: bigint;
  /** The last block the index has fully processed (Ponder's latest checkpoint), or null before the first. */
  indexedBlock: bigint | null;
};

/** What the API needs from the lock index; the indexer's Postgres/PGlite tables implement it. */
export interface LockStore {
  /** The owner's live locks (amount > 0, not burned), ordered by token id, in one indexed query. */
  liveLocksOf(owner: Address): Promise<LiveLock[]>;
  /**
   * The owner's token ids, the highest id minted and the indexed block, consistent with each other. When `signal`
   * fires first the query is cancelled (where the store can: node-postgres, api/read/statements.ts) and the
   * call rejects with QueryCancelledError.
   */
  lockIdsOf(owner: Address, options?: { signal?: CancelSignal }): Promise<IndexedLockIds>;
  /** The highest id minted and the indexed block, in one statement (lockIdsOf's, without an owner). */
  indexMark(): Promise<IndexMark>;
  /** True once the index has caught up with the chain (Ponder's readiness); false while back-filling. */
  isReady(): Promise<boolean>;
}

/** The trailing windows of the duration boards (protocol.md §9), in seconds; lifetime has none. */
export const BOARD_WINDOWS = { "24h": 86_400n, "7d": 604_800n, "30d": 2_592_000n, lifetime: null } as const;
export type BoardWindow = keyof typeof BOARD_WINDOWS;

/** One account's figure on a duration board (lower-case address): ranked at 0 too, NOT_RANKED off the board. */
export type BoardValue = { address: Address; value: bigint };
/**
 * A board change's value for an account that is off the board at the block (no event of its in the window). Not 0: an
 * account with an event in the window is ranked even at value 0, as the reference's board SQL ranks it (protocol.md §9).
 */
export const NOT_RANKED = -1n;

/**
 * One item of the activity feed: a VeLockNFT lifecycle event (lock_event) or an event of MineCore, Furnace or
 * ShareholderRoyalties (protocol_event). `account` is who it is about (the user, newKing, king), `other` a second
 * account it concerns (a takeover's previousKing, a sell-back's Furnace); `data` the event's own fields.
 */
export type ActivityRow = {
  kind: string;
  account: Address;
  other: Address | null;
  data: Record<string, string | number | boolean | null>;
  blockNumber: bigint;
  blockTime: bigint;
  txHash: Hex;
  logIndex: number;
};

/**
 * The official leaderboards, read at a block from what the indexer maintains (board_hour, board_total and the
 * window edges' board_entry rows: docs/design.md, "The official leaderboards").
 */
export interface BoardIndex {
  /**
   * Every account with an entry on `board` in `window` at the block (value 0 too): value descending, address ascending. This
   * and the changes below (boardDelta, veLockDelta) say the block's seal too, read with their rows (RankingSealing).
   */
  board(board: DurationBoard, window: BoardWindow, at: ReadAt): Promise<BoardAnswer>;
  /**
   * What changed on `board` in `window` between block `from` (with its time) and the block read: every account whose
   * value can differ, with its value at the block read (NOT_RANKED when it is off the board). Costs what the accounts of the
   * blocks between and of the window's edges between cost, whatever the board's size (api/read/durationBoards.ts).
   */
  boardDelta(
    board: DurationBoard,
    window: BoardWindow,
    from: { block: bigint; time: bigint },
    at: ReadAt,
  ): Promise<BoardAnswer>;
  /**
   * Every live lock at the block (expired ones too): what the ve ranking of a block near it is derived from
   * (api/read/veRanking.ts). One row per lock; read once per anchor, not per block.
   */
  veLocks(at: ReadAt): Promise<VeLocksAnswer<VeLock>>;
  /**
   * The locks with an event between block `from` (with its time) and the block read, either way, each with its state
   * at the block read: O(the blocks' events), whatever the number of locks.
   */
  veLockDelta(from: { block: bigint; time: bigint }, at: ReadAt): Promise<VeLocksAnswer<LockChange>>;
  /** Up to `limit` indexed events of every contract, newest first, strictly older than `after` when given. */
  activity(
    filter: { kinds: readonly string[] | null; account: Address | null },
    at: ReadAt,
    page: { limit: number; after: EventKey | null; seal?: SealAsk },
    signal?: CancelSignal,
  ): Promise<AtBlock<ActivityRow[]>>;
  /** The first and last blocks with an indexed event that concerns the account, at or below the block. */
  activitySpan(
    account: Address,
    at: ReadAt,
    signal?: CancelSignal,
  ): Promise<AtBlock<{ first: bigint; last: bigint } | null>>;
  /** One event by its transaction and log index (null when the index holds none at or below the block). */
  activityItem(txHash: Hex, logIndex: number, at: ReadAt, signal?: CancelSignal): Promise<AtBlock<ActivityRow | null>>;
}
