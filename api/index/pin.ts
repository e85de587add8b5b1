/**
 * The steps every index route shares, in the house order (parse → read → encode): which block a request is
 * answered at, the index's failures as the API's errors, and the envelope with its caching headers.
 *
 * A request is answered at the index's head unless it names a block (`?block=N`, or the block a cursor carries).
 * A named block must lie between the VeLockNFT's start block and the head; its timestamp comes from the index
 * where it can (api/index/blockClock.ts).
 */
import type { Context } from "hono";
import type { CancelSignal } from "../chain/rpc";
import type { AppDeps } from "../deps";
import { ifNoneMatchHits } from "../http/conditional";
import { deadlineRpc } from "../http/deadline";
import { ApiError, BadParamsError, IndexUnavailableError } from "../http/errors";
import {
  type AtBlock,
  BlockTimeUnknownError,
  type IndexHead,
  IndexNotStartedError,
  type LockIndex,
  type LockStats,
  type ReadAt,
} from "../locks/atBlock";
import { QueryCancelledError } from "../locks/cancellableQuery";
import type { BlockClock } from "./blockClock";
import type { BlockMemo } from "./blockMemo";
import type { Envelope } from "./shapes";
import type { VeBoards } from "./veBoard";

/** What the index routes run on: the read model, the per-block ve boards and stats, the block clock. */
export type IndexRuntime = {
  index: LockIndex;
  boards: VeBoards;
  stats: BlockMemo<AtBlock<LockStats>>;
  clock: BlockClock;
};

/** A read of the index, its failures said in the API's terms (never a 500 for a database that is down). */
export async function guarded<T>(deps: AppDeps, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    // A cancelled read (its request's deadline or hang-up) is its caller's to report, not the index's failure.
    if (error instanceof ApiError || error instanceof BlockTimeUnknownError || error instanceof QueryCancelledError) {
      throw error;
    }
    if (error instanceof IndexNotStartedError) throw new IndexUnavailableError("not started", { cause: error });
    deps.logger.warn("lock index read failed", { error: (error as Error).name, message: (error as Error).message });
    throw new IndexUnavailableError("unreachable", { cause: error });
  }
}

/** The VeLockNFT's start block: no block before it is in the index. */
export const startBlockOf = (deps: AppDeps) => BigInt(deps.config.manifest.contracts.VeLockNFT?.startBlock ?? 0);

/** An answer, where it was read, and whether a block was named (the head otherwise). */
export type Read<T> = AtBlock<T> & { pinned: boolean };

/**
 * One read of the index at the request's block, in one statement: the head when `block` is null, else the named
 * block, whose timestamp the statement takes from the index (the head's, or an event row's of that block) or from
 * what this process already knows (api/index/blockClock.ts). Only when neither knows it is the node asked, and the
 * statement read again with it.
 */
export async function readAtBlock<T>(
  rt: IndexRuntime,
  deps: AppDeps,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
  read: (at: ReadAt) => Promise<AtBlock<T>>,
): Promise<Read<T>> {
  if (block !== null) checkStart(deps, block, param);
  let answer: AtBlock<T>;
  try {
    answer = await guarded(deps, () => read(block === null ? null : { block, time: rt.clock.cached(block) }));
  } catch (error) {
    if (!(error instanceof BlockTimeUnknownError)) throw error;
    const time = await rt.clock.fromNode(error.block, error.head, deadlineRpc(c, deps.rpc));
    answer = await guarded(deps, () => read({ block: error.block, time }));
  }
  rt.clock.sawHead(answer.head);
  if (!answer.inRange) checkRange(deps, answer.head, answer.block, param);
  return { ...answer, pinned: block !== null };
}

/** A block an answer is pinned to, its timestamp, and the index's head when it was checked. */
export type Pinned = { block: bigint; time: bigint; head: IndexHead; pinned: boolean };

/**
 * The block (and its time) for an answer computed once per block (the ve board, the stats, a GraphQL request): the
 * head's when `block` is null, else the named block's, checked against the head first. `signal` cancels the probe.
 */
export async function pinBlock(
  rt: IndexRuntime,
  deps: AppDeps,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
  signal?: CancelSignal,
): Promise<Pinned> {
  if (block !== null) checkStart(deps, block, param);
  const { head, eventTime } = await guarded(deps, () => rt.index.probe(block, signal));
  rt.clock.sawHead(head);
  if (block === null) return { block: head.block, time: head.time, head, pinned: false };
  checkRange(deps, head, block, param);
  const time =
    rt.clock.known(block, head, eventTime) ?? (await rt.clock.fromNode(block, head, deadlineRpc(c, deps.rpc)));
  return { block, time, head, pinned: true };
}

/** No chain reaches this block (Postgres bigint): anything above is out of range without asking the index. */
const MAX_BLOCK = 2n ** 63n - 1n;

function checkStart(deps: AppDeps, block: bigint, param: string): void {
  const min = startBlockOf(deps);
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

function checkRange(deps: AppDeps, head: IndexHead, block: bigint, param: string): void {
  checkStart(deps, block, param);
  if (block > head.block) {
    const min = startBlockOf(deps);
    throw new BadParamsError(
      `${param} names block ${block}, above the index's head; the index answers blocks ${min} to ${head.block}.`,
      { param, min: min.toString(), max: head.block.toString() },
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

/**
 * The JSON answer: the envelope (chainId, the block and its time) and `body`. Caching by block: an answer pinned to
 * a finalized block never changes (a day, immutable); any other (the head, or a block a reorg could still replace)
 * for about one Base block. The ETag names the chain and the block, which with the URL decide the answer; a request
 * whose If-None-Match names it gets 304 with the same caching headers and no body (RFC 9110 §13.1.2, §15.4.5).
 * Judged here, once the answer would be a 200: a refused request is refused whatever its validators (§13.2.1).
 */
const JSON_TYPE = { "content-type": "application/json" };

export function answer<B extends object>(
  c: Context,
  deps: AppDeps,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  body: B,
): Response {
  const final = at.pinned && at.block <= at.head.finalized;
  c.header("cache-control", final ? "public, max-age=86400, immutable" : "public, max-age=2");
  const etag = `W/"${deps.config.chainId}-${at.block}"`;
  c.header("etag", etag);
  // The 200's media type, not none: @hono/node-server would write text/plain on a bodiless answer, and a cache
  // refreshes its stored headers from a 304's (RFC 9111 §4.3.4).
  if (ifNoneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304, JSON_TYPE);
  const envelope: Envelope = {
    ok: true,
    chainId: deps.config.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
  };
  return c.json({ ...envelope, ...body });
}
