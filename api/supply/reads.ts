/**
 * The two supply reads (spec §2.2), strict about every byte the node sends back.
 * total: one eth_call totalSupply() at latest.
 * circulating: eth_blockNumber, then ONE JSON-RPC batch of totalSupply() and totalLockedClaim()
 * pinned to that block, so both values describe the same state (protocol.md §6).
 */
import { type Address, encodeFunctionData, type Hex, numberToHex } from "viem";
import { AssetTokenAbi, VeLockNFTAbi } from "../../abis";
import type { RpcCallOptions, RpcClient } from "../chain/rpc";
import { decodeUint256Word } from "../chain/uint256";
import { SupplyError, toSupplyError } from "./supplyError";

/** Calldata from the pinned ABIs: 0x18160ddd and 0x0ff566a7 (spec §2.2; abis.test.ts pins the selectors). */
export const TOTAL_SUPPLY_CALLDATA = encodeFunctionData({ abi: AssetTokenAbi, functionName: "totalSupply" });
export const TOTAL_LOCKED_CLAIM_CALLDATA = encodeFunctionData({ abi: VeLockNFTAbi, functionName: "totalLockedClaim" });

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

const viewCall = (to: Address, data: Hex, block: Hex | "latest") => ({
  method: "eth_call",
  params: [{ to, data }, block] as const,
});

function strictWord(raw: unknown, what: string): bigint {
  const value = decodeUint256Word(raw);
  if (value === null) throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", `${what}: not 0x + 64 hex`);
  return value;
}

/** `options.signal` cancels the read's RPC calls (the supply deadline). */
export async function readTotalSupply(rpc: RpcClient, token: Address, options?: RpcCallOptions): Promise<bigint> {
  try {
    return strictWord(await rpc.request(viewCall(token, TOTAL_SUPPLY_CALLDATA, "latest"), options), "totalSupply()");
  } catch (error) {
    throw toSupplyError(error);
  }
}

export type CirculatingRead = { blockNumber: bigint; total: bigint; locked: bigint; circulating: bigint };

export async function readCirculatingSupply(
  rpc: RpcClient,
  token: Address,
  veLock: Address,
  options?: RpcCallOptions,
): Promise<CirculatingRead> {
  try {
    const rawBlock = await rpc.request({ method: "eth_blockNumber", params: [] }, options);
    // A block number that is not a hex quantity is a garbled answer like any other (same code).
    if (typeof rawBlock !== "string" || !HEX_QUANTITY.test(rawBlock)) {
      throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", "eth_blockNumber: not a hex quantity");
    }
    const blockNumber = BigInt(rawBlock);
    const block = numberToHex(blockNumber);
    const [rawTotal, rawLocked] = await rpc.batch(
      [viewCall(token, TOTAL_SUPPLY_CALLDATA, block), viewCall(veLock, TOTAL_LOCKED_CLAIM_CALLDATA, block)],
      options,
    );
    const total = strictWord(rawTotal, "totalSupply()");
    const locked = strictWord(rawLocked, "totalLockedClaim()");
    if (locked > total) {
      throw new SupplyError("SUPPLY_INCONSISTENT", `totalLockedClaim() exceeds totalSupply() at block ${blockNumber}`);
    }
    return { blockNumber, total, locked, circulating: total - locked };
  } catch (error) {
    throw toSupplyError(error);
  }
}
