/**
 * The steps every index route shares, in the house order (parse → read → encode): which block a request is
 * answered at, the index's failures as the API's errors, and the envelope with its caching headers.
 *
 * A request is answered at the index's head unless it names a block (`?block=N`, or the block a cursor carries).
 * A named block must lie between the VeLockNFT's start block and the head; its timestamp comes from the index
 * where it can (api/index/blockClock.ts).
 */
import type { Context } from "hono";
import type { AppDeps } from "../deps";
import { deadlineRpc } from "../http/deadline";
import { ApiError, BadParamsError, IndexUnavailableError } from "../http/errors";
import { type AtBlock, type IndexHead, IndexNotStartedError, type LockIndex, type ReadAt } from "../locks/atBlock";
import type { BlockClock } from "./blockClock";
import type { Envelope } from "./shapes";
import type { VeBoards } from "./veBoard";

/** What the index routes run on: the read model, the shared ve boards, the block clock. */
export type IndexRuntime = { index: LockIndex; boards: VeBoards; clock: BlockClock };

/** A read of the index, its failures said in the API's terms (never a 500 for a database that is down). */
export async function guarded<T>(deps: AppDeps, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof IndexNotStartedError) throw new IndexUnavailableError("not started", { cause: error });
    deps.logger.warn("lock index read failed", { error: (error as Error).name, message: (error as Error).message });
    throw new IndexUnavailableError("unreachable", { cause: error });
  }
}

/** The VeLockNFT's start block: no block before it is in the index. */
export const startBlockOf = (deps: AppDeps) => BigInt(deps.config.manifest.contracts.VeLockNFT?.startBlock ?? 0);

/** A block an answer is pinned to, its timestamp, and the index's head when it was checked. */
export type Pinned = { block: bigint; time: bigint; head: IndexHead };

/**
 * The block a request reads at: null for the head (read in the answer's own statement), else the named block and
 * its timestamp. `param` names what named it, for the error.
 */
export async function pinBlock(
  rt: IndexRuntime,
  deps: AppDeps,
  c: Context,
  block: bigint | null,
  param: "block" | "cursor",
): Promise<Pinned | null> {
  if (block === null) return null;
  const { head, eventTime } = await guarded(deps, () => rt.index.probe(block));
  checkRange(deps, head, block, param);
  const time =
    rt.clock.known(block, head, eventTime) ?? (await rt.clock.fromNode(block, head, deadlineRpc(c, deps.rpc)));
  return { block, time, head };
}

/** The head itself as a pinned block (the board is computed per block, so it needs the block first). */
export async function pinHead(rt: IndexRuntime, deps: AppDeps): Promise<Pinned> {
  const { head } = await guarded(deps, () => rt.index.probe(null));
  rt.clock.sawHead(head);
  return { block: head.block, time: head.time, head };
}

/** The read position of a pin: ReadAt without the head. */
export const readAt = (pinned: Pinned | null): ReadAt =>
  pinned === null ? null : { block: pinned.block, time: pinned.time };

function checkRange(deps: AppDeps, head: IndexHead, block: bigint, param: string): void {
  const min = startBlockOf(deps);
  if (block > head.block || block < min) {
    const where = block > head.block ? "above the index's head" : "before the lock contract's start block";
    throw new BadParamsError(
      `${param} names block ${block}, ${where}; the index answers blocks ${min} to ${head.block}.`,
      {
        param,
        min: min.toString(),
        max: head.block.toString(),
      },
    );
  }
}

/**
 * An answer read at a named block must still be in range (a reorg can move the head back between two reads); its
 * head is remembered, so a cursor pinned to it later finds its timestamp without asking the node.
 */
export function inRange<T>(rt: IndexRuntime, deps: AppDeps, answer: AtBlock<T>, param: "block" | "cursor"): AtBlock<T> {
  rt.clock.sawHead(answer.head);
  if (!answer.inRange) checkRange(deps, answer.head, answer.block, param);
  return answer;
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
 * for about one Base block. The ETag names the chain and the block, which with the URL decide the answer.
 */
export function answer<B extends object>(
  c: Context,
  deps: AppDeps,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  body: B,
): Response {
  const final = at.pinned && at.block <= at.head.finalized;
  c.header("cache-control", final ? "public, max-age=86400, immutable" : "public, max-age=2");
  c.header("etag", `W/"${deps.config.chainId}-${at.block}"`);
  const envelope: Envelope = {
    ok: true,
    chainId: deps.config.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
  };
  return c.json({ ...envelope, ...body });
}
