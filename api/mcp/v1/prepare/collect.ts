import type { Address } from "viem";
import { ClaimAllHelperAbi, ShareholderRoyaltiesAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import { BadParamsError, QuoteFailedError } from "../../../http/errors";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { BPS, DEFAULT_SLIPPAGE_BPS } from "../../../math";
import { type LockViaFurnaceQuote, quoteLockViaFurnace } from "../quote";
import { refuseTopUpBelowMinimum } from "./furnace";
import { type LockTerms, refuseLockParams, requireLockTerms, requireMinVeOut } from "./lockTerms";
import { defineAction, type PrepareDeps } from "./pipeline";
import { readStateView } from "./stateRead";

/**
 * collect-all and collect-royalties (verb: Collect). Mode 0 pays the ETH out (the contract ignores the lock
 * arguments, so they are encoded as their defaults, and lock parameters given with mode 0 are refused rather than
 * dropped, as harvest-rewards refuses them without compound); mode 1 turns it into the token and locks it through
 * the Furnace, so the lock rules and minVeOut > 0 apply. No other mode exists on chain.
 *
 * Mode 1 locks ETH: the published Furnace.lockEthReward swaps it into the token with no minimum output, so minVeOut
 * is the entry's only slippage guard. Given `user` and no minVeOutWei, the action quotes the wallet's pending
 * royalties itself (FurnaceQuoter.quoteEnterWithEth of claimableEth, less slippageBps), as lock-via-furnace does;
 * a minVeOutWei the caller gives is encoded as given. The published
 * ClaimAllHelper.claimAll collects the royalties and withdraws the King's ETH balance from MineCore; it does
 * not touch the LP vault (the spec's "bundled royalties + LP" is not what it does: docs/limitations.md).
 */

export const COLLECT_PARAMS = {
  mode: {
    kind: "uint256",
    default: "0",
    min: 0n,
    max: 1n,
    description: "0 pays the collected ETH to the wallet; 1 converts it to the token and locks it via the Furnace.",
  },
  targetTokenId: {
    kind: "uint256",
    default: "0",
    description:
      "Mode 1: the lock to add to, or 0 to create a new lock. Refused with mode 0, as the other lock parameters.",
  },
  durationSeconds: {
    kind: "uint256",
    default: "0",
    description:
      "Mode 1, new lock: lock duration in seconds, 604800 (7 days) to 31536000 (365 days). Mode 1 into an AutoMax " +
      "lock: 31536000 (the Furnace refuses less).",
  },
  createAutoMax: {
    kind: "bool",
    default: "false",
    description: "Mode 1, new lock: keep the lock at the maximum length (needs durationSeconds=31536000).",
  },
  minVeOutWei: {
    kind: "uint256",
    description:
      "Mode 1: the least voting power to accept (wei, > 0). Omit it and give user: the service quotes the " +
      "wallet's pending royalties (FurnaceQuoter.quoteEnterWithEth) and takes the quote less slippageBps (the " +
      "answer's `quote`). To choose it yourself, quote /quote/lock-via-furnace with ethAmountWei = the wallet's " +
      "pendingRoyaltiesEthWei.",
  },
  slippageBps: {
    kind: "uint256",
    min: 0n,
    max: BPS,
    description:
      `Mode 1 without minVeOutWei: the tolerated shortfall against the quote, in basis points (0 to 10000, ` +
      `default ${DEFAULT_SLIPPAGE_BPS}); it bounds what the ETH-to-token swap may lose. Refused with minVeOutWei.`,
  },
  user: {
    kind: "address",
    description:
      "The wallet that collects (it signs). Needed for mode 1 without minVeOutWei (its pending royalties are " +
      "quoted); also simulates the batch as that wallet (without it, simulation says skipped: no-user).",
  },
} as const satisfies Record<string, ParamDoc>;

export type CollectInput = LockTerms & {
  mode: 0 | 1;
  /** undefined: mode 1 with minVeOut to be quoted from `user`'s pending royalties (read). */
  minVeOutWei: bigint | undefined;
  user: Address | undefined;
  slippageBps: bigint;
};

/** The quote behind a minVeOut the service derived, shown in the answer as lock-via-furnace shows its own. */
type RoyaltyQuote = Pick<LockViaFurnaceQuote, "veOutWei" | "minVeOutWei" | "slippageBps"> & { ethAmountWei: bigint };
export type CollectReads = { minVeOutWei: bigint; quote?: RoyaltyQuote };

export function parseCollectQuery(url: string): CollectInput {
  const q = parseQuery(url, COLLECT_PARAMS);
  const mode = q.mode;
  const terms: LockTerms = {
    targetTokenId: q.targetTokenId ?? 0n,
    durationSeconds: q.durationSeconds ?? 0n,
    createAutoMax: q.createAutoMax ?? false,
  };
  if (mode === 1n) {
    requireLockTerms(terms);
    if (q.minVeOutWei === undefined) {
      if (q.user === undefined) {
        throw new BadParamsError(
          "mode=1 needs minVeOutWei > 0, or user so that the service quotes the wallet's pending royalties.",
          { param: "minVeOutWei" },
        );
      }
    } else {
      requireMinVeOut(q.minVeOutWei);
      refuseSlippage(q.slippageBps, "when minVeOutWei is omitted (the service then quotes it)");
    }
  } else {
    refuseLockParams(url, "mode=1");
    refuseSlippage(q.slippageBps, "with mode=1");
  }
  return {
    mode: mode === 1n ? 1 : 0,
    ...terms,
    minVeOutWei: q.minVeOutWei,
    user: q.user,
    slippageBps: q.slippageBps ?? DEFAULT_SLIPPAGE_BPS,
  };
}

/** slippageBps given where nothing is quoted would be silently unused: refused, as lock parameters with mode 0 are. */
function refuseSlippage(slippageBps: bigint | undefined, onlyWhen: string): void {
  if (slippageBps !== undefined) {
    throw new BadParamsError(`slippageBps only applies ${onlyWhen}.`, { param: "slippageBps" });
  }
}

/**
 * Mode 1 without minVeOutWei: the wallet's pending royalties (ShareholderRoyalties.claimableEth, what the published
 * claim pays after its checkpoint) quoted as the ETH entry the Furnace makes of them. Royalties only grow until
 * collected, so the entry at execution is at least the one quoted.
 */
async function readCollect(deps: PrepareDeps, royalties: Address, input: CollectInput): Promise<CollectReads> {
  if (input.mode === 0) return { minVeOutWei: 0n };
  if (input.minVeOutWei !== undefined) return { minVeOutWei: input.minVeOutWei };
  const user = input.user!; // parse refuses mode 1 without minVeOutWei and without user
  const ethAmountWei = await readPendingRoyalties(deps, royalties, user);
  if (ethAmountWei === 0n) {
    throw new QuoteFailedError(
      "No royalties are pending for this wallet: mode=1 would lock nothing (collect-all with mode=0 still " +
        "withdraws a King balance).",
      { reason: "AmountZero" },
    );
  }
  const quote = await quoteLockViaFurnace(deps, { ...input, user, ethAmountWei });
  if (quote.minVeOutWei === 0n) {
    // The Furnace reverts MinVeOutRequired on 0; an entry worth no voting power is not worth signing.
    throw new QuoteFailedError("The quote gives no voting power for this entry.", { reason: "ZeroVeOut" });
  }
  refuseTopUpBelowMinimum(input.targetTokenId, quote);
  return { minVeOutWei: quote.minVeOutWei, quote: { ...quote, ethAmountWei } };
}

function readPendingRoyalties(deps: PrepareDeps, royalties: Address, user: Address): Promise<bigint> {
  return readStateView(deps, "The pending royalties", {
    address: royalties,
    abi: ShareholderRoyaltiesAbi,
    functionName: "claimableEth",
    args: [user],
  });
}

const lockArgs = (i: CollectInput, reads: CollectReads) =>
  [i.mode, i.targetTokenId, i.durationSeconds, i.createAutoMax, reads.minVeOutWei] as const;

/** The quote behind a derived minVeOut, in lock-via-furnace's shape plus the ETH it priced. */
const quoteExtra = (reads: CollectReads) =>
  reads.quote
    ? {
        extra: {
          quote: {
            ethAmountWei: reads.quote.ethAmountWei.toString(),
            veOutWei: reads.quote.veOutWei.toString(),
            minVeOutWei: reads.quote.minVeOutWei.toString(),
            // A JSON number, as in lock-via-furnace's answer; it is at most 10000.
            slippageBps: Number(reads.quote.slippageBps),
          },
        },
      }
    : {};

export const collectAll = defineAction({
  action: "collect-all",
  verb: "Collect",
  steps: ["collect"],
  contract: "ClaimAllHelper",
  function: "claimAll",
  // Mode 1 without minVeOutWei reads the royalties and quotes them: a deployment that lacks either is not ready.
  needs: ["ClaimAllHelper", "ShareholderRoyalties", "FurnaceQuoter"],
  params: COLLECT_PARAMS,
  description:
    "Collect: gathers the wallet's shareholder royalties (ETH) and withdraws its King balance (the ETH MineCore " +
    "holds for it) in one transaction. With mode=0 the royalties are paid to the wallet; with mode=1 they are " +
    "converted to the token and locked via the Furnace; the King balance is paid in ETH either way. LP staking " +
    "rewards are not collected here: Harvest them (harvest-rewards). Mode 1 swaps the royalty ETH into the token " +
    "with no price bound but minVeOutWei: give user and omit minVeOutWei, and the service quotes the pending " +
    "royalties and protects the entry with that quote less slippageBps (the answer's `quote`).",
  parse: parseCollectQuery,
  read: (deps, contracts, input) => readCollect(deps, contracts.ShareholderRoyalties, input),
  encode: (contracts, input: CollectInput, reads: CollectReads) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ClaimAllHelper,
        data: encodeCall(ClaimAllHelperAbi, "claimAll", lockArgs(input, reads)),
      },
    ],
    ...quoteExtra(reads),
  }),
});

export const collectRoyalties = defineAction({
  action: "collect-royalties",
  verb: "Collect",
  steps: ["collect"],
  contract: "ShareholderRoyalties",
  function: "claimShareholder",
  needs: ["ShareholderRoyalties", "FurnaceQuoter"],
  params: COLLECT_PARAMS,
  description:
    "Collect: takes the wallet's accrued shareholder royalties. " +
    "With mode=0 the ETH is paid to the wallet; with mode=1 it is converted to the token and locked via the Furnace, " +
    "with no price bound but minVeOutWei: give user and omit minVeOutWei, and the service quotes the pending " +
    "royalties and protects the entry with that quote less slippageBps (the answer's `quote`).",
  parse: parseCollectQuery,
  read: (deps, contracts, input) => readCollect(deps, contracts.ShareholderRoyalties, input),
  encode: (contracts, input: CollectInput, reads: CollectReads) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ShareholderRoyalties,
        data: encodeCall(ShareholderRoyaltiesAbi, "claimShareholder", lockArgs(input, reads)),
      },
    ],
    ...quoteExtra(reads),
  }),
});
