/**
 * Page cursors of the index API: the list they page, the block the first page was answered at, and the keyset of the
 * last row given. Every later page answers at that block, so a reader never sees a row twice or misses one while the
 * index moves on (issue 23, 4). Opaque to clients: base64url of a small JSON followed by its MAC (HMAC-SHA-256 under
 * the deployment's cursor key, cut to 16 bytes), judged strictly here — a cursor whose MAC is not ours (forged,
 * tampered, cut short, another deployment's), another list's (lock 4's history on lock 5's, a board's on another
 * board or window, an activity filter's on another), or anything but the exact text this API could have handed out,
 * is BAD_PARAMS (issue 30, 7): a keyset means nothing on another list, where it would skip rows or end the list.
 *
 * A block above the index's finalized checkpoint can still be replaced by a reorg, and its number alone would then
 * page the new branch's rows after the old branch's. Such a cursor carries its block's seal (contract.ts Seal: a digest
 * of the index's events in the blocks a reorg could still replace, read in the same statement as the page's rows, or
 * with the board's ranking); each later page reads the same digest in its own snapshot (checkSeal), and one that
 * differs refuses the cursor: BAD_PARAMS with `reason: "reorg"`, the list to be started again.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Address } from "viem";
import type { AppConfig } from "../config";
import { BadParamsError } from "../http/errors";
import type { BoardSeal, CarriedSeal, EventKey, EventsOf, Seal, SealAsk } from "./contract";

/**
 * `list`: the list the cursor pages, as cursorList names it; the wire carries a digest of it. `seal`: its block's, as
 * its first page read it; null when that block was final.
 */
export type EventsCursor = { kind: "events"; list: string; block: bigint; seal: Seal | null; after: EventKey };
/** `seal`: a board's cursor may carry its ranking's basis instead (contract.ts CarriedSeal). */
export type BoardCursor = {
  kind: "board";
  list: string;
  block: bigint;
  seal: BoardSeal | null;
  after: { ve: bigint; address: Address };
};
/** GraphQL's `locks` (api/graphql): an owner's live locks by token id, ascending (0) or descending (1). */
export type LocksCursor = {
  kind: "locks";
  list: string;
  block: bigint;
  seal: Seal | null;
  after: { tokenId: bigint; descending: boolean };
};
export type Cursor = EventsCursor | BoardCursor | LocksCursor;

/**
 * The lists a cursor may page, each named by what picks its rows. REST and GraphQL name one list alike (a lock's
 * history is `GET /locks/42/events` and `lockEvents(where: { tokenId: 42 })`), so their cursors pass between the two
 * only there. Addresses lower-case, activity kinds as a set.
 */
export const cursorList = {
  /** A lock's history (`tokenId` as a canonical decimal when a string). */
  lock: (tokenId: bigint | string): string => `lock:${tokenId}`,
  account: (address: string): string => `account:${address.toLowerCase()}`,
  history: (of: EventsOf): string => ("tokenId" in of ? cursorList.lock(of.tokenId) : cursorList.account(of.account)),
  activity: (kinds: readonly string[] | null, account: string | null): string =>
    `activity:${kinds === null ? "*" : [...new Set(kinds)].sort().join(",")}:${account?.toLowerCase() ?? "*"}`,
  ve: "board:ve",
  board: (board: string, window: string): string => `board:${board}:${window}`,
  /** GraphQL's `locks`: the order is the keyset's own (LocksCursor). */
  locks: (owner: string): string => `locks:${owner.toLowerCase()}`,
} as const;

/**
 * The wire form, version 3: `k` the kind of list, `l` the list's digest, `b` the block, `p` the keyset, `s` the seal
 * (its range's start and digest; absent for a final block) or, a board's only, `c` its ranking's carried basis (the
 * basis block, the carried lines' digest, then the basis's seal when it has one). Version 2 (no seal) is refused like
 * any other text.
 */
type Wire = {
  v: 3;
  k: "e" | "v" | "l";
  l: string;
  b: string;
  p: [string, number] | [string, string];
  s?: [string, string];
  c?: [string, string] | [string, string, string, string];
};

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const LOWER_ADDRESS = /^0x[0-9a-f]{40}$/;
/** A seal's digest as atBlock.ts sealOf cuts it: 96 bits of base64url. */
const SEAL_DIGEST = /^[A-Za-z0-9_-]{16}$/;
const MAX_LOG_INDEX = 2 ** 31 - 1;

/** Bytes of HMAC-SHA-256 a cursor carries: 128 bits, as many as a guess must match. */
export const CURSOR_MAC_BYTES = 16;
/**
 * Bytes of SHA-256 naming a cursor's list: only our own lists' names are hashed (the MAC keeps out any other), so
 * 64 bits keep them apart without making the cursor long (11 characters of base64url).
 */
const LIST_DIGEST_BYTES = 8;
const listDigest = (list: string) =>
  createHash("sha256").update(list).digest().subarray(0, LIST_DIGEST_BYTES).toString("base64url");

/**
 * The deployment's cursor key: CURSOR_SECRET when set; else derived from what every replica of one deployment shares,
 * so replicas agree on each other's cursors without a setting: the chain id, the index's schema, and of the database
 * URL only its database name and password (derivedCursorSeed). Not the URL's text: replicas reach one database as
 * `postgres://` or `postgresql://`, through a host alias or a pooler of their own, on another port, with their own
 * `application_name` or `sslmode`, and each such difference made a replica refuse the others' cursors (400 on page 2
 * behind a load balancer). The password is the one secret in it: without it anyone who guesses the database's and the
 * schema's names could sign cursors; with it, a password changed one replica at a time splits them until all have it.
 * docs/configuration.md asks for CURSOR_SECRET in production, and the API process warns without it on base and
 * base-sepolia.
 */
export function cursorKey(config: Pick<AppConfig, "cursorSecret" | "chainId" | "database">): Buffer {
  const seed = config.cursorSecret ?? derivedCursorSeed(config);
  return createHash("sha256").update(`index cursor key v1\n${seed}`).digest();
}

/**
 * What the derived key depends on, one per line: the chain id, the database name (the URL's path, or libpq's default,
 * the user's name), the schema read (the views schema when set), and the URL's password (none: empty).
 */
function derivedCursorSeed(config: Pick<AppConfig, "chainId" | "database">): string {
  const { url, schema, viewsSchema } = config.database;
  let database = "";
  let password = "";
  if (url !== null) {
    const u = new URL(url);
    database = decoded(u.pathname.slice(1)) || decoded(u.username);
    password = decoded(u.password);
  }
  return ["derived v2", config.chainId, database, viewsSchema ?? schema ?? "", password].join("\n");
}

/** A URL part as its percent-escapes spell it (as pg reads it); as written when they are malformed. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Cursors signed and checked with one deployment's key (api/read/runtime.ts holds the app's). */
export class CursorCodec {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    this.#key = key;
  }

  encode(cursor: Cursor): string {
    return this.#encode(cursor, listDigest(cursor.list));
  }

  /** The cursor of `list` (named by cursorList, of kind `kind`) that `raw` encodes; BAD_PARAMS for anything else. */
  decode<K extends Cursor["kind"]>(raw: string, kind: K, list: string): Extract<Cursor, { kind: K }> {
    const bytes = Buffer.from(raw, "base64url");
    if (bytes.length <= CURSOR_MAC_BYTES) throw bad();
    const payload = bytes.subarray(0, bytes.length - CURSOR_MAC_BYTES);
    // The MAC first: nothing a client made up is parsed further.
    if (!timingSafeEqual(bytes.subarray(payload.length), this.#mac(payload))) throw bad();
    let wire: unknown;
    try {
      wire = JSON.parse(payload.toString("utf8"));
    } catch {
      throw bad();
    }
    const digest = listDigest(list);
    const cursor = fromWire(wire, kind, list, digest);
    // Only the exact text this API produces: no padding, no other key order, no other spelling of a number.
    if (cursor === null || this.#encode(cursor, digest) !== raw) throw bad();
    return cursor as Extract<Cursor, { kind: K }>;
  }

  #encode(cursor: Cursor, digest: string): string {
    const payload = Buffer.from(wireText(cursor, digest));
    return Buffer.concat([payload, this.#mac(payload)]).toString("base64url");
  }

  #mac(payload: Buffer): Buffer {
    return createHmac("sha256", this.#key).update(payload).digest().subarray(0, CURSOR_MAC_BYTES);
  }
}

function wireText(cursor: Cursor, l: string): string {
  const b = cursor.block.toString();
  const wire: Wire =
    cursor.kind === "events"
      ? { v: 3, k: "e", l, b, p: [cursor.after.block.toString(), cursor.after.logIndex] }
      : cursor.kind === "board"
        ? { v: 3, k: "v", l, b, p: [cursor.after.ve.toString(), cursor.after.address.toLowerCase()] }
        : { v: 3, k: "l", l, b, p: [cursor.after.tokenId.toString(), cursor.after.descending ? 1 : 0] };
  const seal = cursor.seal;
  if (seal !== null && "basis" in seal) {
    const basis = [seal.basis.toString(), seal.lines] as const;
    wire.c = seal.seal === null ? [...basis] : [...basis, seal.seal.from.toString(), seal.seal.digest];
  } else if (seal !== null) wire.s = [seal.from.toString(), seal.digest];
  return JSON.stringify(wire);
}

const bad = () => new BadParamsError("cursor is not a cursor this API handed out for this list.", { param: "cursor" });

/**
 * What a page's statement is asked of its seal: the first page's from the finalized checkpoint it reads; a later page
 * the cursor's range again; none for a cursor of a final block.
 */
export function sealAsk(cursor: EventsCursor | LocksCursor | undefined): SealAsk | undefined {
  if (cursor === undefined) return { from: null };
  return cursor.seal === null ? undefined : { from: cursor.seal.from };
}

/**
 * A later page's seal (`now`, read in the page's own snapshot from the cursor's range start) against the cursor's:
 * another digest (or none) means a reorg replaced events of ours at or below the cursor's block since its first
 * page, so its keyset would page another branch's list — BAD_PARAMS, reason "reorg" (`param`: "cursor", GraphQL's
 * "after"). A cursor of a final block carries no seal and is not judged.
 */
export function checkSeal(
  cursor: { block: bigint; seal: Seal | null },
  now: Seal | null | undefined,
  param: "cursor" | "after" = "cursor",
): void {
  const seal = cursor.seal;
  if (seal === null || (now?.from === seal.from && now.digest === seal.digest)) return;
  throw reorgRefusal(cursor.block, param);
}

/** A cursor whose list a reorg changed since its first page: BAD_PARAMS, reason "reorg". */
export function reorgRefusal(block: bigint, param: "cursor" | "after"): BadParamsError {
  return new BadParamsError(
    `${param} pages the list as of block ${block}, which a reorg has changed since its first page: start the ` +
      `list again without ${param}.`,
    { param, reason: "reorg", cursorBlock: block.toString() },
  );
}

/** The cursor `wire` is when it is one of `list` (whose digest is `digest`); a version 1 cursor (no list) is not. */
function fromWire(wire: unknown, kind: Cursor["kind"], list: string, digest: string): Cursor | null {
  if (typeof wire !== "object" || wire === null || Array.isArray(wire)) return null;
  const w = wire as Partial<Wire>;
  if (w.v !== 3 || w.l !== digest) return null;
  if (typeof w.b !== "string" || !DECIMAL.test(w.b) || !Array.isArray(w.p) || w.p.length !== 2) return null;
  const block = BigInt(w.b);
  if (w.c !== undefined && (w.s !== undefined || w.k !== "v")) return null;
  const seal = w.c === undefined ? sealFromWire(w.s, block) : carriedFromWire(w.c, block);
  if (seal === undefined) return null;
  const [first, second] = w.p;
  if (typeof first !== "string" || !DECIMAL.test(first)) return null;
  if (kind === "events" && w.k === "e") {
    if (typeof second !== "number" || !Number.isInteger(second) || second < 0 || second > MAX_LOG_INDEX) return null;
    const at = BigInt(first);
    // A page's last row is at or below the block the list is answered at.
    if (seal !== null && "basis" in seal) return null;
    return at > block ? null : { kind, list, block, seal, after: { block: at, logIndex: second } };
  }
  if (kind === "locks" && w.k === "l") {
    if (second !== 0 && second !== 1) return null;
    if (seal !== null && "basis" in seal) return null;
    return { kind, list, block, seal, after: { tokenId: BigInt(first), descending: second === 1 } };
  }
  if (kind === "board" && w.k === "v") {
    if (typeof second !== "string" || !LOWER_ADDRESS.test(second)) return null;
    return { kind, list, block, seal, after: { ve: BigInt(first), address: second as Address } };
  }
  return null;
}

/** The seal `s` is (null when absent), or undefined when it is none this API writes: its range starts below the block. */
function sealFromWire(s: unknown, block: bigint): Seal | null | undefined {
  if (s === undefined) return null;
  if (!Array.isArray(s) || s.length !== 2) return undefined;
  const [from, digest] = s;
  if (typeof from !== "string" || !DECIMAL.test(from) || typeof digest !== "string" || !SEAL_DIGEST.test(digest)) {
    return undefined;
  }
  return BigInt(from) < block ? { from: BigInt(from), digest } : undefined;
}

/**
 * The carried basis `c` is, or undefined when it is none this API writes: its basis block below the cursor's, the
 * basis's seal (when there is one) starting below the basis block.
 */
function carriedFromWire(c: unknown, block: bigint): CarriedSeal | undefined {
  if (!Array.isArray(c) || (c.length !== 2 && c.length !== 4)) return undefined;
  const [basis, lines, ...seal] = c;
  if (typeof basis !== "string" || !DECIMAL.test(basis) || typeof lines !== "string" || !SEAL_DIGEST.test(lines)) {
    return undefined;
  }
  const at = BigInt(basis);
  if (at >= block) return undefined;
  if (seal.length === 0) return { basis: at, seal: null, lines };
  const basisSeal = sealFromWire(seal, at);
  return basisSeal ? { basis: at, seal: basisSeal, lines } : undefined;
}
