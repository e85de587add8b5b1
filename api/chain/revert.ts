import { type Abi, decodeErrorResult, type Hex } from "viem";
import { ErrorsAbi, LocalErrorsAbi, TokenErrorsAbi } from "../../abis/Errors";

/**
 * The published contracts declare every custom error once, in one Errors library, with no arguments
 * (protocol.md §8); a call can bubble up an error from a contract it calls, so one list decodes them all,
 * with the few a contract declares itself (LpStakingVault7D's `LockCooldown`) and the token's own OpenZeppelin v5
 * errors, with arguments, which a Furnace entry bubbles up when the wallet's allowance or balance is short.
 * viem adds `Error(string)` and `Panic(uint256)` (the LP token's OpenZeppelin 4.x reasons are `Error(string)`).
 */
export const PROTOCOL_ERRORS_ABI: Abi = [...ErrorsAbi, ...LocalErrorsAbi, ...TokenErrorsAbi];

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
