/**
 * The two supply reads (spec §2.2), strict about every byte the node sends back.
 * total: one eth_call totalSupply() at latest.
 * circulating: eth_blockNumber, then ONE JSON-RPC batch of totalSupply() and totalLockedClaim()
 * pinned to that block, so both values describe the same state (protocol.md §6).
 */
import { type Address, encodeFunctionData, numberToHex } from "viem";
import { AssetTokenAbi, VeLockNFTAbi } from "../../abis";
import { decodeView, readView, viewFailure, viewRequest } from "../chain/readView";
import type { RpcCallOptions, RpcClient } from "../chain/rpc";
import { SupplyError, toSupplyError } from "./supplyError";
import { SMALLEST_FIGURE_WEI } from "./wei";

/** Calldata from the pinned ABIs: 0x18160ddd and 0x0ff566a7 (spec §2.2; abis.test.ts pins the selectors). */
export const TOTAL_SUPPLY_CALLDATA = encodeFunctionData({ abi: AssetTokenAbi, functionName: "totalSupply" });
export const TOTAL_LOCKED_CLAIM_CALLDATA = encodeFunctionData({ abi: VeLockNFTAbi, functionName: "totalLockedClaim" });

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

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

/** `options.signal` cancels the read's RPC calls (the supply deadline). */
export async function readTotalSupply(rpc: RpcClient, token: Address, options?: RpcCallOptions): Promise<bigint> {
  let total: bigint;
  try {
    total = await readView(rpc, totalSupply(token), options);
  } catch (error) {
    throw toSupplyError(error);
  }
  if (total < SMALLEST_FIGURE_WEI) throw noSupply(total, "latest");
  return total;
}

/**
 * A deployed token's supply is never zero: a well-formed zero word is the node's fault (or the wrong address), and
 * an aggregator would list it. Fail closed, as for locked > total. The guard is on the figure, not only the word:
 * below 0.01 token (SMALLEST_FIGURE_WEI, 1 wei included) the figure would be "0.00", a zero all the same.
 */
const noSupply = (total: bigint, block: string) =>
  new SupplyError(
    "SUPPLY_INCONSISTENT",
    `totalSupply() is ${total === 0n ? "0" : "below 0.01 token"} at block ${block}: not a deployed token's supply`,
  );

export type CirculatingRead = { blockNumber: bigint; total: bigint; locked: bigint; circulating: bigint };

export async function readCirculatingSupply(
  rpc: RpcClient,
  token: Address,
  veLock: Address,
  options?: RpcCallOptions,
): Promise<CirculatingRead> {
  try {
    const blockNumber = await rpc.request({ method: "eth_blockNumber", params: [] }, { ...options, decode: quantity });
    const block = numberToHex(blockNumber);
    const [totalView, lockedView] = [totalSupply(token), totalLockedClaim(veLock)];
    // Decoded inside the batch, so a garbled member is counted as that call's failure (api/chain/rpc.ts).
    const [total, locked] = (await rpc
      .batch([viewRequest(totalView, block), viewRequest(lockedView, block)], {
        ...options,
        decode: [(raw) => decodeView(totalView, raw), (raw) => decodeView(lockedView, raw)],
      })
      .catch((cause: unknown) => {
        throw viewFailure(totalView, cause);
      })) as [bigint, bigint];
    if (total < SMALLEST_FIGURE_WEI) throw noSupply(total, String(blockNumber));
    // Everything locked would answer a zero circulating supply: never a real figure, so never answered; nor is
    // a remainder below 0.01 token, which would be published as "0.00".
    if (locked >= total) {
      throw new SupplyError(
        "SUPPLY_INCONSISTENT",
        `totalLockedClaim() is not below totalSupply() at block ${blockNumber}`,
      );
    }
    if (total - locked < SMALLEST_FIGURE_WEI) {
      throw new SupplyError(
        "SUPPLY_INCONSISTENT",
        `totalSupply() − totalLockedClaim() is below 0.01 token at block ${blockNumber}: a "0.00" figure`,
      );
    }
    return { blockNumber, total, locked, circulating: total - locked };
  } catch (error) {
    throw toSupplyError(error);
  }
}
