import type { Address } from "viem";
import { BadParamsError, QuoteFailedError } from "../../../http/errors";
import type { ParamDoc } from "../../../http/params";
import type { DeployableName } from "../../../manifest";
import { BPS, DEFAULT_SLIPPAGE_BPS } from "../../../math";
import { lockNftAddress } from "../lockLimit";
import { type LockViaFurnaceQuote, quoteLockViaFurnace } from "../quote";
import { coalesceRequests } from "./coalesce";
import { refuseTopUpBelowMinimum } from "./furnace";
import { type LockTerms, refuseLockParams, requireMinVeOut } from "./lockTerms";
import { type NeedsWhen, type PrepareDeps, resolveContracts } from "./pipeline";
import { refuseNewLockAtLimit } from "./stateRead";

/**
 * A Furnace entry of what the wallet has pending, made by the contract in the wallet's transaction: collect mode 1
 * (the royalty ETH, which the published Furnace.lockEthReward swaps into the token with no minimum output) and
 * harvest with compound=true (the LP reward tokens, which the published vault enters with enterWithClaimFor after
 * quoting them itself with quoteEnterWithClaim). Either way the amount is what the wallet has pending when the
 * transaction runs, and minVeOut is the entry's only guard. Pending amounts only grow until collected, so the service
 * can quote what is pending now as the entry at least the transaction makes: given `user` and no minVeOutWei, it does,
 * and encodes the quote less slippageBps (the rules of lock-via-furnace, whose quote is the one shared).
 */

/** How one action's entry reads: its wording, the quote's unit, and how the pending amount is read. */
export type PendingEntry<M extends DeployableName> = {
  /** The request that locks, as a parameter: "mode=1", "compound=true". */
  locksWith: string;
  /** Where it starts a parameter's description: "Mode 1", "compound=true". */
  label: string;
  /** What is pending, after "the wallet's": "pending royalties". */
  pending: string;
  /** The quote's unit and its name in the answer: ETH (quoteEnterWithEth) or the token (quoteEnterWithClaim). */
  amount: "ethAmountWei" | "claimAmountWei";
  /** The get_state field holding the same amount, for a caller who quotes it through /quote/lock-via-furnace. */
  stateField: string;
  /** What slippageBps bounds in this entry. */
  slippageBounds: string;
  /** What the request would lock with nothing pending (the QUOTE_FAILED AmountZero message). */
  nothingPending: string;
  /** The deployments the quote needs beyond the action's own (FurnaceQuoter, and the contract read if need be). */
  needsWhen: NeedsWhen<M>;
  /** The pending amount, in `amount`'s unit; `quoted` holds needsWhen's contracts. */
  readPending(deps: PrepareDeps, quoted: Record<M, Address>, user: Address): Promise<bigint>;
};

/** The `when` of a needsWhen: the requests that have the service quote their entry. */
export const quotedWhen = (locksWith: string) => `${locksWith} without minVeOutWei`;

/** The three parameters of a pending entry's protection, worded for the action. */
export function pendingEntryParams(e: PendingEntry<DeployableName>) {
  const quoter = e.amount === "ethAmountWei" ? "quoteEnterWithEth" : "quoteEnterWithClaim";
  return {
    minVeOutWei: {
      kind: "uint256",
      description:
        `${e.label}: the least voting power to accept (wei, > 0). Omit it and give user: the service quotes the ` +
        `wallet's ${e.pending} (FurnaceQuoter.${quoter}) and takes the quote less slippageBps (the answer's ` +
        `\`quote\`). To choose it yourself, quote /quote/lock-via-furnace with ${e.amount} = the wallet's ` +
        `${e.stateField}.`,
    },
    slippageBps: {
      kind: "uint256",
      min: 0n,
      max: BPS,
      description:
        `${e.label} without minVeOutWei: the tolerated shortfall against the quote, in basis points (0 to 10000, ` +
        `default ${DEFAULT_SLIPPAGE_BPS}); it bounds ${e.slippageBounds}. Refused with minVeOutWei.`,
    },
    user: {
      kind: "address",
      description:
        `The wallet that signs. Needed for ${quotedWhen(e.locksWith)} (its ${e.pending} are quoted); also ` +
        "simulates the batch as that wallet (without it, simulation says skipped: no-user).",
    },
  } as const satisfies Record<string, ParamDoc>;
}

/** The protection as parsed: minVeOutWei undefined means "quote it from `user`'s pending amount" (user is set). */
export type EntryProtection = { minVeOutWei: bigint | undefined; user: Address | undefined; slippageBps: bigint };

/**
 * The strict rules of the three parameters, the same for every pending entry. A request that locks needs
 * minVeOutWei > 0 or user; slippageBps only applies to a quoted one. A request that pays out refuses all of them
 * (and the lock terms: refuseLockParams), never drops them.
 */
export function parseEntryProtection(
  url: string,
  e: Pick<PendingEntry<DeployableName>, "locksWith" | "pending">,
  locks: boolean,
  q: { minVeOutWei: bigint | undefined; user: Address | undefined; slippageBps: bigint | undefined },
): EntryProtection {
  if (!locks) {
    refuseLockParams(url, e.locksWith);
    refuseSlippage(q.slippageBps, `with ${e.locksWith}`);
  } else if (q.minVeOutWei === undefined) {
    if (q.user === undefined) {
      throw new BadParamsError(
        `${e.locksWith} needs minVeOutWei > 0, or user so that the service quotes the wallet's ${e.pending}.`,
        { param: "minVeOutWei" },
      );
    }
  } else {
    requireMinVeOut(q.minVeOutWei);
    refuseSlippage(q.slippageBps, "when minVeOutWei is omitted (the service then quotes it)");
  }
  return { minVeOutWei: q.minVeOutWei, user: q.user, slippageBps: q.slippageBps ?? DEFAULT_SLIPPAGE_BPS };
}

/** slippageBps given where nothing is quoted would be silently unused: refused, as lock parameters without a lock are. */
function refuseSlippage(slippageBps: bigint | undefined, onlyWhen: string): void {
  if (slippageBps !== undefined) {
    throw new BadParamsError(`slippageBps only applies ${onlyWhen}.`, { param: "slippageBps" });
  }
}

/** The quote behind a minVeOut the service derived, in lock-via-furnace's shape plus the amount it priced. */
type PendingQuote = Pick<LockViaFurnaceQuote, "veOutWei" | "minVeOutWei" | "slippageBps"> & { amountWei: bigint };
export type PendingEntryReads = { minVeOutWei: bigint; quote?: PendingQuote };

/**
 * The minVeOut to encode for a request that locks: the caller's, or the quote of what the wallet has pending less
 * slippageBps. needsWhen's deployments are resolved only here, for a quoted entry (CHAIN_UNREADY saying to give
 * minVeOutWei when one is missing), before any read.
 */
export async function readPendingEntry<M extends DeployableName>(
  deps: PrepareDeps,
  e: PendingEntry<M>,
  input: LockTerms & EntryProtection,
): Promise<PendingEntryReads> {
  if (input.minVeOutWei !== undefined) {
    // Not quoted, but a new lock all the same: with the signing wallet known, its room is read (one eth_call).
    if (input.targetTokenId === 0n && input.user !== undefined) await refuseNewLockAtLimit(deps, input.user);
    return { minVeOutWei: input.minVeOutWei };
  }
  const user = input.user!; // parseEntryProtection refuses a quoted entry without user
  const quoted = resolveContracts(deps.config.manifest, e.needsWhen.contracts, e.needsWhen);
  // A new lock's count (read with the quote) needs VeLockNFT: CHAIN_UNREADY before the pending amount is read.
  if (input.targetTokenId === 0n) lockNftAddress(deps.config.manifest);
  const amountWei = await e.readPending(deps, quoted, user);
  if (amountWei === 0n) throw new QuoteFailedError(e.nothingPending, { reason: "AmountZero" });
  const amount = e.amount === "ethAmountWei" ? { ethAmountWei: amountWei } : { claimAmountWei: amountWei };
  // A new lock's quote reads the wallet's lock count too (LOCK_LIMIT_REACHED at the limit): both in one batch.
  const io = { ...deps, rpc: deps.rpc && coalesceRequests(deps.rpc) };
  const quote = await quoteLockViaFurnace(io, { ...input, user, ...amount });
  if (quote.minVeOutWei === 0n) {
    // The Furnace reverts MinVeOutRequired on 0; an entry worth no voting power is not worth signing.
    throw new QuoteFailedError("The quote gives no voting power for this entry.", { reason: "ZeroVeOut" });
  }
  refuseTopUpBelowMinimum(input.targetTokenId, quote);
  return { minVeOutWei: quote.minVeOutWei, quote: { ...quote, amountWei } };
}

/** The answer's `quote` when the service derived minVeOut: the amount under its unit's name, then the quote. */
export function pendingQuoteExtra(
  e: Pick<PendingEntry<DeployableName>, "amount">,
  reads: PendingEntryReads,
): { extra?: Record<string, unknown> } {
  if (!reads.quote) return {};
  const q = reads.quote;
  return {
    extra: {
      quote: {
        [e.amount]: q.amountWei.toString(),
        veOutWei: q.veOutWei.toString(),
        minVeOutWei: q.minVeOutWei.toString(),
        // A JSON number, as in lock-via-furnace's answer; it is at most 10000.
        slippageBps: Number(q.slippageBps),
      },
    },
  };
}
