/**
 * The index API's JSON answer: the envelope (chainId, the block and its time) and `body`. Caching by block: an answer
 * pinned to a finalized block never changes (a day, immutable) — finalized by Ponder and by the chain itself, where the
 * node is watched (api/read/chainFinality.ts); any other (the head, or a block a reorg could still replace) for about
 * one Base block. The ETag names the chain, the block and a digest of what the answer says of it
 * (its body, the block's time and the index's build): a request whose If-None-Match names it gets 304 with the same
 * caching headers and no body (RFC 9110 §13.1.2, §15.4.5). The block alone did not decide the answer: a reorg replaces a block under the
 * same number, a redeployed index may write other rows, and a 304 confirmed the orphan's body to every cache that
 * revalidated. Judged here, once the answer would be a 200: a refused request is refused whatever its validators
 * (§13.2.1).
 *
 * `indexLagSeconds` and `stale` (how far the index's head is behind the wall clock) are computed here, when the
 * answer is sent, and are not part of what the ETag names: they describe the moment of the answer, not the block.
 * So a 304 stays right (the block's figures did not change), and an answer a cache keeps says its lag as of when it
 * was sent — at most `max-age` (2 s) older for the head's answers; an immutable past block's answer read from a
 * cache carries the lag of its first sending, so read the lag from a fresh answer (or GraphQL `_meta`).
 */
import { createHash, hash } from "node:crypto";
import { BoundedMap } from "../cache/boundedMap";
import { type AnswerTurns, LARGE_ANSWER_BYTES, LARGE_PAGE_ROWS } from "../http/answerTurns";
import { requestDeadline } from "../http/cancellation";
import { ifNoneMatchHits } from "../http/conditional";
import { respond } from "../http/edge";
import type { AppContext } from "../http/env";
import { requestHeader } from "../http/requestHeader";
import type { Admission } from "../read/admission";
import { finalUpTo } from "../read/chainFinality";
import { type BoardSeal, type IndexHead, QueryCancelledError } from "../read/contract";
import type { IndexRuntime } from "../read/runtime";
import { type Envelope, freshness } from "../read/shapes";

/**
 * The runtime as a leaderboard's answers read it (the ve board, the duration boards, their rank lookups): `stale` past
 * `boardStaleSeconds` (INDEX_BOARD_STALE_SECONDS, default 900), as the reference labels a board stale past 15 minutes
 * and any other answer past 180 s (protocol.md §9). Made once, where a board's handlers are.
 */
export function boardAnswers(
  rt: Pick<IndexRuntime, "chainId" | "staleSeconds" | "boardStaleSeconds" | "finality">,
): Pick<IndexRuntime, "chainId" | "staleSeconds" | "finality"> {
  return { chainId: rt.chainId, staleSeconds: rt.boardStaleSeconds, finality: rt.finality };
}

/**
 * Built with respond() (api/http/edge.ts): its headers, the edge's and the RateLimit fields go out as one plain
 * object, never a WHATWG Headers (the index routes are registered as owning their edge headers: api/index/router.ts).
 * The body's members follow the envelope's (no route's body names an envelope field).
 */
export function answer<B extends object>(
  c: AppContext,
  rt: Pick<IndexRuntime, "chainId" | "staleSeconds" | "finality">,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  body: B,
): Response {
  return answerFields(c, rt, at, () => membersOf(body));
}

/**
 * `answer` for a body given as its JSON members (an object's JSON text without its braces, "" for none), asked for
 * once the answer is known not to be refused (a 304 is judged on them): the same bytes as answer() with that body.
 * For a body kept as text per block
 * (keptFields).
 */
export function answerFields(
  c: AppContext,
  rt: Pick<IndexRuntime, "chainId" | "staleSeconds" | "finality">,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  fields: () => string,
): Response {
  const final = at.pinned && at.block <= finalUpTo(at.head.finalized, rt.finality);
  const members = fields();
  const etag = `W/"${rt.chainId}-${at.block}-${digest(at.head.build, at.time, members)}"`;
  // The 200's media type on the 304 too, not none: @hono/node-server would write text/plain on a bodiless answer,
  // and a cache refreshes its stored headers from a 304's (RFC 9111 §4.3.4).
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "cache-control": final ? "public, max-age=86400, immutable" : "public, max-age=2",
    etag,
  };
  if (ifNoneMatchHits(requestHeader(c, "if-none-match"), etag)) return respond(c, null, 304, headers);
  const envelope: Envelope = {
    ok: true,
    chainId: rt.chainId,
    blockNumber: at.block.toString(),
    blockTimestamp: at.time.toString(),
    ...freshness(at.head.time, rt.staleSeconds),
  };
  const text = JSON.stringify(envelope);
  return respond(c, members === "" ? text : `${text.slice(0, -1)},${members}}`, 200, headers);
}

/**
 * What an answer says of its block, in 16 characters: SHA-1 (fast, built in; not a defence against forgery, which a
 * validator needs none of) of the index's build (Ponder's build id as the statement read it, api/read/atBlock.ts: a
 * redeploy's answers are revalidated once), the block's time and the body's members, 96 bits of it, so two bodies of
 * one URL never share a tag by chance. A large body kept as text (keptFields: a board page polled at the head, ~14 µs
 * to hash at 18 kB) has its digest kept beside it: the same text instance is found again at the cost of a pointer.
 */
function digest(build: string | undefined, time: bigint, members: string): string {
  const memo = members.length >= DIGEST_MEMO.minChars && members.length <= KEPT_FIELDS.maxChars;
  const kept = memo ? digests.get(members) : undefined;
  if (kept !== undefined && kept.build === build && kept.time === time) return kept.digest;
  const prefix = `${build ?? ""}:${time}:`;
  // A small body in one call over one string (crypto.hash): the same SHA-1 of the same bytes as a Hash object fed in
  // two parts, at about half the cost of making that object per answer (a lock's or a rank's, issue 33). A large one
  // is fed in parts: joining it to the prefix would copy it first.
  const made = (
    members.length <= ONE_SHOT_CHARS
      ? hash("sha1", prefix + members, "base64url")
      : createHash("sha1").update(prefix).update(members).digest("base64url")
  ).slice(0, 16);
  if (memo) digests.set(members, { build, time, digest: made });
  return made;
}

/** The largest body hashed in one call (digest): copying it onto the prefix costs less than a Hash object below it. */
const ONE_SHOT_CHARS = 16 * 1024;

/**
 * The digests kept: of bodies from 1 kB (a smaller one hashes in about a microsecond) up to KEPT_FIELDS.maxChars, at
 * most 128 (the head's kept pages), so at most 8 MiB of texts are held here past their owners.
 */
const DIGEST_MEMO = { minChars: 1024, entries: 128 } as const;
const digests = new BoundedMap<string, { build: string | undefined; time: bigint; digest: string }>(
  DIGEST_MEMO.entries,
  "recency",
);

/** An object's JSON members: its JSON text without the braces ("" for an object with none). */
export function membersOf(body: object): string {
  return JSON.stringify(body).slice(1, -1);
}

const textOf = (body: object | string): string => (typeof body === "string" ? body : membersOf(body));

/**
 * A board page's members: `rows` (its members up to its next cursor, kept and made ahead: keptFields), then the next
 * cursor, which carries the ranking's seal or carried basis (api/read/cursorSeal.ts), kept beside the
 * same owner under its seal too: a poller of the head's page is answered the same text instance each time.
 */
export function withNextCursor(
  scope: object,
  owner: object,
  key: string,
  rows: string,
  seal: BoardSeal | null,
  cursor: () => string,
): string {
  const sealKey =
    seal === null
      ? "final"
      : "basis" in seal
        ? `${seal.basis}:${seal.lines}:${seal.seal?.from}:${seal.seal?.digest}`
        : `${seal.from}:${seal.digest}`;
  return keptFields(scope, owner, `${key}:${sealKey}`, () => `${rows},"nextCursor":${JSON.stringify(cursor())}`);
}

/** How many bodies keptFields keeps per owner, and the largest it keeps (its text's length: JSON here is ASCII). */
export const KEPT_FIELDS = { perOwner: 8, maxChars: 64 * 1024 } as const;

const kept = new WeakMap<object, WeakMap<object, BoundedMap<string, string>>>();

/**
 * The JSON members of `body()` made once for `owner` — a value computed once per block and shared (a block's ve
 * board, its stats) — under `key` (what else the body depends on: a page's bounds) in `scope` (the runtime answering:
 * its cursor key signs a page's nextCursor, and two apps in one process may share a board), then served as text: a
 * poller of the head's board page was building its 100 rows and their JSON on every request (~40 % of the process's
 * time on that route, `bench/index-http.ts`). Kept beside the owner (WeakMaps: gone with it), at most
 * KEPT_FIELDS.perOwner keys each (the request chooses the key), none over KEPT_FIELDS.maxChars (made each time).
 * `alike`: another owner whose body under `key` is this one's (a board patched from it, whose rows there are its
 * rows): its text, when kept, is taken instead of made. `body` may give its members as text already (a kept page's
 * members with its cursor after them).
 */
export function keptFields(
  scope: object,
  owner: object,
  key: string,
  body: () => object | string,
  alike?: object,
): string {
  let owners = kept.get(scope);
  let texts = owners?.get(owner);
  const hit = texts?.get(key);
  if (hit !== undefined) return hit;
  const made = (alike === undefined ? undefined : owners?.get(alike)?.get(key)) ?? textOf(body());
  if (made.length > KEPT_FIELDS.maxChars) return made;
  if (owners === undefined) {
    owners = new WeakMap();
    kept.set(scope, owners);
  }
  if (texts === undefined) {
    texts = new BoundedMap(KEPT_FIELDS.perOwner, "recency");
    owners.set(owner, texts);
  }
  texts.set(key, made);
  return made;
}

/**
 * `answer`, for a page of `rows` rows: from LARGE_PAGE_ROWS on, its body is built (the rows as JSON) and handed to
 * the socket in a turn of the event loop of its own (api/http/answerTurns.ts), after the poll phase has served
 * the sockets that are ready. Pipelined 1,000-row pages that finish their reads together (a client asking for them
 * and never reading, from 1 address or 400) were serialised back to back, and another client's p99 went to 213 and
 * 267 ms (issue 30); in turns, a cheap request waits behind at most one page.
 */
export async function answerPage<B extends object>(
  c: AppContext,
  rt: Pick<IndexRuntime, "chainId" | "staleSeconds" | "finality">,
  { turns }: Pages,
  at: { block: bigint; time: bigint; head: IndexHead; pinned: boolean },
  rows: number,
  body: () => B,
): Promise<Response> {
  if (rows >= LARGE_PAGE_ROWS) await turns.turnFor(LARGE_ANSWER_BYTES);
  return answer(c, rt, at, body());
}

/** What the pages of the index share with GraphQL's: the turns they are built and written in, the rows in flight. */
export type Pages = { turns: AnswerTurns; rows: Admission };

/**
 * `read` holding `rows` of the process's rows in flight (api/read/admission.ts, shared with GraphQL) from before
 * its statement until `answer` has built its page: 400 addresses each pipelining 1,000-row pages had all the pool's
 * statements finish together, and decoding their rows held the event loop for seconds. A request whose time runs
 * out while it waits reads nothing (its deadline answers it).
 */
export async function withRows<T>(c: AppContext, pages: Pages, rows: number, read: () => Promise<T>): Promise<T> {
  let release: () => void;
  try {
    release = await pages.rows.acquire(Math.max(1, rows), requestDeadline(c));
  } catch {
    throw new QueryCancelledError();
  }
  try {
    return await read();
  } finally {
    release();
  }
}
