/**
 * The index API's JSON answer: the envelope (chainId, the block and its time) and `body`. Caching by block: an answer
 * pinned to a finalized block never changes (a day, immutable); any other (the head, or a block a reorg could still
 * replace) for about one Base block. The ETag names the chain and the block, which with the URL decide the answer.
 */
import type { Context } from "hono";
import type { IndexHead } from "../read/contract";
import type { IndexRuntime } from "../read/runtime";
import type { Envelope } from "../read/shapes";

export function answer<B extends object>(
  c: Context,
  rt: Pick<IndexRuntime, "chainId">,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  body: B,
): Response {
  const final = at.pinned && at.block <= at.head.finalized;
  c.header("cache-control", final ? "public, max-age=86400, immutable" : "public, max-age=2");
  c.header("etag", `W/"${rt.chainId}-${at.block}"`);
  const envelope: Envelope = {
    ok: true,
    chainId: rt.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
  };
  return c.json({ ...envelope, ...body });
}
