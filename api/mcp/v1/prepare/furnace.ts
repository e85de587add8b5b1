import type { Address } from "viem";
import { FurnaceAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import { BadParamsError, QuoteFailedError } from "../../../http/errors";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { BPS, DEFAULT_SLIPPAGE_BPS, MIN_TOPUP_AMOUNT } from "../../../math";
import { lockNftAddress } from "../lockLimit";
import { type LockViaFurnaceQuote, QUOTE_PARAMS, quoteLockViaFurnace } from "../quote";
import { readAllowance, withApproval } from "./approval";
import { coalesceRequests } from "./coalesce";
import { type LockTerms, requireAtLeast, requireLockTerms } from "./lockTerms";
import { defineAction } from "./pipeline";

/**
 * lock-via-furnace (verb: Lock via Furnace): the quote comes first, and the minVeOut the entry carries
 * is the quote's clamped one — the very number /quote/lock-via-furnace shows for the same inputs, since
 * both go through quoteLockViaFurnace. The Furnace pulls the amount, hence the exact approve when short.
 */

export const FURNACE_PARAMS = {
  ...QUOTE_PARAMS,
  user: {
    kind: "address",
    required: true,
    description: "The wallet that locks (it signs both steps; not the zero address).",
  },
  claimAmountWei: {
    ...QUOTE_PARAMS.claimAmountWei,
    description: "Token amount in wei to lock (> 0, at most 2^128 − 1: no wallet holds more).",
  },
} as const satisfies Record<string, ParamDoc>;

export type FurnaceInput = LockTerms & { user: Address; claimAmountWei: bigint; slippageBps: bigint };

/**
 * A quoted entry into an existing lock that adds less than MIN_TOPUP_AMOUNT (principal + bonus, protocol.md §1:
 * addToLockFor needs 1 token) reverts on chain (published: the NFT's minimum, re-thrown by the Furnace as
 * InvariantViolation), though the quoter does not check it. The quote is in hand, so it is refused as a quoter
 * revert is, before the wallet signs an approve for a call that cannot succeed.
 */
export function refuseTopUpBelowMinimum(
  targetTokenId: bigint,
  quote: Pick<LockViaFurnaceQuote, "principalClaimWei" | "bonusClaimWei">,
): void {
  const added = quote.principalClaimWei + quote.bonusClaimWei;
  if (targetTokenId === 0n || added >= MIN_TOPUP_AMOUNT) return;
  throw new QuoteFailedError(
    `A top-up must add at least ${MIN_TOPUP_AMOUNT} wei (1 token, principal plus bonus); this one adds ${added}: ` +
      "the Furnace would revert InvariantViolation.",
    { reason: "MinTopUpAmountNotMet", minWei: String(MIN_TOPUP_AMOUNT), addedWei: String(added) },
  );
}
export type FurnaceReads = {
  quote: Pick<LockViaFurnaceQuote, "veOutWei" | "minVeOutWei" | "slippageBps">;
  allowance: bigint;
};

export function parseFurnaceQuery(url: string): FurnaceInput {
  const q = parseQuery(url, FURNACE_PARAMS);
  const claimAmountWei = requireAtLeast("claimAmountWei", q.claimAmountWei, 1n, "locking 0 reverts");
  const terms = requireLockTerms({
    targetTokenId: q.targetTokenId ?? 0n,
    durationSeconds: q.durationSeconds ?? 0n,
    createAutoMax: q.createAutoMax ?? false,
  });
  const slippageBps = q.slippageBps ?? DEFAULT_SLIPPAGE_BPS;
  if (slippageBps > BPS) {
    throw new BadParamsError("slippageBps must be between 0 and 10000.", {
      param: "slippageBps",
      min: "0",
      max: "10000",
    });
  }
  return { user: q.user, claimAmountWei, ...terms, slippageBps };
}

export const lockViaFurnace = defineAction({
  action: "lock-via-furnace",
  verb: "Lock via Furnace",
  steps: ["approve", "lock"],
  contract: "Furnace",
  function: "enterWithClaim",
  needs: ["Furnace", "FurnaceQuoter", "AssetToken"],
  params: FURNACE_PARAMS,
  description:
    "Lock via Furnace: locks tokens from the wallet through the Furnace, which adds a bonus that grows with the " +
    "lock duration, into a new lock or an existing one. The service quotes the entry first and protects it with " +
    "the quoted voting power less slippageBps; the response shows that quote. An approve step for the exact " +
    "amount comes first when the Furnace's allowance is short.",
  parse: parseFurnaceQuery,
  // The published Furnace turns the lock NFT's own refusals into InvariantViolation (Furnace._createNewLock,
  // _approveVeAndAddToLock), which the quoter does not foresee: say what they are.
  hint: (input: FurnaceInput) => (error, step) =>
    error.name === "InvariantViolation" && step === "lock"
      ? {
          message:
            input.targetTokenId === 0n
              ? "The Furnace could not make the lock: the wallet most likely holds the maximum of 32 locks. Top up " +
                "one of them instead (targetTokenId)."
              : "The Furnace could not add to the lock: a top-up must come to at least 1 token (amount plus bonus).",
        }
      : undefined,
  async read(deps, contracts, input): Promise<FurnaceReads> {
    // A new lock's count is read with the quote: without VeLockNFT, CHAIN_UNREADY before any read.
    if (input.targetTokenId === 0n) lockNftAddress(deps.config.manifest);
    // Independent reads, in one JSON-RPC batch (one round trip); the quote's failure is reported first.
    const io = { ...deps, rpc: deps.rpc && coalesceRequests(deps.rpc) };
    const [quote, allowance] = await Promise.allSettled([
      quoteLockViaFurnace(io, input),
      readAllowance(io, {
        token: "AssetToken",
        tokenAddress: contracts.AssetToken,
        owner: input.user,
        spender: contracts.Furnace,
      }),
    ]);
    if (quote.status === "rejected") throw quote.reason;
    if (allowance.status === "rejected") throw allowance.reason;
    if (quote.value.minVeOutWei === 0n) {
      // The Furnace reverts MinVeOutRequired on 0; an entry worth no voting power is not worth signing.
      throw new QuoteFailedError("The quote gives no voting power for this entry.", { reason: "ZeroVeOut" });
    }
    refuseTopUpBelowMinimum(input.targetTokenId, quote.value);
    return { quote: quote.value, allowance: allowance.value };
  },
  encode: (contracts, input, reads: FurnaceReads) => ({
    calls: withApproval(
      {
        token: "AssetToken",
        tokenAddress: contracts.AssetToken,
        spender: contracts.Furnace,
        amount: input.claimAmountWei,
        allowance: reads.allowance,
      },
      {
        step: "lock",
        to: contracts.Furnace,
        data: encodeCall(FurnaceAbi, "enterWithClaim", [
          input.claimAmountWei,
          input.targetTokenId,
          input.durationSeconds,
          input.createAutoMax,
          reads.quote.minVeOutWei,
        ]),
      },
    ),
    extra: {
      quote: {
        veOutWei: reads.quote.veOutWei.toString(),
        minVeOutWei: reads.quote.minVeOutWei.toString(),
        // A JSON number, as the reference's client types have it (protocol.md §5); it is at most 10000.
        slippageBps: Number(reads.quote.slippageBps),
      },
    },
  }),
});
