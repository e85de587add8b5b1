/**
 * "At least block N" (issue 32): `minBlock` with `waitMs` on the index routes and the state route, `block:
 * { number_gte }` in GraphQL. The answer describes a block ≥ N; a source (the index, or the node for the state route)
 * that is not there yet is waited for up to `waitMs` — on one shared source of news (api/read/headWatch.ts), the
 * request's deadline pushed out by as much — and then the answer is 409 INDEX_BEHIND with the source's head and a
 * retry time. N more than MIN_BLOCK_AHEAD beyond the chain's head is a 400: no wait can reach it (the chain's head is
 * asked only for an N that far beyond the source's own).
 */
import type { Context } from "hono";
import type { RpcClient } from "../chain/rpc";
import { extendDeadline, requestDeadline } from "../http/cancellation";
import type { AppContext, AppVariables } from "../http/env";
import { BadParamsError, IndexBehindError } from "../http/errors";
import { type ParamDoc, parseQuery } from "../http/params";
import type { HeadWatch } from "./headWatch";

/** The request's `minBlock` and `waitMs`: set on its context by the feature that parsed them. */
export type AtLeast = AppVariables["atLeast"];
/** What must be reached: `block` (the request's named block when above minBlock), and the parameter that named it. */
export type AtLeastTarget = AtLeast & { block: bigint; param: string };

/** The longest a request may wait for its `minBlock` (the `waitMs` parameter's maximum). */
export const MAX_WAIT_MS = 10_000;
/**
 * How far beyond the chain's head `minBlock` may be and still be waited for: 5 blocks, 10 s of Base's 2 s blocks —
 * the longest wait — for a client that took its block from a node a little ahead of ours. Beyond: 400.
 */
export const MIN_BLOCK_AHEAD = 5n;
/** Base's block time, for the retry hint of a 409 INDEX_BEHIND. */
const BLOCK_SECONDS = 2n;
/** INDEX_STALE_SECONDS's default: the reference front end's warning threshold. */
export const DEFAULT_STALE_SECONDS = 180;
/** INDEX_BOARD_STALE_SECONDS's default: the reference labels a leaderboard stale past 15 minutes (protocol.md §9). */
export const DEFAULT_BOARD_STALE_SECONDS = 900;

export const MIN_BLOCK_PARAM = {
  kind: "uint256",
  description:
    "Answer at this block or later (The Graph's `number_gte`): a client that saw its transaction mined in block N " +
    "asks for an answer that includes it. If the index has not reached N, the request waits up to `waitMs` for it, " +
    "then answers 409 INDEX_BEHIND with the index's head and `retryAfterSec`. More than 5 blocks beyond the chain's " +
    "head is 400, as is a `block` (or a cursor's block) below it.",
} as const satisfies ParamDoc;

export const WAIT_MS_PARAM = {
  kind: "uint256",
  min: 0n,
  max: BigInt(MAX_WAIT_MS),
  default: "0",
  description:
    "With `minBlock`: how long to wait (milliseconds, 0 to 10000) for it to be reached before answering 409 " +
    "INDEX_BEHIND. The request's deadline is extended by as much.",
} as const satisfies ParamDoc;

/**
 * The request's `minBlock` and `waitMs`, parsed by the same declarations its route parses them with; undefined
 * without `minBlock`. `waitMs` alone is a 400: it waits for nothing.
 */
export function parseAtLeast(url: string): AtLeast | undefined {
  // Neither parameter's name in the URL, nor a percent-escape that could spell one: nothing to parse (most requests).
  if (!url.includes("minBlock") && !url.includes("waitMs") && !url.includes("%")) return undefined;
  const search = new URL(url, "http://x").searchParams;
  if (!search.has("minBlock") && !search.has("waitMs")) return undefined;
  const own = new URLSearchParams();
  for (const name of ["minBlock", "waitMs"]) for (const v of search.getAll(name)) own.append(name, v);
  const q = parseQuery(`?${own}`, { minBlock: MIN_BLOCK_PARAM, waitMs: WAIT_MS_PARAM });
  if (q.minBlock === undefined) {
    throw new BadParamsError("waitMs is only taken with minBlock (the block to wait for).", { param: "waitMs" });
  }
  return { minBlock: q.minBlock, waitMs: Number(q.waitMs) };
}

/**
 * A REST request as the waiters released by the same head share its read (api/read/runtime.ts): its path and its
 * parameters, sorted, without `waitMs` (which changes how long it waits, not what it reads).
 */
export function sharedRequestKey(url: string): string {
  const parsed = new URL(url, "http://x");
  parsed.searchParams.delete("waitMs");
  parsed.searchParams.sort();
  return `${parsed.pathname}?${parsed.searchParams}`;
}

/** The request's `minBlock`, if it set one. */
export function atLeastOf(c: Context): AtLeast | undefined {
  return (c as AppContext).get("atLeast");
}

/** How long to wait before asking again, for a head `blocks` short: Base's block time each, 1 to 60 s. */
export function retryAfterSec(blocks: bigint): number {
  const s = blocks * BLOCK_SECONDS;
  return Number(s < 1n ? 1n : s > 60n ? 60n : s);
}

/** The 409: `of` (the index, or the node) is at `head`, below the target. */
export function behind(target: { block: bigint }, head: bigint | null, waitedMs: number, of: "index" | "node") {
  return new IndexBehindError(
    { minBlock: target.block.toString(), head: head === null ? null : head.toString(), of, waitedMs },
    retryAfterSec(head === null ? 1n : target.block - head),
  );
}

/**
 * The source is at `head`, below the target: a target more than MIN_BLOCK_AHEAD beyond the chain's head is 400;
 * else the request waits up to its waitMs on `watch`, its deadline pushed out by as much; not reached (time up, too
 * many waiting, the request cancelled): 409.
 */
export async function waitForHead(o: {
  watch: HeadWatch;
  c: Context;
  target: AtLeastTarget;
  head: bigint;
  chainHead: () => Promise<bigint | null>;
  of: "index" | "node";
}): Promise<void> {
  const { watch, c, target } = o;
  // Past the cap: 409 at once, before the chain's head is asked.
  if (watch.refusesNew()) throw behind(target, watch.latest ?? o.head, 0, o.of);
  // The head read before any wait, reported before the node is asked: news while it answers (a commit) is newer.
  watch.saw(o.head);
  // Within MIN_BLOCK_AHEAD of the source's own head, the target is within as much of the chain's (the source has
  // seen that far; a node behind it lags, which makes no block unreachable): the node is not asked. That is the
  // common wait — a client that saw block N come just before the index's commit of it — and the node's round trip
  // (tens of ms to a hosted node) was then the longest part of it, after the commit was heard.
  const near = target.block <= o.head + MIN_BLOCK_AHEAD;
  const chain = o.of === "node" ? o.head : near ? null : await o.chainHead();
  if (chain !== null && target.block > chain + MIN_BLOCK_AHEAD) {
    throw new BadParamsError(
      `${target.param} names block ${target.block}, more than ${MIN_BLOCK_AHEAD} blocks beyond the chain's head ` +
        `(block ${chain}).`,
      { param: target.param, chainHead: chain.toString(), maxAhead: Number(MIN_BLOCK_AHEAD) },
    );
  }
  // What is left of the client's waitMs: a GraphQL request may have spent some waiting on an identical one's execution.
  const leftMs = Math.max(0, Math.round(target.waitMs - (target.spentMs ?? 0)));
  extendDeadline(c as AppContext, leftMs);
  const outcome = await watch.wait(target.block, leftMs, requestDeadline(c as AppContext));
  if (outcome !== "reached") {
    throw behind(target, watch.latest ?? o.head, outcome === "full" ? 0 : target.waitMs, o.of);
  }
}

/** eth_blockNumber, one call in flight and its answer kept for a second; null without a node or when it fails. */
export function chainHeadOf(rpc: RpcClient | null): () => Promise<bigint | null> {
  let kept: { at: number; head: Promise<bigint | null> } | undefined;
  return () => {
    if (!rpc) return Promise.resolve(null);
    if (kept && performance.now() - kept.at < 1_000) return kept.head;
    const head = rpc
      .request({ method: "eth_blockNumber", params: [] })
      .then((raw) => (typeof raw === "string" && /^0x[0-9a-f]{1,16}$/.test(raw) ? BigInt(raw) : null))
      .catch(() => null);
    kept = { at: performance.now(), head };
    return head;
  };
}
