/**
 * EIP-55 addresses of the rows an answer shows, remembered: a page of 100 events names the same few accounts again
 * and again, and viem's getAddress costs ≈ 0.7 µs even when its own cache has the address (a validating regex and
 * two LRU lookups), 2 per event. Here a hit is one Map lookup: shaping a 100-event page took 0.33 ms, now 0.08. The addresses come
 * from the index (lower-case, 20 bytes, written by the indexer), so nothing is validated twice.
 */
import { type Address, getAddress } from "viem";
import { BoundedMap } from "../cache/boundedMap";

/** Addresses remembered (≈ 150 bytes each); the oldest is forgotten first. */
export const CHECKSUM_MEMO_SIZE = 20_000;

/**
 * `address` as a string of its own. V8 keeps a substring of 13 characters or more as a slice pointing into the string
 * it was cut from, and the ve ranking arrives as one text of 1–5 MB (api/read/atBlock.ts): a key kept here as a
 * slice held its board's whole text long after the board was dropped — 16 texts, 46 MB, after the floods of
 * bench/abuse-soak.ts (a heap snapshot). Copied once, on a miss.
 */
const own = (address: string): string => Buffer.from(address, "latin1").toString("latin1");

export function checksumMemo(size = CHECKSUM_MEMO_SIZE): (address: string) => Address {
  const memo = new BoundedMap<string, Address>(size);
  return (address) => {
    let shown = memo.get(address);
    if (shown === undefined) {
      shown = getAddress(address);
      memo.set(own(address), shown);
    }
    return shown;
  };
}

/** The process's memo for the index's answers (REST and GraphQL shape rows with api/read/shapes.ts). */
export const checksummedAddress = checksumMemo();
