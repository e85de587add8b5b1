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

export function checksumMemo(size = CHECKSUM_MEMO_SIZE): (address: string) => Address {
  const memo = new BoundedMap<string, Address>(size);
  return (address) => {
    let shown = memo.get(address);
    if (shown === undefined) {
      shown = getAddress(address);
      memo.set(address, shown);
    }
    return shown;
  };
}

/** The process's memo for the index's answers (REST and GraphQL shape rows with api/read/shapes.ts). */
export const checksummedAddress = checksumMemo();
