/**
 * Page cursors of the index API: the list they page, the block the first page was answered at, and the keyset of the
 * last row given. Every later page answers at that block, so a reader never sees a row twice or misses one while the
 * index moves on (issue 23, 4). Opaque to clients: base64url of a small JSON followed by its MAC (HMAC-SHA-256 under
 * the deployment's cursor key, cut to 16 bytes), judged strictly here — a cursor whose MAC is not ours (forged,
 * tampered, cut short, another deployment's), another list's (lock 4's history on lock 5's, a board's on another
 * board or window, an activity filter's on another), or anything but the exact text this API could have handed out,
 * is BAD_PARAMS (issue 30, 7): a keyset means nothing on another list, where it would skip rows or end the list.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Address } from "viem";
import type { AppConfig } from "../config";
import { BadParamsError } from "../http/errors";
import type { EventKey, EventsOf } from "./contract";

/** `list`: the list the cursor pages, as cursorList names it; the wire carries a digest of it. */
export type EventsCursor = { kind: "events"; list: string; block: bigint; after: EventKey };
export type BoardCursor = { kind: "board"; list: string; block: bigint; after: { ve: bigint; address: Address } };
/** GraphQL's `locks` (api/graphql): an owner's live locks by token id, ascending (0) or descending (1). */
export type LocksCursor = {
  kind: "locks";
  list: string;
  block: bigint;
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

/** The wire form, version 2: `k` the kind of list, `l` the list's digest, `b` the block, `p` the keyset. */
type Wire = { v: 2; k: "e" | "v" | "l"; l: string; b: string; p: [string, number] | [string, string] };

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const LOWER_ADDRESS = /^0x[0-9a-f]{40}$/;
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
 * The deployment's cursor key: CURSOR_SECRET when set; else derived from what every replica of one deployment
 * shares (the chain, the database URL and the index's schema), so replicas agree on each other's cursors without
 * a setting. The derived key is only as secret as the database URL (its password): docs/operations.md asks for
 * CURSOR_SECRET on a public deployment, and the API process warns without it on base and base-sepolia.
 */
export function cursorKey(config: Pick<AppConfig, "cursorSecret" | "chainId" | "database">): Buffer {
  const { url, schema, viewsSchema } = config.database;
  const seed = config.cursorSecret ?? ["derived", config.chainId, url ?? "", viewsSchema ?? schema ?? ""].join("\n");
  return createHash("sha256").update(`index cursor key v1\n${seed}`).digest();
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
      ? { v: 2, k: "e", l, b, p: [cursor.after.block.toString(), cursor.after.logIndex] }
      : cursor.kind === "board"
        ? { v: 2, k: "v", l, b, p: [cursor.after.ve.toString(), cursor.after.address.toLowerCase()] }
        : { v: 2, k: "l", l, b, p: [cursor.after.tokenId.toString(), cursor.after.descending ? 1 : 0] };
  return JSON.stringify(wire);
}

const bad = () => new BadParamsError("cursor is not a cursor this API handed out for this list.", { param: "cursor" });

/** The cursor `wire` is when it is one of `list` (whose digest is `digest`); a version 1 cursor (no list) is not. */
function fromWire(wire: unknown, kind: Cursor["kind"], list: string, digest: string): Cursor | null {
  if (typeof wire !== "object" || wire === null || Array.isArray(wire)) return null;
  const w = wire as Partial<Wire>;
  if (w.v !== 2 || w.l !== digest) return null;
  if (typeof w.b !== "string" || !DECIMAL.test(w.b) || !Array.isArray(w.p) || w.p.length !== 2) return null;
  const block = BigInt(w.b);
  const [first, second] = w.p;
  if (typeof first !== "string" || !DECIMAL.test(first)) return null;
  if (kind === "events" && w.k === "e") {
    if (typeof second !== "number" || !Number.isInteger(second) || second < 0 || second > MAX_LOG_INDEX) return null;
    const at = BigInt(first);
    // A page's last row is at or below the block the list is answered at.
    return at > block ? null : { kind, list, block, after: { block: at, logIndex: second } };
  }
  if (kind === "locks" && w.k === "l") {
    if (second !== 0 && second !== 1) return null;
    return { kind, list, block, after: { tokenId: BigInt(first), descending: second === 1 } };
  }
  if (kind === "board" && w.k === "v") {
    if (typeof second !== "string" || !LOWER_ADDRESS.test(second)) return null;
    return { kind, list, block, after: { ve: BigInt(first), address: second as Address } };
  }
  return null;
}
