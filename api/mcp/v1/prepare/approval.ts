import type { Address } from "viem";
import { AssetTokenAbi, LpTokenAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { Call, PrepareDeps } from "./pipeline";
import { readStateView } from "./stateRead";

/**
 * The approval rule (protocol.md §5): an `approve(spender, exact amount)` step goes first exactly when
 * `allowance(user, spender) < amount`. Never an unlimited approval: the user signs for what this
 * action pulls and nothing more.
 */

/**
 * The largest amount an action that approves may name: 2^128 − 1 wei (3.4e20 tokens; no wallet holds more). A larger
 * one (up to 2^256 − 1) would make its approve step an effectively unlimited approval, left standing when a wallet
 * sends the batch's calls one by one and the main call reverts (as it must: no wallet holds that much). Refused as
 * BAD_PARAMS before any RPC, as every bad input is (spec §7.2). The Furnace entries and their quote (quote.ts) take the
 * same bound: far larger amounts (2^256 − 1, 1e73) overflow the quoter's arithmetic (Panic 17), which came back as a
 * 502 QUOTE_FAILED inviting retries.
 */
export const MAX_AMOUNT_WEI = 2n ** 128n - 1n;
/** The sentence the parameters' descriptions end with. */
export const AT_MOST_AMOUNT = "At most 2^128 − 1 (no wallet holds more).";

/** Which ERC-20 is approved; both share the standard surface, each keeps its own ABI from abis/. */
export type ApprovalToken = "AssetToken" | "LpToken";

const TOKEN_ABI = { AssetToken: AssetTokenAbi, LpToken: LpTokenAbi } as const;

export type AllowanceQuery = { token: ApprovalToken; tokenAddress: Address; owner: Address; spender: Address };

/** One eth_call through the app's RpcClient; anything but a strict 0x+64 word is STATE_READ_FAILED (502). */
export async function readAllowance(deps: Pick<PrepareDeps, "rpc">, q: AllowanceQuery): Promise<bigint> {
  const abi = TOKEN_ABI[q.token] as typeof AssetTokenAbi;
  return readStateView(deps, "The token allowance", {
    address: q.tokenAddress,
    abi,
    functionName: "allowance",
    args: [q.owner, q.spender],
  });
}

export type Approval = {
  token: ApprovalToken;
  tokenAddress: Address;
  spender: Address;
  amount: bigint;
  allowance: bigint;
};

/** Prepends the exact approve step when the allowance falls short; otherwise the main call alone. */
export function withApproval(approval: Approval, main: Call): Call[] {
  if (approval.allowance >= approval.amount) return [main];
  const data = encodeCall(TOKEN_ABI[approval.token], "approve", [approval.spender, approval.amount]);
  return [{ step: "approve", to: approval.tokenAddress, data }, main];
}
