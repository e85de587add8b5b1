import { type Abi, decodeErrorResult, type Hex } from "viem";
import {
  AssetTokenAbi,
  ClaimAllHelperAbi,
  FurnaceAbi,
  FurnaceQuoterAbi,
  LaunchControllerAbi,
  LpStakingVault7DAbi,
  LpTokenAbi,
  ShareholderRoyaltiesAbi,
  VeLockNFTAbi,
} from "../../abis";
import { ErrorsAbi } from "../../abis/Errors";

/**
 * Every custom error any protocol contract declares, once each. A quoter call can bubble up an error
 * from a contract it calls (the NFT, the vault), so a revert is decoded against all of them.
 */
export const PROTOCOL_ERRORS_ABI: Abi = (() => {
  const all = [
    ErrorsAbi,
    AssetTokenAbi,
    VeLockNFTAbi,
    LaunchControllerAbi,
    FurnaceAbi,
    FurnaceQuoterAbi,
    ClaimAllHelperAbi,
    ShareholderRoyaltiesAbi,
    LpStakingVault7DAbi,
    LpTokenAbi,
  ].flatMap((abi) => (abi as Abi).filter((item) => item.type === "error"));
  const seen = new Map<string, (typeof all)[number]>();
  for (const item of all) {
    const key = JSON.stringify(item);
    if (!seen.has(key)) seen.set(key, item);
  }
  return [...seen.values()];
})();

export type DecodedRevert = {
  /** The custom error name, `Error` for `require(…, "reason")`, `Panic` for a panic code. */
  name: string;
  /** Decoded arguments as strings (bigints → decimal), for `Error(string)` the reason text. */
  args: string[];
};

/**
 * Decodes revert data into an error name, or null when there is none (a bare `revert()`, no data)
 * or the selector is not one of ours.
 */
export function decodeRevert(data: string | undefined): DecodedRevert | null {
  if (typeof data !== "string" || !/^0x[0-9a-fA-F]{8}(?:[0-9a-fA-F]{2})*$/.test(data)) return null;
  try {
    const decoded = decodeErrorResult({ abi: PROTOCOL_ERRORS_ABI, data: data as Hex });
    const args = (decoded.args ?? []).map((a) => (typeof a === "bigint" ? a.toString() : String(a)));
    return { name: decoded.errorName, args };
  } catch {
    return null;
  }
}
