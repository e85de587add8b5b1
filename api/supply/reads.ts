/**
 * The supply read (spec §2.2), strict about every byte the node sends back: eth_blockNumber, then ONE JSON-RPC batch
 * of totalSupply() and totalLockedClaim() pinned to that block, so both figures describe the same state (protocol.md
 * §6) — total as well as circulating, which are answered from this one read (api/supply/figures.ts). The same batch
 * asks for that block's header: its hash is kept with the figures, so a reorg that drops the block is noticed
 * (api/supply/branchWatch.ts), and its timestamp tells a node whose head is far behind the wall clock (a lagging node).
 */
import { type Address, encodeFunctionData, numberToHex } from "viem";
import { AssetTokenAbi, VeLockNFTAbi } from "../../abis";
import { decodeView, viewFailure, viewRequest } from "../chain/readView";
import type { RpcCallOptions, RpcClient } from "../chain/rpc";
import { BLOCK_HASH, type SupplyRead } from "./figures";
import { SupplyError, toSupplyError } from "./supplyError";
import { SMALLEST_FIGURE_WEI } from "./wei";

/** Calldata from the pinned ABIs: 0x18160ddd and 0x0ff566a7 (spec §2.2; abis.test.ts pins the selectors). */
export const TOTAL_SUPPLY_CALLDATA = encodeFunctionData({ abi: AssetTokenAbi, functionName: "totalSupply" });
export const TOTAL_LOCKED_CLAIM_CALLDATA = encodeFunctionData({ abi: VeLockNFTAbi, functionName: "totalLockedClaim" });

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

const garbledHeader = (number: bigint): never => {
  throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", `eth_getBlockByNumber(${number}): not that block's header`);
};

/**
 * No block at the height eth_blockNumber just named: not a malformed answer but a backend behind the one that named
 * it (a load balancer over nodes a block or two apart sends the batch elsewhere), a lagging node.
 */
export class MissingBlockError extends SupplyError {
  constructor(readonly blockNumber: bigint) {
    super(
      "SUPPLY_RPC_LAGGING",
      `eth_getBlockByNumber(${blockNumber}): no such block, though eth_blockNumber just named it (a backend behind)`,
    );
  }
}
const missingBlock = (number: bigint): never => {
  throw new MissingBlockError(number);
};

/** A block's header as the supply reads keep it: its hash (lowercase) and its timestamp (Unix seconds). */
export type BlockHeader = { hash: string; timestampSec: number };

/**
 * The header `eth_getBlockByNumber(number, false)` answered, or null: the node has no such block now. Any other answer
 * (no hash, a short one, another block's header, no timestamp) is garbled: SUPPLY_RPC_INVALID_UINT256.
 */
export function blockHeaderOf(raw: unknown, number: bigint): BlockHeader | null {
  if (raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) return garbledHeader(number);
  const header = raw as { number?: unknown; hash?: unknown; timestamp?: unknown };
  const hash = typeof header.hash === "string" ? header.hash.toLowerCase() : "";
  if (!BLOCK_HASH.test(hash) || header.number !== numberToHex(number)) return garbledHeader(number);
  if (typeof header.timestamp !== "string" || !HEX_QUANTITY.test(header.timestamp)) return garbledHeader(number);
  return { hash, timestampSec: Number(BigInt(header.timestamp)) };
}

/** The hash of blockHeaderOf's header, or null. */
export const blockHashOf = (raw: unknown, number: bigint): string | null => blockHeaderOf(raw, number)?.hash ?? null;

/** A block number that is not a hex quantity is a garbled answer like any other (same code). */
function quantity(raw: unknown): bigint {
  if (typeof raw !== "string" || !HEX_QUANTITY.test(raw)) {
    throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", "eth_blockNumber: not a hex quantity");
  }
  return BigInt(raw);
}

const totalSupply = (address: Address) => ({ address, abi: AssetTokenAbi, functionName: "totalSupply" }) as const;
const totalLockedClaim = (address: Address) =>
  ({ address, abi: VeLockNFTAbi, functionName: "totalLockedClaim" }) as const;

/**
 * A deployed token's supply is never zero: a well-formed zero word is the node's fault (or the wrong address), and
 * an aggregator would list it. Fail closed, on both routes: there is no total to answer, nor a circulating one. The
 * guard is on the figure, not only the word: below 0.01 token (SMALLEST_FIGURE_WEI, 1 wei included) the figure would
 * be "0.00", a zero all the same.
 */
const noSupply = (total: bigint, block: bigint) =>
  new SupplyError(
    "SUPPLY_INCONSISTENT",
    `totalSupply() is ${total === 0n ? "0" : "below 0.01 token"} at block ${block}: not a deployed token's supply`,
  );

/**
 * A total above this is no figure of this token: 2^128 wei, 3.4 × 10^20 tokens. The token has no hard-coded maximum
 * (spec §2.2: max is null), so this is no cap of the token's own but a bound no supply minted from 0 on a decaying
 * schedule comes near, while a garbled word that is still 0x + 64 hex (all ones, another call's answer, random bytes)
 * lands above it in all but 2^-128 of cases. Such a word would be published as is for a whole window: it fails closed.
 */
export const SUPPLY_TOTAL_CEILING_WEI = 2n ** 128n;

const beyondCeiling = (total: bigint, block: bigint) =>
  new SupplyError(
    "SUPPLY_INCONSISTENT",
    `totalSupply() is ${total} wei at block ${block}: above ${SUPPLY_TOTAL_CEILING_WEI}, not this token's supply`,
  );

/**
 * Both figures' inputs at one block: eth_blockNumber, then ONE batch of that block's header (for its hash),
 * totalSupply() and totalLockedClaim() pinned to it (no totalLockedClaim() without a VeLockNFT). `options.signal` cancels the read's RPC calls (the supply deadline).
 * Whether circulating is a figure is api/supply/figures.ts's call (a totalLockedClaim() that failed is kept as its
 * SupplyError); a failed header or totalSupply(), or a total below 0.01 token or above SUPPLY_TOTAL_CEILING_WEI, fails
 * the read.
 */
export async function readSupply(
  rpc: RpcClient,
  token: Address,
  veLock: Address | null,
  options?: RpcCallOptions,
): Promise<SupplyRead> {
  try {
    // Taken before the block is asked for: the figures describe a moment after it (SupplyRead).
    const readAtMs = Date.now();
    const blockNumber = await rpc.request({ method: "eth_blockNumber", params: [] }, { ...options, decode: quantity });
    const block = numberToHex(blockNumber);
    const totalView = totalSupply(token);
    const requests = [{ method: "eth_getBlockByNumber", params: [block, false] }, viewRequest(totalView, block)];
    // Decoded inside the batch, so a garbled member is counted as that call's failure (api/chain/rpc.ts). The block
    // read is the latest one: a null header is a backend behind the one that named it (MissingBlockError).
    const decode = [
      (raw: unknown): unknown => blockHeaderOf(raw, blockNumber) ?? missingBlock(blockNumber),
      (raw: unknown): unknown => decodeView(totalView, raw),
    ];
    // totalLockedClaim() is settled: its failure (a revert, `0x`, a garbled word) is circulating's alone, and total,
    // which spec §4.1 defines as totalSupply() alone, is still the figure of the block read (figures.ts).
    const settle = [false, false, true];
    let lockedFailure: (cause: unknown) => SupplyError = toSupplyError;
    if (veLock !== null) {
      const lockedView = totalLockedClaim(veLock);
      requests.push(viewRequest(lockedView, block));
      decode.push((raw) => decodeView(lockedView, raw));
      lockedFailure = (cause) => toSupplyError(viewFailure(lockedView, cause));
    }
    const batch = () =>
      rpc.batch(requests, { ...options, decode, settle }).catch((cause: unknown) => {
        throw cause instanceof SupplyError ? cause : viewFailure(totalView, cause);
      });
    // A backend without the block is asked again once, at once: a load balancer may send the batch to one that has it.
    const [header, total, locked] = (await batch().catch((error: unknown) => {
      if (error instanceof MissingBlockError) return batch();
      throw error;
    })) as [BlockHeader, bigint, unknown];
    if (total < SMALLEST_FIGURE_WEI) throw noSupply(total, blockNumber);
    if (total > SUPPLY_TOTAL_CEILING_WEI) throw beyondCeiling(total, blockNumber);
    return {
      blockNumber,
      blockHash: header.hash,
      blockTimestampSec: header.timestampSec,
      total,
      locked: veLock === null ? null : typeof locked === "bigint" ? locked : lockedFailure(locked),
      readAtMs,
    };
  } catch (error) {
    throw toSupplyError(error);
  }
}
