/**
 * The supply figures as one cache entry: total and circulating from ONE read at ONE block (api/supply/reads.ts),
 * so whatever the two routes answer at any moment names the same block (protocol.md §6: circulating = total −
 * locked at one block). Read and cached apart, /circulating could come from a later block than /total and exceed it
 * for a whole window after a burn or an unlock.
 *
 * The entry is a string (the cache holds strings, shared through Redis):
 * `<block> <hash> <total> <circulating> <readAt> <blockTime>`, e.g.
 * `123 0x9f…e2 12345678.90 8345678.90 1764605533120 1764605532`, where circulating is either a figure or the code its
 * half failed with (SUPPLY_INCONSISTENT: locked ≥ total, or total − locked below 0.01 token, at that block;
 * SUPPLY_RPC_INVALID_UINT256: totalLockedClaim() reverted or did not answer exactly 0x + 64 hex). A total that is itself
 * fine is still answered then (spec §4.1: total is totalSupply() alone): an aggregator listing it gets the chain's
 * figure; only circulating fails closed. `readAt` is when the read began (Unix ms, the reading replica's clock): the figures' `Age` is counted from it,
 * on every replica that serves the entry (api/supply/router.ts). `hash` and `blockTime` (Unix seconds) are the hash and
 * timestamp of the block read (in the same batch as the figures): the branch check (api/supply/branchWatch.ts) drops
 * the entry once that block is no longer canonical, and needs the block's time to tell a reorg to a shorter chain (a
 * head below the block and younger than it) from a node that lags, on every replica, also one that took the entry from
 * Redis (without it, such a replica took every shorter chain for a lagging node).
 */
import { BoundedMap } from "../cache/boundedMap";
import { SupplyError, type SupplyErrorCode } from "./supplyError";
import { formatWei2, SMALLEST_FIGURE_WEI } from "./wei";

/**
 * What one read at one block found: `locked` is null without a VeLockNFT in the manifest (circulating is not served),
 * or the SupplyError its totalLockedClaim() failed with (a revert, `0x`, a garbled word: circulating fails, total stands).
 * `readAtMs` is when the read began (Unix ms), before eth_blockNumber: the block read was the latest at some moment
 * after it, so an age counted from it is never below the figures' true age (it exceeds it by the read's round trips).
 */
export type SupplyRead = {
  blockNumber: bigint;
  /** The hash of block `blockNumber` as the node answered it with the figures (a lowercase 0x + 64 hex). */
  blockHash: string;
  /** That block's timestamp (Unix seconds): how far the node's head is behind the wall clock (a lagging node). */
  blockTimestampSec: number;
  total: bigint;
  locked: bigint | SupplyError | null;
  readAtMs: number;
};

/** How many blocks a process remembers as reorged away: a reorg orphans a block or two, and a Base reorg is rare. */
export const ORPHANS_REMEMBERED = 64;

/**
 * What a process knows of the blocks behind the figures (api/supply/router.ts keeps it), shared with its Redis cache
 * (api/supply/supplyCache.ts): `blockNumber`, the block of the newest figures it serves: an entry of a lower block is
 * never taken from Redis while it holds this one (a replica that read a lagging node wrote it), only replaced; null:
 * none held, or its block was reorged away. And the hashes of the last ORPHANS_REMEMBERED blocks it saw reorged away:
 * figures of those blocks are never taken from Redis (another replica, not yet aware, may write them back), read,
 * served or written back by it again.
 */
export class SupplyFloor {
  blockNumber: bigint | null = null;
  readonly #orphaned = new BoundedMap<string, true>(ORPHANS_REMEMBERED);

  /** The block `hash` was reorged away: its figures are never taken again. */
  orphan(hash: string): void {
    this.#orphaned.set(hash, true);
  }

  isOrphaned(hash: string): boolean {
    return this.#orphaned.has(hash);
  }
}

/** Each route's answer from one entry: a figure, or the code it fails closed with. */
export type SupplyFigures = {
  blockNumber: bigint;
  blockHash: string;
  /** The block's timestamp (Unix seconds): SupplyRead's. */
  blockTimestampSec: number;
  total: string;
  circulating: string | SupplyErrorCode;
  /** When the read began (Unix ms): SupplyRead's. */
  readAtMs: number;
};

/**
 * The codes the circulating half of an entry may hold, its total being a figure of the block read: locked ≥ total there,
 * no VeLockNFT, or a totalLockedClaim() the node answered with a revert or not with exactly 0x + 64 hex.
 */
const HALF_FAILURES = [
  "SUPPLY_INCONSISTENT",
  "SUPPLY_NOT_DEPLOYED",
  "SUPPLY_RPC_INVALID_UINT256",
] as const satisfies readonly SupplyErrorCode[];

/** total − locked, or why it is not a figure (never negative, never a "0.00"). Total is already ≥ 0.01 token. */
export function circulatingOf(read: SupplyRead): bigint | SupplyError {
  const { blockNumber, total, locked } = read;
  if (locked === null) return new SupplyError("SUPPLY_NOT_DEPLOYED", "VeLockNFT is not in the manifest");
  if (locked instanceof SupplyError) return locked;
  // Everything locked would answer a zero circulating supply: never a real figure, so never answered; nor is a
  // remainder below 0.01 token, which would be published as "0.00".
  if (locked >= total) {
    return new SupplyError(
      "SUPPLY_INCONSISTENT",
      `totalLockedClaim() is not below totalSupply() at block ${blockNumber}`,
    );
  }
  if (total - locked < SMALLEST_FIGURE_WEI) {
    return new SupplyError(
      "SUPPLY_INCONSISTENT",
      `totalSupply() − totalLockedClaim() is below 0.01 token at block ${blockNumber}: a "0.00" figure`,
    );
  }
  return total - locked;
}

/** The entry for one read; `failed` gets the circulating half's failure (to log it), if any. */
export function figuresOf(read: SupplyRead, failed?: (error: SupplyError) => void): SupplyFigures {
  const circulating = circulatingOf(read);
  if (circulating instanceof SupplyError) failed?.(circulating);
  return {
    blockNumber: read.blockNumber,
    blockHash: read.blockHash,
    blockTimestampSec: read.blockTimestampSec,
    total: formatWei2(read.total),
    circulating: circulating instanceof SupplyError ? circulating.code : formatWei2(circulating),
    readAtMs: read.readAtMs,
  };
}

export const encodeFigures = (f: SupplyFigures): string =>
  `${f.blockNumber} ${f.blockHash} ${f.total} ${f.circulating} ${f.readAtMs} ${f.blockTimestampSec}`;

/** A figure as formatWei2 writes it, but never "0.00" (a zero figure is never answered). */
const FIGURE = /^(0|[1-9][0-9]*)\.[0-9]{2}$/;
const isFigure = (value: string) => FIGURE.test(value) && value !== "0.00";
const BLOCK = /^(0|[1-9][0-9]*)$/;
/** A block hash as reads.ts keeps it: lowercase, 32 bytes. */
export const BLOCK_HASH = /^0x[0-9a-f]{64}$/;
/** Unix ms, at most 15 digits: a safe integer (year 33658 and before). */
const READ_AT = /^(0|[1-9][0-9]{0,14})$/;
/** Unix seconds, at most 12 digits: a safe integer, in ms too. */
const BLOCK_TIME = /^(0|[1-9][0-9]{0,11})$/;
/** A figure's wei in hundredths of a token, to compare two figures exactly. */
const cents = (figure: string) => BigInt(figure.replace(".", ""));

/**
 * The entry `text` holds, or null when it is not one this code writes: a shared entry may come from anyone (Redis is
 * not trusted to hold only our writes), so a malformed entry, a zero figure, or a circulating figure above the total
 * (never true at one block) is refused, read again and replaced — never served.
 */
export function decodeFigures(text: string): SupplyFigures | null {
  const parts = text.split(" ");
  if (parts.length !== 6) return null;
  const [block, hash, total, circulating, readAt, time] = parts as [string, string, string, string, string, string];
  if (!BLOCK.test(block) || !BLOCK_HASH.test(hash) || !isFigure(total) || !READ_AT.test(readAt)) return null;
  if (!BLOCK_TIME.test(time)) return null;
  if (isFigure(circulating)) {
    if (cents(circulating) > cents(total)) return null;
  } else if (!(HALF_FAILURES as readonly string[]).includes(circulating)) return null;
  return {
    blockNumber: BigInt(block),
    blockHash: hash,
    blockTimestampSec: Number(time),
    total,
    circulating,
    readAtMs: Number(readAt),
  };
}

/** The code the entry's circulating half fails with, or null when it is a figure. */
export const circulatingCode = (f: SupplyFigures): SupplyErrorCode | null =>
  (HALF_FAILURES as readonly string[]).includes(f.circulating) ? (f.circulating as SupplyErrorCode) : null;

/**
 * Whether the entry's circulating half failed at its block (not for want of a VeLockNFT, a configuration that does
 * not change): such an entry is kept only as long as a failure is remembered (the backoff), then read again.
 */
export const circulatingFailed = (f: SupplyFigures): boolean =>
  f.circulating === "SUPPLY_INCONSISTENT" || f.circulating === "SUPPLY_RPC_INVALID_UINT256";
