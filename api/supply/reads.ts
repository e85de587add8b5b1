/**
 * The two supply reads (spec §2.2), strict about every byte the node sends back.
 * total: one eth_call totalSupply() at latest.
 * circulating: eth_blockNumber, then ONE JSON-RPC batch of totalSupply() and totalLockedClaim()
 * pinned to that block, so both values describe the same state (protocol.md §6).
 */
import { type Address, encodeFunctionData, numberToHex } from "viem";
import { AssetTokenAbi, VeLockNFTAbi } from "../../abis";
import { decodeView, readView, viewFailure, viewRequest } from "../chain/readView";
import { type RpcCallOptions, type RpcClient, RpcError } from "../chain/rpc";
import { SupplyError, toSupplyError } from "./supplyError";

/** Calldata from the pinned ABIs: 0x18160ddd and 0x0ff566a7 (spec §2.2; abis.test.ts pins the selectors). */
export const TOTAL_SUPPLY_CALLDATA = encodeFunctionData({ abi: AssetTokenAbi, functionName: "totalSupply" });
export const TOTAL_LOCKED_CLAIM_CALLDATA = encodeFunctionData({ abi: VeLockNFTAbi, functionName: "totalLockedClaim" });

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

const totalSupply = (address: Address) => ({ address, abi: AssetTokenAbi, functionName: "totalSupply" }) as const;
const totalLockedClaim = (address: Address) =>
  ({ address, abi: VeLockNFTAbi, functionName: "totalLockedClaim" }) as const;

/** `options.signal` cancels the read's RPC calls (the supply deadline). */
export async function readTotalSupply(rpc: RpcClient, token: Address, options?: RpcCallOptions): Promise<bigint> {
  try {
    return await readView(rpc, totalSupply(token), options);
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
    // Every answer is checked as it arrives (`accept`), so a garbled one counts as the node's failure in the metrics.
    const rawBlock = await rpc
      .request(
        { method: "eth_blockNumber", params: [] },
        { ...options, accept: (r) => typeof r === "string" && HEX_QUANTITY.test(r) },
      )
      .catch((cause: unknown) => {
        // A block number that is not a hex quantity is a garbled answer like any other (same code).
        if (cause instanceof RpcError && cause.kind === "invalid")
          throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", "eth_blockNumber: not a hex quantity");
        throw cause;
      });
    if (typeof rawBlock !== "string" || !HEX_QUANTITY.test(rawBlock)) {
      throw new SupplyError("SUPPLY_RPC_INVALID_UINT256", "eth_blockNumber: not a hex quantity");
    }
    const blockNumber = BigInt(rawBlock);
    const block = numberToHex(blockNumber);
    const [totalView, lockedView] = [totalSupply(token), totalLockedClaim(veLock)];
    const values: bigint[] = [];
    let malformed: unknown;
    const decode = [(raw: unknown) => decodeView(totalView, raw), (raw: unknown) => decodeView(lockedView, raw)];
    const raws = await rpc
      .batch([viewRequest(totalView, block), viewRequest(lockedView, block)], {
        ...options,
        accept: (raw, i) => {
          try {
            values[i] = decode[i]!(raw);
            return true;
          } catch (error) {
            malformed = error;
            return false;
          }
        },
      })
      .catch((cause: unknown) => {
        throw malformed ?? viewFailure(totalView, cause);
      });
    // A client that does not run `accept` (a test's stand-in): decoded here.
    const total = values[0] ?? decodeView(totalView, raws[0]);
    const locked = values[1] ?? decodeView(lockedView, raws[1]);
    if (locked > total) {
      throw new SupplyError("SUPPLY_INCONSISTENT", `totalLockedClaim() exceeds totalSupply() at block ${blockNumber}`);
    }
    return { blockNumber, total, locked, circulating: total - locked };
  } catch (error) {
    throw toSupplyError(error);
  }
}
