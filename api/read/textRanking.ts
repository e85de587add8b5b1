/**
 * A ve ranking computed whole (api/read/atBlock.ts holders) kept as the text the statement sends — `owner ve locked
 * locks` groups in board order, space-separated, owners lower-case (as Ponder stores hex) — with where each row starts,
 * and each row read from the text when it is asked for. The statement sends one text, not ~60,000 rows each repeating
 * the head's and the block's columns (pg's row parsing was ~10 % of the API process's busy time in a time-travel
 * flood). At Base scale (~60,000 holders, ~5 MB of text) parsing every row into an object with two bigints held the
 * event loop 20–70 ms per block in a time-travel flood and left ~25 MB per kept board for the collector; the row
 * starts are one pass over the text (a few ms), and a page reads its 100 rows.
 */
import type { Address } from "viem";
import type { HolderVe, VeRanking } from "./contract";

/** "0x" and 40 hex digits: every row starts with its owner, then a space. */
const ADDRESS_LENGTH = 42;

/** The ranking in `text` (null or empty: no holders). */
export function textRanking(text: unknown): VeRanking {
  const all = text == null ? "" : String(text);
  const starts = rowStarts(all);
  const length = starts.length - 1;
  // Row k's fields: the owner at its start, the others between the spaces after it.
  const veOf = (k: number): bigint => {
    const from = (starts[k] as number) + ADDRESS_LENGTH + 1;
    return BigInt(all.slice(from, all.indexOf(" ", from)));
  };
  const addressOf = (k: number): string => all.slice(starts[k] as number, (starts[k] as number) + ADDRESS_LENGTH);
  const get = (k: number): HolderVe | undefined => {
    if (!(k >= 0 && k < length)) return undefined;
    const start = starts[k] as number;
    const veAt = start + ADDRESS_LENGTH + 1;
    const lockedAt = all.indexOf(" ", veAt) + 1;
    const locksAt = all.indexOf(" ", lockedAt) + 1;
    return {
      address: all.slice(start, start + ADDRESS_LENGTH) as Address,
      ve: BigInt(all.slice(veAt, lockedAt - 1)),
      locked: BigInt(all.slice(lockedAt, locksAt - 1)),
      locks: Number(all.slice(locksAt, (starts[k + 1] as number) - 1)),
    };
  };
  // The first row strictly after `key` in board order (ve descending, then address ascending in byte order).
  const after = (key: { ve: bigint; address: string }): number => {
    const address = key.address.toLowerCase();
    let lo = 0;
    let hi = length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ve = veOf(mid);
      const before = key.ve !== ve ? key.ve > ve : address < addressOf(mid);
      if (before) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  return {
    length,
    get,
    after,
    // A rank lookup: the owner where a row starts (the text holds each owner once), found by the text's own search.
    indexOf: (address) => {
      const needle = `${address.toLowerCase()} `;
      if (needle.length !== ADDRESS_LENGTH + 1) return undefined;
      for (let at = all.indexOf(needle); at !== -1; at = all.indexOf(needle, at + 1)) {
        const k = rowAt(starts, at);
        if (k !== undefined) return k;
      }
      return undefined;
    },
    // One byte a character (the text is ASCII), and the row starts.
    bytes: all.length + starts.byteLength,
  };
}

/**
 * Where each row of `text` starts, and one past its end (text.length + 1) as the last entry: from a row's start, past
 * its owner (fixed length), three spaces to the next row (native searches, not a loop over 5 MB of characters).
 */
function rowStarts(text: string): Int32Array {
  const starts: number[] = [];
  if (text.length > 0) {
    for (let s = 0; ; ) {
      starts.push(s);
      const ve = text.indexOf(" ", s + ADDRESS_LENGTH + 1);
      const locked = ve === -1 ? -1 : text.indexOf(" ", ve + 1);
      const next = locked === -1 ? -1 : text.indexOf(" ", locked + 1);
      if (next === -1) break;
      s = next + 1;
    }
  }
  starts.push(text.length + 1);
  return Int32Array.from(starts);
}

/** The row that starts at offset `at`, or undefined when none does. */
function rowAt(starts: Int32Array, at: number): number | undefined {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((starts[mid] as number) < at) lo = mid + 1;
    else hi = mid;
  }
  return starts[lo] === at && lo < starts.length - 1 ? lo : undefined;
}
