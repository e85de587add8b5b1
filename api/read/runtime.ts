/**
 * The per-block runtime of the read model: what REST (api/index), GraphQL (api/graphql) and, through them, MCP read
 * the index with. It decides which block a request is answered at, reads there, and says the index's failures in the
 * API's terms; the feature encodes the answer.
 *
 * A request is answered at the index's head unless it names a block (`?block=N`, or the block a cursor carries).
 * A named block must lie between the VeLockNFT's start block and the head; its timestamp comes from the index
 * where it can (api/read/blockClock.ts). Whole-index answers (the ve ranking, the stats) are computed once per block
 * per process (api/read/blockMemo.ts), and once for all replicas where Redis is shared (api/read/sharedAnswers.ts).
 */
import type { Context } from "hono";
import type { TtlCache } from "../cache/ttlCache";
import type { CancelSignal, RpcClient } from "../chain/rpc";
import type { AppConfig } from "../config";
import { deadlineRpc, requestDeadline } from "../http/cancellation";
import { ApiError, BadParamsError, IndexUnavailableError } from "../http/errors";
import type { Logger } from "../observability/logger";
import { causeOf, type ThrottledWarn, throttledWarnings } from "../observability/throttle";
import { BlockClock } from "./blockClock";
import { BlockMemo, requireInRange } from "./blockMemo";
import {
  type AtBlock,
  BlockTimeUnknownError,
  type IndexHead,
  IndexNotStartedError,
  type LockIndex,
  type LockStats,
  type LockStore,
  QueryCancelledError,
  type ReadAt,
} from "./contract";
import { type IndexSignalSource, PolledSignal } from "./indexSignal";
import { holdersCodec, sharedLoad, statsCodec } from "./sharedAnswers";
import { VeBoards } from "./veBoard";
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
};

/** No index at all: state answers source "rpc", the index routes 503 INDEX_UNAVAILABLE "unconfigured". */
export const NO_INDEX: IndexSource = { locks: null, atBlock: null };

/** What the index's readers run on: the read model, the per-block ve boards and stats, the block clock. */
export type IndexRuntime = {
  index: LockIndex;
  boards: VeBoards;
  stats: BlockMemo<AtBlock<LockStats>>;
  clock: BlockClock;
  /** Told each new head: LISTEN/NOTIFY, or one poll per process (api/read/indexSignal.ts); null without an index. */
  signal: IndexSignalSource | null;
  /** The chain the index is of (the answers' envelope and ETag). */
  chainId: number;
  /** The VeLockNFT's start block: no block before it is in the index. */
  startBlock: bigint;
  /** Asked for a block's timestamp the index does not hold. */
  rpc: RpcClient | null;
  logger: Logger;
  /** The index's failures told at most once a minute (api/observability/throttle.ts), not once per request. */
  warn: ThrottledWarn;
};

export type CreateIndexRuntimeOptions = {
  source: IndexSource;
  config: Pick<AppConfig, "chainId" | "manifest">;
  rpc: RpcClient | null;
  logger: Logger;
  /** Counted once per ve ranking this process computes itself. */
  onBoardComputed?: () => void;
};

/**
 * One per app, shared by the index routes and GraphQL, so both learn block times into one clock and share each
 * block's ranking. Without a configured index, every read is INDEX_UNAVAILABLE "unconfigured".
 */
export function createIndexRuntime({ source, config, rpc, logger, onBoardComputed }: CreateIndexRuntimeOptions) {
  const base = {
    clock: new BlockClock(),
    chainId: config.chainId,
    startBlock: BigInt(config.manifest.contracts.VeLockNFT?.startBlock ?? 0),
    rpc,
    logger,
    warn: throttledWarnings(logger),
  };
  const index = source.atBlock;
  if (!index) {
    const fail = () => Promise.reject(new IndexUnavailableError("unconfigured"));
    return {
      ...base,
      signal: null,
      index: { probe: fail, lock: fail, locksOf: fail, events: fail, holders: fail, stats: fail, changes: fail },
      stats: new BlockMemo({ load: fail }),
      boards: new VeBoards({ load: fail }),
    } satisfies IndexRuntime;
  }
  const key = (what: string, at: { block: bigint; time: bigint }) => `${what}:${config.chainId}:${at.block}:${at.time}`;
  const shared = source.shared ?? null;
  return {
    ...base,
    index,
    signal: source.signal ?? new PolledSignal(async () => (await index.probe(null)).head.block),
    stats: new BlockMemo({
      load: async (at) => requireInRange(await sharedLoad(shared, key("stats", at), statsCodec, () => index.stats(at))),
    }),
    boards:
      source.boards ??
      new VeBoards({
        load: (at) =>
          sharedLoad(shared, key("board", at), holdersCodec, () => {
            onBoardComputed?.();
            return index.holders(at);
          }),
      }),
  } satisfies IndexRuntime;
}

/** A read of the index, its failures said in the API's terms (never a 500 for a database that is down). */
export async function guarded<T>(rt: IndexRuntime, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    // A cancelled read (its request's deadline or hang-up) is its caller's to report, not the index's failure.
    if (error instanceof ApiError || error instanceof BlockTimeUnknownError || error instanceof QueryCancelledError) {
      throw error;
    }
    if (error instanceof IndexNotStartedError) throw new IndexUnavailableError("not started", { cause: error });
    rt.warn("index read failed", "lock index read failed", { error: (error as Error).name, cause: causeOf(error) });
    throw new IndexUnavailableError("unreachable", { cause: error });
  }
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
  if (block !== null) checkStart(rt, block, param);
  // The request's deadline and its client's hang-up cancel the statement (api/http/cancellation.ts).
  const signal = requestDeadline(c);
  let answer: AtBlock<T>;
  try {
    answer = await guarded(rt, () => read(block === null ? null : { block, time: rt.clock.cached(block) }, signal));
  } catch (error) {
    if (!(error instanceof BlockTimeUnknownError)) throw error;
    const time = await rt.clock.fromNode(error.block, error.head, deadlineRpc(c, rt.rpc));
    answer = await guarded(rt, () => read({ block: error.block, time }, signal));
  }
  rt.clock.sawHead(answer.head);
  if (!answer.inRange) checkRange(rt, answer.head, answer.block, param);
  return { ...answer, pinned: block !== null };
}

/** A block an answer is pinned to, its timestamp, and the index's head when it was checked. */
export type Pinned = { block: bigint; time: bigint; head: IndexHead; pinned: boolean };

/**
 * The block (and its time) for an answer computed once per block (the ve board, the stats, a GraphQL request): the
 * head's when `block` is null, else the named block's, checked against the head first. `signal` (by default the
 * request's: its deadline and its client's hang-up) cancels the probe.
 */
export async function pinBlock(
  rt: IndexRuntime,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
  signal: CancelSignal | undefined = requestDeadline(c),
): Promise<Pinned> {
  if (block !== null) checkStart(rt, block, param);
  const { head, eventTime } = await guarded(rt, () => rt.index.probe(block, signal));
  rt.clock.sawHead(head);
  if (block === null) return { block: head.block, time: head.time, head, pinned: false };
  checkRange(rt, head, block, param);
  const time = rt.clock.known(block, head, eventTime) ?? (await rt.clock.fromNode(block, head, deadlineRpc(c, rt.rpc)));
  return { block, time, head, pinned: true };
}

/** No chain reaches this block (Postgres bigint): anything above is out of range without asking the index. */
const MAX_BLOCK = 2n ** 63n - 1n;

function checkStart(rt: IndexRuntime, block: bigint, param: string): void {
  const min = rt.startBlock;
  if (block > MAX_BLOCK) {
    throw new BadParamsError(`${param} names block ${block}, beyond any block the index can hold.`, {
      param,
      min: min.toString(),
    });
  }
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
