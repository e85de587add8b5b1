/**
 * The per-block runtime of the read model: what REST (api/index), GraphQL (api/graphql) and, through them, MCP read
 * the index with. It decides which block a request is answered at, reads there, and says the index's failures in the
 * API's terms; the feature encodes the answer.
 *
 * A request is answered at the index's head unless it names a block (`?block=N`, or the block a cursor carries).
 * A named block must lie between the VeLockNFT's start block and the head; its timestamp comes from the index
 * where it can (api/read/blockClock.ts). Whole-index answers (the ve ranking, the stats, the duration boards) are
 * computed once per block per process (api/read/blockMemo.ts), and once for all replicas where Redis is shared
 * (api/read/sharedAnswers.ts); each one computed is admitted, charged and run in its lane (api/read/computeGate.ts).
 * A request's `minBlock` (api/read/atLeast.ts, set on its context by the feature that parsed it) is honoured by
 * readAtBlock and pinBlock themselves, so every route and field reading through them answers at a block ≥ it.
 */
import type { Context } from "hono";
import type { TtlCache } from "../cache/ttlCache";
import type { CancelSignal, RpcClient } from "../chain/rpc";
import type { AppConfig } from "../config";
import { deadlineRpc, requestDeadline } from "../http/cancellation";
import {
  ApiError,
  BadParamsError,
  IndexBusyError,
  IndexOfAnotherChainError,
  IndexUnavailableError,
} from "../http/errors";
import type { Logger } from "../observability/logger";
import { causeOf, type ThrottledWarn, throttledWarnings } from "../observability/throttle";
import {
  type AtLeastTarget,
  atLeastOf,
  behind,
  chainHeadOf,
  DEFAULT_BOARD_STALE_SECONDS,
  DEFAULT_STALE_SECONDS,
  waitForHead,
} from "./atLeast";
import { BlockClock } from "./blockClock";
import { AboveIndexHeadError, BlockMemo, requireInRange } from "./blockMemo";
import { BranchCheck, type Orphaned } from "./branchCheck";
import { ChainFinality } from "./chainFinality";
import { ComputeAhead } from "./computeAhead";
import { ComputeGate, type ComputeLane, laneSlots } from "./computeGate";
import {
  type AtBlock,
  BlockTimeUnknownError,
  type BoardIndex,
  IndexChainMismatchError,
  type IndexHead,
  IndexNotStartedError,
  IndexPoolBusyError,
  IndexRecoveringError,
  type LockIndex,
  type LockStats,
  type LockStore,
  QueryCancelledError,
  type ReadAt,
} from "./contract";
import { CursorCodec, cursorKey } from "./cursor";
import { DurationBoards, type Purpose } from "./durationBoards";
import { HeadWatch, type WaitOutcome } from "./headWatch";
import { IndexChain } from "./indexChain";
import { type IndexSignalSource, PolledSignal, WatermarkSignal } from "./indexSignal";
import { SourceWatch } from "./indexSource";
import { NotifiedHead } from "./notifiedHead";
import { QuietBlocks, type QuietOutcome } from "./quietBlocks";
import { ReadHealth } from "./readHealth";
import { ReorgLog, replacedFrom } from "./reorgLog";
import { ReplacedBlocks } from "./replacedBlocks";
import { boardCodec, SHARED_TTL_MS, sharedLoad, statsCodec, veDeltaCodec, veLocksCodec } from "./sharedAnswers";
import { SingleFlight } from "./singleFlight";
import { VeBoards, type VeDerivation } from "./veBoard";
import type { IndexWatermarkSource } from "./watermark";

/**
 * The index as a process is given it: the one field of AppDeps for it (api/deps.ts). Each part is null (or absent)
 * when this process has no such index: state then answers source "rpc", the index routes 503 INDEX_UNAVAILABLE.
 */
export type IndexSource = {
  /** Which token ids a user holds (the state route's candidates); null: none configured. */
  locks: LockStore | null;
  /** The index read at any block (/api/index/v1, /graphql); null: none configured. */
  atBlock: LockIndex | null;
  /** How far `locks` is, polled (api/read/watermark.ts); without it every state read asks the index. */
  watermark?: IndexWatermarkSource;
  /** Shares each block's ranking and stats between replicas (Redis, api/read/sharedAnswers.ts); none by default. */
  shared?: TtlCache | null;
  /** One signal per indexed block (api/read/indexSignal.ts); without it the streams poll the head once a second. */
  signal?: IndexSignalSource | null;
  /** The shared per-block ve rankings; default: a fresh one over `atBlock` (tests and benchmarks pass their own). */
  boards?: VeBoards;
  /** Connections of the pool the whole-index statements run on (api/server/indexDatabase.ts); default 2. */
  wholeIndexConnections?: number;
};

/** No index at all: state answers source "rpc", the index routes 503 INDEX_UNAVAILABLE "unconfigured". */
export const NO_INDEX: IndexSource = { locks: null, atBlock: null };

/** What the index's readers run on: the read model, the per-block ve boards and stats, the block clock. */
export type IndexRuntime = {
  index: LockIndex;
  boards: VeBoards;
  /** The official duration boards and the activity feed (docs/design.md, "The official leaderboards"). */
  protocol: BoardIndex;
  /** Each block's duration board rankings, computed once per block and board and window (shared with Redis). */
  durationBoards: DurationBoards;
  stats: BlockMemo<AtBlock<LockStats>>;
  /** Bounds the whole-index computations in flight: a lane for the head, one for past blocks (computeGate.ts). */
  gate: ComputeGate;
  /**
   * Charges the request's client for the `computations` it makes (api/http/requestCost.ts computedBlock each),
   * before they are made: throws RateLimitedError over budget. A no-op where nothing is limited (tests of the bare
   * runtime).
   */
  chargeCompute: (c: Context, computations: number) => Promise<void>;
  clock: BlockClock;
  /** Told each new head: LISTEN/NOTIFY, or one poll per process (api/read/indexSignal.ts); null without an index. */
  signal: IndexSignalSource | null;
  /** Computes each new head's ve board and stats ahead of their first reader while they are read (computeAhead.ts). */
  ahead: ComputeAhead | null;
  /**
   * The head as LISTEN/NOTIFY tells it, where it does: a request for an answer computed once per block that names no
   * block is pinned to it without probing the index (notifiedHead.ts); null without LISTEN.
   */
  notified: NotifiedHead | null;
  /** Told how each request naming no block learnt its head (pinBlock): notified, or probed. */
  onHeadPinned: (how: HeadPinnedBy) => void;
  /** The chain the index is of (the answers' envelope and ETag). */
  chainId: number;
  /** The VeLockNFT's start block: no block before it is in the index. */
  startBlock: bigint;
  /** Asked for a block's timestamp the index does not hold. */
  rpc: RpcClient | null;
  logger: Logger;
  /** The index's failures told at most once a minute (api/observability/throttle.ts), not once per request. */
  warn: ThrottledWarn;
  /** How far the index is, and the requests waiting for it to reach a block (`minBlock`: api/read/headWatch.ts). */
  heads: HeadWatch;
  /** The reads after a `minBlock` wait in flight, shared by the waiters of one request and head (afterWait). */
  afterWait: SingleFlight<unknown>;
  /** The chain's head (eth_blockNumber, shared for a second), or null when it cannot be read. */
  chainHead: () => Promise<bigint | null>;
  /** An answer whose indexed head is older than this (seconds) says `stale: true` (INDEX_STALE_SECONDS). */
  staleSeconds: number;
  /** The same for a leaderboard's answer (INDEX_BOARD_STALE_SECONDS; the reference's 15 minutes). */
  boardStaleSeconds: number;
  /** The streak of failed reads since the last success (/ready: api/read/readHealth.ts). */
  health: ReadHealth;
  /** The page cursors, signed with the deployment's key (api/read/cursor.ts). */
  cursors: CursorCodec;
  /** The reorgs this process heard from its signal (not from a PolledSignal, which runs only while someone waits). */
  reorgs: ReorgLog;
  /**
   * Whether the index's rows are on the chain's canonical branch (api/read/branchCheck.ts): while they are not, every
   * read is refused INDEX_UNAVAILABLE "replaced branch". Null where nothing checks it (no node, a stand-in index).
   */
  branch: BranchCheck | null;
  /**
   * The chain's finalized block as the node says it (api/read/chainFinality.ts): an answer is `immutable` only at or
   * below it (and Ponder's). Null where no node is watched (Ponder's finalized block alone decides).
   */
  finality: ChainFinality | null;
  /**
   * Whether the index is of `chainId` (api/read/indexChain.ts), as its statements last found: while another chain's,
   * every read is refused INDEX_UNAVAILABLE "another chain" and nothing is answered from memory or a notified head.
   */
  chain: IndexChain;
};

export type CreateIndexRuntimeOptions = {
  source: IndexSource;
  config: Pick<AppConfig, "chainId" | "manifest" | "cursorSecret" | "database"> &
    Partial<Pick<AppConfig, "indexStaleSeconds" | "indexBoardStaleSeconds" | "indexCompute">>;
  rpc: RpcClient | null;
  logger: Logger;
  /**
   * Counted once per ve ranking this process computes whole itself: the statement over every lock (a block far from
   * the anchor) or a reader's read of the anchor's live locks (none for one read from Redis).
   */
  onBoardComputed?: () => void;
  /** Called once per ve ranking a reader's block needed derived from the anchor (its changed locks read here). */
  onVeBoardDerived?: () => void;
  /** Called once per read made to set or move the ve board's anchor, in the background (metrics). */
  onVeBoardAnchored?: () => void;
  /** Called once per block whose ve ranking made ahead was taken: the block changed no lock (metrics). */
  onVeBoardTakenAhead?: () => void;
  /** Called once per block whose ve ranking was patched from the one made ahead (its own events changed locks). */
  onVeBoardPatchedAhead?: () => void;
  /** Told how each request naming no block learnt the head it is pinned to (pinBlock; metrics). */
  onHeadPinned?: (how: HeadPinnedBy) => void;
  /** Told each head whose changed locks were taken from an earlier head's (no lock event written), and the check. */
  onQuietBlock?: (outcome: QuietOutcome) => void;
  /** Told how each `minBlock` wait for the index ended. */
  onWait?: (outcome: WaitOutcome) => void;
  /** See IndexRuntime.chargeCompute. */
  chargeCompute?: (c: Context, computations: number) => Promise<void>;
  /** The gate's counts changed, or it refused a computation (the metrics). */
  onGate?: Pick<ConstructorParameters<typeof ComputeGate>[0], "onChange" | "onRefused">;
  /** Counted once per duration board ranking this process computes itself (not one read from Redis). */
  onDurationBoardComputed?: () => void;
  /** Called once per duration board ranking a reader's block needed derived from its anchor (metrics). */
  onDurationBoardDerived?: () => void;
  /** Called once per ranking made to move a duration board's anchor, in the background (metrics). */
  onDurationBoardAnchored?: () => void;
  /** Told each answer computed ahead of its first reader (computeAhead.ts), and each that failed. */
  onAhead?: (name: string, outcome: "ok" | "error") => void;
  /**
   * The node the index's branch is checked against (api/read/branchCheck.ts), through the RPC back-off; none: not
   * checked.
   */
  branchRpc?: RpcClient | null;
  /** Told each change of the branch check's verdict: the orphaned event, or null once the index is canonical again. */
  onBranch?: (orphaned: Orphaned | null) => void;
  /** Told each change of the chain check's verdict: another chain's index found, or null once it is this chain's. */
  onChain?: (other: IndexChainMismatchError | null) => void;
};

/** Stats kept: 64 blocks' and 2 MiB of them (one is ~8 kB: the totals and 53–54 weeks of schedule). */
export const STATS_KEPT = { capacity: 64, maxBytes: 2 * 1024 * 1024, bytesEach: 8 * 1024 } as const;
/**
 * The head's lane waits longer than a past block's. Its computations are at most one per memo per head block — the ve
 * board, the stats, 7 duration boards × 4 windows: 30 (a profile at a new head asks for 8 at once) — and a new head
 * may come while the last one's still run: its queue holds both, so a head reader is never refused for a full queue.
 */
export const HEAD_LANE = { queue: 60, waitMs: 10_000 } as const;

/**
 * One per app, shared by the index routes and GraphQL, so both learn block times into one clock and share each
 * block's ranking. Without a configured index, every read is INDEX_UNAVAILABLE "unconfigured".
 */
export function createIndexRuntime({
  source,
  config,
  rpc,
  logger,
  onBoardComputed,
  onVeBoardDerived,
  onVeBoardAnchored,
  onVeBoardTakenAhead,
  onVeBoardPatchedAhead,
  onHeadPinned,
  onQuietBlock,
  onDurationBoardComputed,
  onDurationBoardDerived,
  onDurationBoardAnchored,
  onWait,
  chargeCompute,
  onGate,
  onAhead,
  branchRpc,
  onBranch,
  onChain,
}: CreateIndexRuntimeOptions) {
  const slots = laneSlots(source.wholeIndexConnections ?? 2);
  const past = config.indexCompute ?? { queue: 8, waitMs: 2_000 };
  const index = source.atBlock;
  // The index's watermark, where the process has one, is the waiters' news (it polls anyway); else one poll of the
  // head that runs only while someone waits.
  const subscribe = source.watermark?.subscribe?.bind(source.watermark);
  // With LISTEN/NOTIFY, a waiter also hears the commit itself, without the poll's up to 250 ms.
  const notified = source.signal ?? null;
  // The head as its commits are notified, with their lock events' write count (notifiedHead.ts); a block that wrote
  // none takes its changed locks from the head before it (quietBlocks.ts), without waiting for the statement.
  const notifiedHead = notified && index ? new NotifiedHead(notified) : null;
  const heads = new HeadWatch({
    onWait,
    ...(subscribe || !index ? {} : { read: async () => (await index.probe(null)).head.block }),
    ...(notified ? { follow: (listener: (head: bigint) => void) => notified.subscribe(listener) } : {}),
    ...(notifiedHead ? { heard: () => notifiedHead.fresh()?.block } : {}),
  });
  subscribe?.((mark) => heads.saw(mark.indexedBlock));
  const base = {
    gate: new ComputeGate({
      head: { slots: slots.head, ...HEAD_LANE },
      past: { slots: slots.past, ...past },
      ...onGate,
    }),
    chargeCompute: chargeCompute ?? (() => Promise.resolve()),
    clock: new BlockClock(),
    chainId: config.chainId,
    startBlock: BigInt(config.manifest.contracts.VeLockNFT?.startBlock ?? 0),
    rpc,
    logger,
    warn: throttledWarnings(logger),
    heads,
    afterWait: new SingleFlight<unknown>(),
    chainHead: chainHeadOf(rpc),
    staleSeconds: config.indexStaleSeconds ?? DEFAULT_STALE_SECONDS,
    boardStaleSeconds: config.indexBoardStaleSeconds ?? DEFAULT_BOARD_STALE_SECONDS,
    health: new ReadHealth(),
    cursors: new CursorCodec(cursorKey(config)),
    reorgs: new ReorgLog(),
    onHeadPinned: onHeadPinned ?? (() => {}),
    chain: new IndexChain((other) => {
      onChain?.(other);
      if (other === null) logger.info("index of this deployment's chain again: index answers served");
    }),
  };
  if (!index) {
    const fail = () => Promise.reject(new IndexUnavailableError("unconfigured"));
    return {
      ...base,
      signal: null,
      ahead: null,
      notified: null,
      branch: null,
      finality: null,
      index: { probe: fail, lock: fail, locksOf: fail, events: fail, holders: fail, stats: fail, changes: fail },
      protocol: {
        board: fail,
        boardDelta: fail,
        veLocks: fail,
        veLockDelta: fail,
        activity: fail,
        activityItem: fail,
        activitySpan: fail,
      },
      stats: new BlockMemo<AtBlock<LockStats>>({ name: "stats", load: fail }),
      boards: new VeBoards({ load: fail }),
      durationBoards: new DurationBoards({ load: fail }),
    } satisfies IndexRuntime;
  }
  // Without LISTEN: the watermark's changes where it is polled anyway (no statement of its own), else a poll of the head.
  const watermark = source.watermark;
  const signal =
    source.signal ??
    (watermark?.subscribe
      ? new WatermarkSignal({ subscribe: (listener) => watermark.subscribe!(listener) }, index.journal?.bind(index))
      : new PolledSignal(async () => (await index.probe(null)).head.block));
  // Another schema behind the views (a re-index, a redeploy) holds other rows under the same block, also of the same
  // build: every answer kept by block is forgotten (api/read/indexSource.ts).
  const sources = new SourceWatch(index.source?.bind(index) ?? null, (from, to) => {
    logger.info("the index moved to another schema: every answer kept by block forgotten", { from, to });
    forgetKept();
    // The signal hears only the schema behind the views: it reads which that is now.
    source.signal?.recheck?.();
  });
  // The build and the schema too: replicas on either side of a views switch hold different rows under the same block.
  const key = async (what: string, at: { block: bigint; time: bigint }) =>
    `${what}:${config.chainId}:${base.clock.lastHead?.build ?? "-"}:${(await sources.key()) ?? "-"}:${at.block}:${at.time}`;
  // A key names a block by number and time, which a reorg's new branch repeats (on Base a height keeps its time): the
  // blocks a reorg replaced are computed here, never read from (or written to) Redis, until every answer shared for
  // them before it has expired (api/read/sharedAnswers.ts: replicas hear the same reorg and do the same).
  const replaced = new ReplacedBlocks(2 * SHARED_TTL_MS);
  // Nor while the schema the rows come from is unknown: its answers could be another schema's under its key.
  const sharedFor = async (...blocks: bigint[]) =>
    source.shared && !blocks.some((block) => replaced.covers(block)) && (await sources.key()) !== null
      ? source.shared
      : null;
  // Only the statement holds a slot: waiting on Redis for another replica's computation does not.
  const gated =
    <T>(lane: ComputeLane, read: () => Promise<T>) =>
    () =>
      base.gate.run(lane, read);
  // A board's anchor moving (no reader waits for it) runs only in a free slot: never ahead of a reader, never refused.
  const boardGated =
    <T>(lane: ComputeLane, purpose: Purpose, read: () => Promise<T>) =>
    () =>
      purpose === "anchor" ? base.gate.whenIdle(lane, read) : base.gate.run(lane, read);
  // An index without the boards' statements (a test's stand-in) answers them as unavailable.
  const unavailable = () => Promise.reject(new IndexUnavailableError("unconfigured"));
  const protocol: BoardIndex =
    "board" in index && "activity" in index
      ? (index as LockIndex & BoardIndex)
      : {
          board: unavailable,
          boardDelta: unavailable,
          veLocks: unavailable,
          veLockDelta: unavailable,
          activity: unavailable,
          activityItem: unavailable,
          activitySpan: unavailable,
        };
  const quiet = notifiedHead
    ? new QuietBlocks({
        told: notifiedHead,
        ...(onQuietBlock ? { onOutcome: onQuietBlock } : {}),
        onDiffered: (block) => {
          boards.forgetFrom(block);
          rt.stats.forgetFrom(block);
        },
      })
    : null;
  const boards =
    source.boards ??
    new VeBoards({
      // A ranking computed whole: a block far from the anchor (an old past block, the client's choice). At Base
      // scale that is ~60,000 holders, a 5 MB answer: through Redis it cost the loop ~20 ms to encode and write for
      // each (more for the replicas decoding it), and a flood of distinct old blocks would keep ~6 of them a second
      // in Redis for the TTL (GBs). Each replica computes its own, within its compute gate.
      load: (at, lane) =>
        gated(lane, () => {
          onBoardComputed?.();
          return index.holders(at);
        })(),
      ...(onVeBoardTakenAhead ? { onTakenAhead: onVeBoardTakenAhead } : {}),
      ...(onVeBoardPatchedAhead ? { onPatchedAhead: onVeBoardPatchedAhead } : {}),
      // Near the anchor (a finalized block's live locks, read once and shared), a block's ranking is made here from
      // the locks changed since: one small statement, shared like a ranking (replicas on the same anchor).
      ...("veLocks" in index
        ? {
            derive: {
              finalized: async () => {
                const { head, finalizedTime } = await index.probe(null);
                return finalizedTime == null || head.finalized <= 0n
                  ? null
                  : { block: head.finalized, time: finalizedTime };
              },
              locks: async (at, lane, purpose) =>
                sharedLoad(
                  await sharedFor(at.block),
                  await key("ve-locks", at),
                  veLocksCodec,
                  boardGated(lane, purpose, () => {
                    (purpose === "anchor" ? onVeBoardAnchored : onBoardComputed)?.();
                    return protocol.veLocks(at);
                  }),
                ),
              delta: (from, at, lane, purpose) => {
                const read = async () =>
                  sharedLoad(
                    await sharedFor(from.block, at.block),
                    await key(`ve-delta-${from.block}-${from.time}`, at),
                    veDeltaCodec,
                    boardGated(lane, purpose, () => {
                      (purpose === "anchor" ? onVeBoardAnchored : onVeBoardDerived)?.();
                      return protocol.veLockDelta(from, at);
                    }),
                  );
                return quiet && purpose === "read" ? quiet.delta(from, at, read) : read();
              },
            } satisfies VeDerivation,
          }
        : {}),
    });
  const rt = {
    ...base,
    index,
    protocol,
    durationBoards: new DurationBoards({
      load: async (board, window, at, lane, purpose) =>
        sharedLoad(
          await sharedFor(at.block),
          await key(`board-${board}-${window}`, at),
          boardCodec,
          boardGated(lane, purpose, () => {
            (purpose === "anchor" ? onDurationBoardAnchored : onDurationBoardComputed)?.();
            return protocol.board(board, window, at);
          }),
        ),
      // A change between two blocks is small and shared like a ranking (replicas deriving from the same anchor).
      delta: async (board, window, from, at, lane, purpose) =>
        sharedLoad(
          await sharedFor(from.block, at.block),
          await key(`board-delta-${board}-${window}-${from.block}-${from.time}`, at),
          boardCodec,
          boardGated(lane, purpose, () => {
            (purpose === "anchor" ? onDurationBoardAnchored : onDurationBoardDerived)?.();
            return protocol.boardDelta(board, window, from, at);
          }),
        ),
    }),
    signal,
    // Only where the index's commits are heard as they happen (LISTEN/NOTIFY on a views schema). Answers are memoised
    // by block number and forgotten on a reorg (forgetOnReorg below); a reorg that is not seen leaves one computed
    // for a replaced block, the likelier the sooner it was computed (docs/limitations.md).
    ahead: source.signal
      ? new ComputeAhead({
          signal,
          head: async () => (await index.probe(null)).head,
          ...(onAhead ? { onAhead } : {}),
        })
      : null,
    notified: notifiedHead,
    branch: watchBranch(index, base, sources, branchRpc ?? null, logger, onBranch),
    finality: watchFinality(branchRpc ?? null),
    stats: new BlockMemo({
      name: "stats",
      capacity: STATS_KEPT.capacity,
      maxBytes: STATS_KEPT.maxBytes,
      sizeOf: () => STATS_KEPT.bytesEach,
      // Near the ve anchor, derived with the block's ve ranking (api/read/veStats.ts: no statement over every lock,
      // ~360 ms of Postgres a block at Base scale); elsewhere (an old block, no anchor yet) the statement, shared.
      load: async (at, lane) => {
        if (boards.nearAnchor(at.block)) {
          const board = await boards.get(at, lane);
          if (board.stats !== null) {
            return { head: board.head, block: board.block, time: board.time, inRange: true, value: board.stats() };
          }
        }
        return requireInRange(
          await sharedLoad(
            await sharedFor(at.block),
            await key("stats", at),
            statsCodec,
            gated(lane, () => index.stats(at)),
          ),
        );
      },
    }),
    boards,
  } satisfies IndexRuntime;
  // The next block's board made between heads: the head's page text and the stats' made of it then
  // (ComputeAhead.madeAhead; the stats' text is kept beside their object, which the taken board answers).
  const ahead = rt.ahead;
  if (ahead) {
    boards.onMadeAhead = (board) => {
      ahead.madeAhead(boards, board);
      if (board.stats === null) return;
      const { head, block, time } = board;
      ahead.madeAhead(rt.stats, { head, block, time, inRange: true, value: board.stats() });
    };
  }
  // The clock too: the heads' times it keeps are by block number (api/read/blockClock.ts).
  forgetOnReorg(signal, [base.clock, rt.stats, rt.boards, rt.durationBoards], rt.reorgs, replaced);
  // Another build's rows under the same block numbers: nothing kept (or derived from what was kept) is its answer.
  base.clock.onBuildChanged = forgetKept;
  function forgetKept() {
    for (const memo of [rt.stats, rt.boards, rt.durationBoards]) memo.forgetAll();
  }
  // The first read at once (the shared keys wait for it); then with each branch check, else on a timer of its own.
  void sources.check();
  if (rt.branch === null) sources.start();
  return rt;
}

/**
 * A reorg is told with a head (`reverted`: Ponder's revert heard over NOTIFY, api/read/indexSignal.ts), or shows as
 * the head going back (the watermark; a lost notification). The memos and the block clock's heads key by block number,
 * so every answer (and head time) kept above the finalized block the revert names is forgotten, also when the new head
 * is at or past the old one (a new branch as long or longer repeats the replaced numbers): a block between it and the
 * first orphaned one held no row of ours on the old branch, but its answer may differ on the new one. A head going
 * back forgets from itself. Heard from a signal that costs no statement of its own (NOTIFY, the watermark); a
 * PolledSignal runs only while someone waits, and is not kept running for this (the clock then forgets its heads when
 * a read finds the head gone back).
 */
function forgetOnReorg(
  signal: IndexSignalSource,
  memos: { forgetFrom(block: bigint): number }[],
  reorgs: ReorgLog,
  replaced: ReplacedBlocks,
): void {
  if (signal instanceof PolledSignal) return;
  let last: bigint | null = null;
  signal.subscribe((block, _time, reverted) => {
    const from = reverted || (last !== null && block < last) ? replacedFrom(block, reverted) : null;
    // Before the memos forget: a read that refills one must not take the replaced branch's answer from Redis.
    if (from !== null) replaced.add(from, last !== null && last > block ? last : block);
    if (from !== null) for (const memo of memos) memo.forgetFrom(from);
    // For the streams resumed later (api/index/streamHub.ts): what the blocks up to the last head may have lost.
    if (from !== null && last !== null) reorgs.heard({ lo: from, from: reverted?.from ?? block, to: last });
    last = block;
  });
}

/** The chain's finalized block read every few seconds, for the process's life; null without a node. */
function watchFinality(rpc: RpcClient | null): ChainFinality | null {
  if (rpc === null) return null;
  const finality = new ChainFinality(rpc);
  finality.start();
  return finality;
}

/**
 * The index's branch checked against the node every few seconds, for the process's life; null where it cannot be.
 * Each change of verdict is one log line: an error with what to do when the index turns out orphaned.
 */
function watchBranch(
  index: LockIndex,
  rt: ChainWatch,
  sources: SourceWatch,
  rpc: RpcClient | null,
  logger: Logger,
  onChange: ((orphaned: Orphaned | null) => void) | undefined,
): BranchCheck | null {
  const finalEvent = index.finalEvent?.bind(index);
  if (!finalEvent || !rpc) return null;
  const branch = new BranchCheck({
    // Its statement says which chain the index is of too, every few seconds, with or without requests (another
    // chain's index fails the check, which then concludes nothing: its events are not this node's to look up).
    // The source after the event: a check that read the new schema's rows has forgotten the old one's answers
    // before its verdict (a replaced branch lifted) lets them be served.
    read: async () => {
      try {
        return await ofChain(rt, finalEvent);
      } finally {
        await sources.check();
      }
    },
    rpc,
    onChange: (orphaned) => {
      onChange?.(orphaned);
      if (orphaned === null) {
        logger.info("index back on the canonical branch: index answers served again");
        return;
      }
      logger.error("index on a replaced branch: a reorg below its finalized block; index answers refused", {
        txHash: orphaned.event.txHash,
        indexBlock: orphaned.event.block.toString(),
        chainBlock: orphaned.receiptBlock?.toString() ?? null,
        indexHead: orphaned.indexHead.toString(),
        indexFinalized: orphaned.finalized.toString(),
        chainHead: orphaned.chainHead.toString(),
        action:
          "stop the indexer, rewind the sync cache (npm run sync-cache:rewind), re-index into a new schema with the same views schema (docs/operations.md, Unrecoverable reorg)",
      });
    },
  });
  branch.start();
  return branch;
}

/**
 * A read of the index, its failures said in the API's terms (never a 500 for a database that is down). An index on a
 * replaced branch is not read: its rows are of blocks the chain no longer has (api/read/branchCheck.ts).
 */
export async function guarded<T>(rt: IndexRuntime, read: () => Promise<T>): Promise<T> {
  refuseReplacedBranch(rt);
  try {
    let value: T;
    try {
      value = await read();
    } catch (error) {
      // A read that Postgres chose as a deadlock's victim (Ponder's view switch, `CREATE OR REPLACE VIEW` in one
      // transaction, takes the views' locks in an order of its own) or aborted as a serialization failure: the
      // statement only reads, so it is read again, once. Its cancel signal still bounds it by the request's deadline.
      if (!RETRIED_CODES.has(pgCodeOf(error) ?? "")) throw error;
      value = await read();
    }
    rt.health.succeeded();
    return value;
  } catch (error) {
    // A cancelled read (its request's deadline or hang-up) is its caller's to report. One its deadline cancelled is
    // also a read the index did not answer in time, so /ready's streak counts it (RPC_TIMEOUT_MS below the statement
    // timeout: every read behind a table lock ends so, and /ready must still say the reads fail); a hang-up is not.
    if (error instanceof QueryCancelledError) {
      if (error.byDeadline) rt.health.failed();
      throw error;
    }
    if (error instanceof ApiError || error instanceof BlockTimeUnknownError) throw error;
    if (error instanceof IndexChainMismatchError) {
      // Not the database failing (no failed read for /ready's streak): the index is there, of another chain.
      foundOtherChain(rt, error);
      throw new IndexOfAnotherChainError(error.indexChainId, error.chainId, { cause: error });
    }
    if (error instanceof IndexNotStartedError) throw new IndexUnavailableError("not started", { cause: error });
    if (error instanceof IndexRecoveringError) throw new IndexUnavailableError("not ready", { cause: error });
    // The views (or their schema) are not there yet: the database answers, the index is not created (/ready says
    // "index missing") — not the database failing, so not a failed read for /ready's streak, and not logged.
    if (MISSING_CODES.has(pgCodeOf(error) ?? "")) throw new IndexUnavailableError("not started", { cause: error });
    if (error instanceof IndexPoolBusyError) {
      // Load, not an outage: the statement found every connection taken for longer than it may wait, and the database
      // was not asked (so no failed read for /ready's streak either). The statements holding the connections say how
      // the database answers.
      throw new IndexBusyError(error.retryAfterSec, error.why, "connections", { cause: error });
    }
    if (error instanceof AboveIndexHeadError) {
      // Not the database failing: the index is behind the head this process was told (a redeploy's views switch).
      // The next head reads probe the index's head until a notification comes again, and the signal reads which
      // schema the views name (it hears only that schema's commits). A head read is read again at the index's head
      // (atIndexHead); what still meets it is refused saying so, not as a database that does not answer.
      rt.notified?.distrust();
      rt.signal?.recheck?.();
      throw new IndexUnavailableError("head went back", { cause: error });
    }
    rt.health.failed();
    rt.warn("index read failed", "lock index read failed", { error: (error as Error).name, cause: causeOf(error) });
    throw new IndexUnavailableError("unreachable", { cause: error });
  }
}

/** What the chain check needs of the runtime: the verdict and the throttled warning. */
type ChainWatch = Pick<IndexRuntime, "chain" | "warn">;

/**
 * A statement read (its rows are read with Ponder's checkpoint, api/read/atBlock.ts): its success says the index is
 * this chain's, its IndexChainMismatchError another's (api/read/indexChain.ts). Only statements: an answer taken
 * from memory says nothing of the index now.
 */
export async function ofChain<T>(rt: ChainWatch, read: () => Promise<T>): Promise<T> {
  try {
    const value = await read();
    rt.chain.sawThis();
    return value;
  } catch (error) {
    if (error instanceof IndexChainMismatchError) foundOtherChain(rt, error);
    throw error;
  }
}

/** Another chain's index found: every index answer refused, and a warning at most once a minute. */
function foundOtherChain(rt: ChainWatch, error: IndexChainMismatchError): void {
  rt.chain.sawOther(error);
  rt.warn("index-other-chain", "the index is of another chain: index answers refused", {
    indexChainId: error.indexChainId,
    chainId: error.chainId,
    action: "point DATABASE_VIEWS_SCHEMA (or DATABASE_SCHEMA) at an index of NETWORK's chain (docs/operations.md)",
  });
}

/** Refuses every answer of an index whose rows are of a replaced branch (api/read/branchCheck.ts). */
function refuseReplacedBranch(rt: IndexRuntime): void {
  if (rt.branch?.orphaned) throw new IndexUnavailableError("replaced branch");
}

/** Postgres errors a read-only statement may simply run again after: deadlock_detected, serialization_failure. */
const RETRIED_CODES = new Set(["40P01", "40001"]);
/** Postgres errors of an index not created: undefined_table, invalid_schema_name. */
const MISSING_CODES = new Set(["42P01", "3F000"]);

/** The SQLSTATE of a Postgres error (pg's DatabaseError), also when wrapped (drizzle's `cause`); else undefined. */
export function pgCodeOf(error: unknown): string | undefined {
  let e = error;
  for (let depth = 0; depth < 4 && typeof e === "object" && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** An answer, where it was read, and whether a block was named (the head otherwise). */
export type Read<T> = AtBlock<T> & { pinned: boolean };

/**
 * One read of the index at the request's block, in one statement: the head when `block` is null, else the named
 * block, whose timestamp the statement takes from the index (the head's, or an event row's of that block) or from
 * what this process already knows (api/read/blockClock.ts). Only when neither knows it is the node asked, and the
 * statement read again with it. `read` is given the request's cancel signal for its statement.
 */
export async function readAtBlock<T>(
  rt: IndexRuntime,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
  read: (at: ReadAt, signal?: CancelSignal) => Promise<AtBlock<T>>,
): Promise<Read<T>> {
  // The request's deadline and its client's hang-up cancel the statement (api/http/cancellation.ts).
  const signal = requestDeadline(c);
  // A reorg heard while this reads: the head it finds may be the replaced branch's (api/read/blockClock.ts).
  const generation = rt.clock.generation;
  if (block !== null) await checkNamed(rt, block, param, signal);
  const target = atLeastTarget(c, block, param);
  const attempt = async (signal: CancelSignal | undefined) => {
    try {
      return await guarded(rt, () => read(block === null ? null : { block, time: rt.clock.cached(block) }, signal));
    } catch (error) {
      if (!(error instanceof BlockTimeUnknownError)) throw error;
      const time = await rt.clock.fromNode(error.block, error.head, deadlineRpc(c, rt.rpc));
      return await guarded(rt, () => read({ block: error.block, time }, signal));
    }
  };
  // Known to be below `minBlock`: no read before the wait (waitsFirst).
  let answer = waitsFirst(rt, target) === null ? await attempt(signal) : null;
  if (answer !== null) {
    rt.chain.sawThis();
    rt.heads.saw(answer.head.block);
  }
  // Behind `minBlock`: wait for the index (news from one shared source), then read once more — once for every waiter
  // of the same request released by the same head (afterWait).
  if (answer === null || (target !== null && answer.head.block < target.block)) {
    const wanted = target as AtLeastTarget; // none is read first only with a target (waitsFirst)
    await waitForIndex(rt, c, wanted, answer?.head.block ?? waitsFirst(rt, wanted) ?? -1n);
    const shared = atLeastOf(c)?.shared;
    answer = await afterWait(rt, c, shared === undefined ? null : `read ${shared} ${param} ${block}`, attempt, signal);
    rt.chain.sawThis();
    rt.heads.saw(answer.head.block);
    if (answer.head.block < wanted.block) throw behind(wanted, answer.head.block, wanted.waitMs, "index");
  }
  rt.clock.sawHead(answer.head, generation);
  if (!answer.inRange) checkRange(rt, answer.head, answer.block, param);
  return { ...answer, pinned: block !== null };
}

/** The requests whose head is probed, not taken as notified: read again after their notified head was above the index. */
const probeHead = new WeakSet<Context>();

/**
 * `read` (pin the request's block, read its answers), and for a head read (`block` null) whose pinned head the index
 * turned out to be below (a redeploy's views switch: the head told was the old schema's), once more pinned to the
 * index's head as a probe reads it — answered there, not refused.
 */
export async function atIndexHead<R>(c: Context, block: bigint | null, read: () => Promise<R>): Promise<R> {
  try {
    return await read();
  } catch (error) {
    if (block !== null || !(error instanceof IndexUnavailableError) || !(error.cause instanceof AboveIndexHeadError)) {
      throw error;
    }
    probeHead.add(c);
    return read();
  }
}

/** How a request naming no block learnt the head it is pinned to: the commit's notification, or a probe. */
export type HeadPinnedBy = "notified" | "probed";

/** A block an answer is pinned to, its timestamp, and the index's head when it was checked. */
export type Pinned = { block: bigint; time: bigint; head: IndexHead; pinned: boolean };

/**
 * The block (and its time) for an answer computed once per block (the ve board, the stats, a GraphQL request): the
 * head's when `block` is null (as notified, while that is fresh: notifiedHead.ts; else probed), else the named
 * block's, checked against the head first. `signal` (by default the request's: its deadline and its client's hang-up)
 * cancels the probe.
 */
export async function pinBlock(
  rt: IndexRuntime,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
  signal: CancelSignal | undefined = requestDeadline(c),
): Promise<Pinned> {
  const generation = rt.clock.generation;
  if (block !== null) await checkNamed(rt, block, param, signal);
  // A head pinned as notified is read by no statement of guarded's, and GraphQL's `_meta` answers with it alone.
  refuseReplacedBranch(rt);
  const target = atLeastTarget(c, block, param);
  if (block === null) {
    const notified = pinNotified(rt, c, target);
    if (notified !== undefined) {
      rt.onHeadPinned("notified");
      return notified;
    }
  }
  const probe = (signal: CancelSignal | undefined) => guarded(rt, () => rt.index.probe(block, signal));
  // Known to be below `minBlock`: no probe before the wait (waitsFirst).
  let probed = waitsFirst(rt, target) === null ? await probe(signal) : null;
  if (probed !== null) {
    rt.chain.sawThis();
    rt.heads.saw(probed.head.block);
  }
  if (probed === null || (target !== null && probed.head.block < target.block)) {
    const wanted = target as AtLeastTarget; // none is probed first only with a target (waitsFirst)
    await waitForIndex(rt, c, wanted, probed?.head.block ?? waitsFirst(rt, wanted) ?? -1n);
    // Released by a commit notified (fresh, at or above minBlock): pinned to it as a head read without minBlock is,
    // no probe after the wait (a statement's round trip, the first reader of its block waiting for it).
    const heard = block === null ? pinNotified(rt, c, wanted) : undefined;
    if (heard !== undefined) {
      rt.onHeadPinned("notified");
      return heard;
    }
    // The probe names no request: every waiter released by the same head shares it, whatever it asked.
    probed = await afterWait(rt, c, `probe ${block}`, probe, signal);
    rt.chain.sawThis();
    rt.heads.saw(probed.head.block);
    if (probed.head.block < wanted.block) throw behind(wanted, probed.head.block, wanted.waitMs, "index");
  }
  const { head, eventTime } = probed;
  rt.clock.sawHead(head, generation);
  if (block === null) {
    rt.onHeadPinned("probed");
    return { block: head.block, time: head.time, head, pinned: false };
  }
  checkRange(rt, head, block, param);
  const time =
    rt.clock.known(block, head, eventTime, generation) ??
    (await rt.clock.fromNode(block, head, deadlineRpc(c, rt.rpc)));
  return { block, time, head, pinned: true };
}

/**
 * The head as its commit was notified, when fresh and at or above `target`: no statement to learn it — once a
 * statement has found the index of this chain (api/read/indexChain.ts); until then, and while it is another chain's,
 * or for a request read again after its notified head was above the index (atIndexHead), undefined: the head is probed
 * (and the probe refused).
 */
function pinNotified(rt: IndexRuntime, c: Context, target: AtLeastTarget | null): Pinned | undefined {
  const notified = rt.chain.confirmed && !probeHead.has(c) ? rt.notified?.fresh() : undefined;
  if (notified === undefined || (target !== null && notified.block < target.block)) return undefined;
  // The finalized block is the last one a statement read (a NOTIFY carries the head's checkpoint alone); it only
  // judges whether a pinned answer is final, and a lower one is safe (a shorter cache lifetime). The build, too.
  const last = rt.clock.lastHead;
  const head: IndexHead = { ...notified, finalized: last?.finalized ?? 0n };
  if (last?.build !== undefined) head.build = last.build;
  rt.heads.saw(head.block);
  rt.clock.sawHead(head);
  return { block: head.block, time: head.time, head, pinned: false };
}

/** The request's `minBlock` as a target to reach (the named block when it is higher), or null without one. */
function atLeastTarget(c: Context, block: bigint | null, param: "block" | "cursor"): AtLeastTarget | null {
  const want = atLeastOf(c);
  if (want === undefined) return null;
  if (want.minBlock > MAX_BLOCK) {
    throw new BadParamsError(`minBlock names block ${want.minBlock}, beyond any block the index can hold.`, {
      param: "minBlock",
    });
  }
  if (block !== null && block < want.minBlock) {
    throw new BadParamsError(
      `${param} names block ${block}, below minBlock ${want.minBlock}: the answer would describe an older block.`,
      { param, minBlock: want.minBlock.toString() },
    );
  }
  return { ...want, block: block ?? want.minBlock, param: block === null ? "minBlock" : param };
}

/**
 * The head the waiters' news says the index is at, when it is below the request's target: the request waits before it
 * reads anything, counted among the waiters (at most 1000: past that 409 at once, no read made), and reads once the
 * head reaches the target. Null — read first — without a target or a wait left, without news yet, when the news is at
 * or above the target, or while the index is of another chain (its read is what refuses). A head a moment old only delays the
 * wait until the next news (the watermark's 250 ms, the index's NOTIFY).
 */
function waitsFirst(rt: IndexRuntime, target: AtLeastTarget | null): bigint | null {
  // A request that may not wait (waitMs 0, or spent) asks the index itself: news a moment old must not refuse it.
  if (target === null || rt.chain.other !== null || target.waitMs - (target.spentMs ?? 0) <= 0) return null;
  const known = rt.heads.latest;
  if (known === null || known >= target.block) return null;
  refuseReplacedBranch(rt);
  return known;
}

/** Which read after the wait this is, of its request: identical requests read in the same order. */
const readsAfterWait = new WeakMap<Context, number>();

/**
 * The read after a wait. The waiters a head releases go on in the same turn and would each read at once, through the
 * pool's 10 connections; so those of the same `key` (the request, its route and parameters; a probe of a block) and
 * the same head share one read, in flight until it settles, made without any one request's cancel signal (bounded by
 * the statement's own timeouts) — each still answers with its own request id, headers and budget. Null `key`: the
 * request's own read.
 */
function afterWait<T>(
  rt: IndexRuntime,
  c: Context,
  key: string | null,
  read: (signal: CancelSignal | undefined) => Promise<T>,
  signal: CancelSignal | undefined,
): Promise<T> {
  if (key === null) return read(signal);
  const nth = (readsAfterWait.get(c) ?? 0) + 1;
  readsAfterWait.set(c, nth);
  const flights = rt.afterWait as SingleFlight<T>;
  return flights.share(`${key} #${nth} @${rt.heads.latest}`, () => read(undefined));
}

/** The index is below the request's target: wait for it (api/read/atLeast.ts waitForHead), then read again. */
function waitForIndex(rt: IndexRuntime, c: Context, target: AtLeastTarget, head: bigint): Promise<void> {
  return waitForHead({ watch: rt.heads, c, target, head, chainHead: rt.chainHead, of: "index" });
}

/** What admission needs of a memo: whether it holds a block, and the name its computations are told apart by. */
export type Admissible = Pick<BlockMemo<unknown>, "has" | "name">;

/**
 * Runs `work` (pin the block, read its answers) for a request that names a block whose whole-index answers this
 * process does not all hold (or compute), once admitted: each answer to compute is one computation of the past lane
 * (the profile's eight rankings are eight), refused at once when the lane has as many as slots and queue (503 busy),
 * else its client charged for each (429 over budget). Before the block is pinned, so a refused request costs no probe
 * of the index and no ask of the node for the block's time. One admission per computation, not per request: the
 * lane's queue holds one statement per admitted key, so its admission bound is what keeps `run` from refusing later.
 */
export async function admitComputation<R>(
  rt: IndexRuntime,
  c: Context,
  memos: Admissible | readonly Admissible[],
  block: bigint | null,
  work: () => Promise<R>,
): Promise<R> {
  if (block === null) return work();
  const missing = ("has" in memos ? [memos] : memos).filter((m) => !m.has(block));
  if (missing.length === 0) return work();
  const admitted: { release: () => void; first: boolean }[] = [];
  try {
    for (const memo of missing) admitted.push(rt.gate.admit("past", `${memo.name}:${block}`));
    // Only the request that makes a computation pays for it; the others of its block share it, as memo.has says.
    const firsts = admitted.filter((a) => a.first).length;
    if (firsts > 0) await rt.chargeCompute(c, firsts);
    return await work();
  } finally {
    for (const a of admitted) a.release();
  }
}

/**
 * A named block's whole-index answer this process already holds, pinned without reading the index: the block is at or
 * below a head the index reported (heads only move forward; a reorg is the memo's business, as for any kept answer),
 * and the answer carries its own block time. Null when the block must be pinned by a probe (not held, or above the
 * newest head seen, or the request has a `minBlock` for pinBlock to judge). So a flood of past blocks already computed
 * takes no connection of the index's pool.
 */
export async function keptAnswer<T extends { block: bigint; time: bigint }>(
  rt: IndexRuntime,
  c: Context,
  memo: Pick<BlockMemo<T>, "kept">,
  block: bigint | null,
): Promise<{ value: T; at: Pinned } | null> {
  const head = rt.clock.lastHead;
  if (block === null || head === null || block > head.block) return null;
  // Another chain's index: nothing from memory either, so the probe says when it is this chain's again.
  if (rt.chain.other !== null) return null;
  // A request with minBlock is judged by pinBlock (a named block below it is 400; one above the head waits).
  if (atLeastOf(c) !== undefined) return null;
  const kept = memo.kept(block);
  if (kept === undefined) return null;
  const value = await guarded(rt, () => kept);
  return { value, at: { block, time: value.time, head, pinned: true } };
}

/**
 * A whole-index answer (the ve board, the stats) at a pinned block: the head's in the head's lane, shared by all its
 * readers; a named block's in the past lane (api/read/computeGate.ts).
 */
export function blockAnswer<T>(rt: IndexRuntime, memo: BlockMemo<T>, at: Pinned): Promise<T> {
  const lane: ComputeLane = at.pinned ? "past" : "head";
  if (!at.pinned) rt.ahead?.readAtHead(memo, at.block);
  return guarded(rt, () => memo.get({ block: at.block, time: at.time }, lane));
}

/**
 * A whole-index answer (the ve board, a duration board) at the request's block: a named block's held answer without
 * a probe (keptAnswer); else admitted and charged when it is a past block to compute (admitComputation), pinned, and
 * computed in its lane (blockAnswer). Every route, field and tool reading a per-block ranking comes here.
 */
export async function answerAt<T extends { block: bigint; time: bigint }>(
  rt: IndexRuntime,
  c: Context,
  memo: BlockMemo<T>,
  block: bigint | null,
  param: "block" | "cursor",
): Promise<{ value: T; at: Pinned }> {
  const kept = await keptAnswer(rt, c, memo, block);
  if (kept) return kept;
  return admitComputation(rt, c, memo, block, () =>
    atIndexHead(c, block, async () => {
      const at = await pinBlock(rt, c, block, param);
      return { value: await blockAnswer(rt, memo, at), at };
    }),
  );
}

/**
 * Several whole-index answers of one request at a pinned block (a profile's rankings), one after another: each waits
 * in its lane only behind other requests' computations, never behind its own siblings, so a request of eight is not
 * refused when its last one has waited out the lane's deadline behind the first seven.
 */
export async function blockAnswers<T>(rt: IndexRuntime, memos: readonly BlockMemo<T>[], at: Pinned): Promise<T[]> {
  const answers: T[] = [];
  for (const memo of memos) answers.push(await blockAnswer(rt, memo, at));
  return answers;
}

/** No chain reaches this block (Postgres bigint): anything above is out of range without asking the index. */
const MAX_BLOCK = 2n ** 63n - 1n;

/**
 * A named block the index cannot answer, refused before any statement names it: beyond any block it can hold (with
 * the index's head as `max`, as a block above the head is refused, at the cost of the probe that one costs too), or
 * before the start block.
 */
async function checkNamed(rt: IndexRuntime, block: bigint, param: string, signal?: CancelSignal): Promise<void> {
  if (block > MAX_BLOCK) {
    const { head } = await guarded(rt, () => rt.index.probe(null, signal));
    throw new BadParamsError(
      `${param} names block ${block}, beyond any block the index can hold; the index answers blocks ${rt.startBlock} to ${head.block}.`,
      { param, min: rt.startBlock.toString(), max: head.block.toString() },
    );
  }
  checkStart(rt, block, param);
}

function checkStart(rt: IndexRuntime, block: bigint, param: string): void {
  const min = rt.startBlock;
  if (block < min) {
    throw new BadParamsError(`${param} names block ${block}, before the lock contract's start block ${min}.`, {
      param,
      min: min.toString(),
    });
  }
}

function checkRange(rt: IndexRuntime, head: IndexHead, block: bigint, param: string): void {
  checkStart(rt, block, param);
  if (block > head.block) {
    throw new BadParamsError(
      `${param} names block ${block}, above the index's head; the index answers blocks ${rt.startBlock} to ${head.block}.`,
      { param, min: rt.startBlock.toString(), max: head.block.toString() },
    );
  }
}

/** `block` and `cursor` together must agree: a cursor pins its list to the block of the first page. */
export function requestedBlock(
  block: bigint | undefined,
  cursorBlock: bigint | undefined,
): {
  block: bigint | null;
  param: "block" | "cursor";
} {
  if (cursorBlock !== undefined && block !== undefined && block !== cursorBlock) {
    throw new BadParamsError("block differs from the block the cursor's list is answered at; omit block.", {
      param: "block",
      cursorBlock: cursorBlock.toString(),
    });
  }
  if (cursorBlock !== undefined) return { block: cursorBlock, param: "cursor" };
  return { block: block ?? null, param: "block" };
}
