/**
 * Page cursors of the index API: the block the first page was answered at, and the keyset of the last row given.
 * Every later page answers at that block, so a reader never sees a row twice or misses one while the index moves
 * on (issue 23, 4). Opaque to clients: base64url of a small JSON, judged strictly here — anything but a cursor
 * this API could have handed out (other encodings of the same JSON included) is BAD_PARAMS.
 */
import type { Address } from "viem";
import { BadParamsError } from "../http/errors";
import type { EventKey } from "./contract";

export type EventsCursor = { kind: "events"; block: bigint; after: EventKey };
export type BoardCursor = { kind: "board"; block: bigint; after: { ve: bigint; address: Address } };
/** GraphQL's `locks` (api/graphql): an owner's live locks by token id, ascending (0) or descending (1). */
export type LocksCursor = { kind: "locks"; block: bigint; after: { tokenId: bigint; descending: boolean } };
export type Cursor = EventsCursor | BoardCursor | LocksCursor;

/** The wire form, version 1: `k` the list, `b` the block, `p` the keyset. */
type Wire = { v: 1; k: "e" | "v" | "l"; b: string; p: [string, number] | [string, string] };

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const LOWER_ADDRESS = /^0x[0-9a-f]{40}$/;
const MAX_LOG_INDEX = 2 ** 31 - 1;

export function encodeCursor(cursor: Cursor): string {
  const b = cursor.block.toString();
  const wire: Wire =
    cursor.kind === "events"
      ? { v: 1, k: "e", b, p: [cursor.after.block.toString(), cursor.after.logIndex] }
      : cursor.kind === "board"
        ? { v: 1, k: "v", b, p: [cursor.after.ve.toString(), cursor.after.address.toLowerCase()] }
        : { v: 1, k: "l", b, p: [cursor.after.tokenId.toString(), cursor.after.descending ? 1 : 0] };
  return Buffer.from(JSON.stringify(wire)).toString("base64url");
}

const bad = () => new BadParamsError("cursor is not a cursor this API handed out for this list.", { param: "cursor" });

/** The cursor of list `kind` that `raw` encodes; BAD_PARAMS for anything else. */
export function decodeCursor<K extends Cursor["kind"]>(raw: string, kind: K): Extract<Cursor, { kind: K }> {
  let wire: unknown;
  try {
    wire = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  const cursor = fromWire(wire, kind);
  // Only the exact text this API produces: no padding, no other key order, no other spelling of a number.
  if (cursor === null || encodeCursor(cursor) !== raw) throw bad();
  return cursor as Extract<Cursor, { kind: K }>;
}

function fromWire(wire: unknown, kind: Cursor["kind"]): Cursor | null {
  if (typeof wire !== "object" || wire === null || Array.isArray(wire)) return null;
  const w = wire as Partial<Wire>;
  if (w.v !== 1 || typeof w.b !== "string" || !DECIMAL.test(w.b) || !Array.isArray(w.p) || w.p.length !== 2) {
    return null;
  }
  const block = BigInt(w.b);
  const [first, second] = w.p;
  if (typeof first !== "string" || !DECIMAL.test(first)) return null;
  if (kind === "events" && w.k === "e") {
    if (typeof second !== "number" || !Number.isInteger(second) || second < 0 || second > MAX_LOG_INDEX) return null;
    const at = BigInt(first);
    // A page's last row is at or below the block the list is answered at.
    return at > block ? null : { kind, block, after: { block: at, logIndex: second } };
  }
  if (kind === "locks" && w.k === "l") {
    if (second !== 0 && second !== 1) return null;
    return { kind, block, after: { tokenId: BigInt(first), descending: second === 1 } };
  }
  if (kind === "board" && w.k === "v") {
    if (typeof second !== "string" || !LOWER_ADDRESS.test(second)) return null;
    return { kind, block, after: { ve: BigInt(first), address: second as Address } };
  }
  return null;
}
