/**
 * The index API's JSON answer: the envelope (chainId, the block and its time) and `body`. Caching by block: an answer
 * pinned to a finalized block never changes (a day, immutable); any other (the head, or a block a reorg could still
 * replace) for about one Base block. The ETag names the chain and the block, which with the URL decide the answer; a
 * request whose If-None-Match names it gets 304 with the same caching headers and no body (RFC 9110 §13.1.2,
 * §15.4.5). Judged here, once the answer would be a 200: a refused request is refused whatever its validators
 * (§13.2.1).
 *
 * `indexLagSeconds` and `stale` (how far the index's head is behind the wall clock) are computed here, when the
 * answer is sent, and are not part of what the ETag names: they describe the moment of the answer, not the block.
 * So a 304 stays right (the block's figures did not change), and an answer a cache keeps says its lag as of when it
 * was sent — at most `max-age` (2 s) older for the head's answers; an immutable past block's answer read from a
 * cache carries the lag of its first sending, so read the lag from a fresh answer (or GraphQL `_meta`).
 */
import type { Context } from "hono";
import { ifNoneMatchHits } from "../http/conditional";
import type { IndexHead } from "../read/contract";
import type { IndexRuntime } from "../read/runtime";
import { type Envelope, freshness } from "../read/shapes";

const JSON_TYPE = { "content-type": "application/json" };

export function answer<B extends object>(
  c: Context,
  rt: Pick<IndexRuntime, "chainId" | "staleSeconds">,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  body: B,
): Response {
  const final = at.pinned && at.block <= at.head.finalized;
  c.header("cache-control", final ? "public, max-age=86400, immutable" : "public, max-age=2");
  const etag = `W/"${rt.chainId}-${at.block}"`;
  c.header("etag", etag);
  // The 200's media type, not none: @hono/node-server would write text/plain on a bodiless answer, and a cache
  // refreshes its stored headers from a 304's (RFC 9111 §4.3.4).
  if (ifNoneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304, JSON_TYPE);
  const envelope: Envelope = {
    ok: true,
    chainId: rt.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
    ...freshness(at.head.time, rt.staleSeconds),
  };
  return c.json({ ...envelope, ...body });
}
