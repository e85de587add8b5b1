import { ClaimAllHelperAbi, ShareholderRoyaltiesAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { NEW_LOCK_LIMIT } from "../lockLimit";
import { type LockTerms, requireLockTerms } from "./lockTerms";
import {
  type EntryProtection,
  type PendingEntry,
  type PendingEntryReads,
  parseEntryProtection,
  pendingEntryParams,
  pendingQuoteExtra,
  quotedWhen,
  readPendingEntry,
} from "./pendingEntry";
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
 * royalties itself (FurnaceQuoter.quoteEnterWithEth of claimableEth, less slippageBps: pendingEntry.ts); a
 * minVeOutWei the caller gives is encoded as given. Only that quote needs FurnaceQuoter (and, for collect-all,
 * ShareholderRoyalties): mode 0 and a given minVeOutWei work on a manifest without them. The published
 * ClaimAllHelper.claimAll collects the royalties and withdraws the King's ETH balance from MineCore; it does
 * not touch the LP vault (the spec's "bundled royalties + LP" is not what it does: docs/limitations.md).
 */

/**
 * The royalties as a pending entry. The quote reads them from ShareholderRoyalties, which collect-all does not
 * otherwise call (collect-royalties calls it, and has it among its needs anyway).
 */
const ROYALTIES: PendingEntry<"ShareholderRoyalties" | "FurnaceQuoter"> = {
  locksWith: "mode=1",
  label: "Mode 1",
  pending: "pending royalties",
  amount: "ethAmountWei",
  stateField: "pendingRoyaltiesEthWei",
  slippageBounds: "what the ETH-to-token swap may lose",
  nothingPending:
    "No royalties are pending for this wallet: mode=1 would lock nothing (collect-all with mode=0 still " +
    "withdraws a King balance).",
  needsWhen: { contracts: ["ShareholderRoyalties", "FurnaceQuoter"], when: quotedWhen("mode=1"), param: "minVeOutWei" },
  // ShareholderRoyalties.claimableEth: what the published claim pays after its checkpoint.
  readPending: (deps, quoted, user) =>
    readStateView(deps, "The pending royalties", {
      address: quoted.ShareholderRoyalties,
      abi: ShareholderRoyaltiesAbi,
      functionName: "claimableEth",
      args: [user],
    }),
};

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
      `Mode 1: the lock to add to, or 0 to create a new lock${NEW_LOCK_LIMIT}. Refused with mode 0, as the other ` +
      "lock parameters.",
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
  ...pendingEntryParams(ROYALTIES),
} as const satisfies Record<string, ParamDoc>;

export type CollectInput = LockTerms & EntryProtection & { mode: 0 | 1 };

export function parseCollectQuery(url: string): CollectInput {
  const q = parseQuery(url, COLLECT_PARAMS);
  const locks = q.mode === 1n;
  const terms: LockTerms = {
    targetTokenId: q.targetTokenId ?? 0n,
    durationSeconds: q.durationSeconds ?? 0n,
    createAutoMax: q.createAutoMax ?? false,
  };
  if (locks) requireLockTerms(terms);
  return { mode: locks ? 1 : 0, ...terms, ...parseEntryProtection(url, ROYALTIES, locks, q) };
}

/** Mode 0 locks nothing: its minVeOut argument is the default 0 the contract ignores. */
function readCollect(deps: PrepareDeps, input: CollectInput): Promise<PendingEntryReads> {
  return input.mode === 0 ? Promise.resolve({ minVeOutWei: 0n }) : readPendingEntry(deps, ROYALTIES, input);
}

const lockArgs = (i: CollectInput, reads: PendingEntryReads) =>
  [i.mode, i.targetTokenId, i.durationSeconds, i.createAutoMax, reads.minVeOutWei] as const;

export const collectAll = defineAction({
  action: "collect-all",
  verb: "Collect",
  steps: ["collect"],
  contract: "ClaimAllHelper",
  function: "claimAll",
  needs: ["ClaimAllHelper"],
  needsWhen: ROYALTIES.needsWhen,
  params: COLLECT_PARAMS,
  description:
    "Collect: gathers the wallet's shareholder royalties (ETH) and withdraws its King balance (the ETH MineCore " +
    "holds for it) in one transaction. With mode=0 the royalties are paid to the wallet; with mode=1 they are " +
    "converted to the token and locked via the Furnace; the King balance is paid in ETH either way. LP staking " +
    "rewards are not collected here: Harvest them (harvest-rewards). Mode 1 swaps the royalty ETH into the token " +
    "with no price bound but minVeOutWei: give user and omit minVeOutWei, and the service quotes the pending " +
    "royalties and protects the entry with that quote less slippageBps (the answer's `quote`).",
  parse: parseCollectQuery,
  read: (deps, _contracts, input) => readCollect(deps, input),
  encode: (contracts, input: CollectInput, reads: PendingEntryReads) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ClaimAllHelper,
        data: encodeCall(ClaimAllHelperAbi, "claimAll", lockArgs(input, reads)),
      },
    ],
    ...pendingQuoteExtra(ROYALTIES, reads),
  }),
});

export const collectRoyalties = defineAction({
  action: "collect-royalties",
  verb: "Collect",
  steps: ["collect"],
  contract: "ShareholderRoyalties",
  function: "claimShareholder",
  needs: ["ShareholderRoyalties"],
  needsWhen: ROYALTIES.needsWhen,
  params: COLLECT_PARAMS,
  description:
    "Collect: takes the wallet's accrued shareholder royalties. " +
    "With mode=0 the ETH is paid to the wallet; with mode=1 it is converted to the token and locked via the Furnace, " +
    "with no price bound but minVeOutWei: give user and omit minVeOutWei, and the service quotes the pending " +
    "royalties and protects the entry with that quote less slippageBps (the answer's `quote`).",
  parse: parseCollectQuery,
  read: (deps, _contracts, input) => readCollect(deps, input),
  encode: (contracts, input: CollectInput, reads: PendingEntryReads) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ShareholderRoyalties,
        data: encodeCall(ShareholderRoyaltiesAbi, "claimShareholder", lockArgs(input, reads)),
      },
    ],
    ...pendingQuoteExtra(ROYALTIES, reads),
  }),
});
