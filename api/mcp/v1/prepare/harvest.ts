import { LpStakingVault7DAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { NEW_LOCK_LIMIT } from "../lockLimit";
import { type LockTerms, requireLockDuration, requireLockTerms } from "./lockTerms";
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
import { defineAction } from "./pipeline";
import { readStateView } from "./stateRead";

/**
 * harvest-rewards (verb: Harvest): the LP staking rewards, paid to the wallet or, with compound=true,
 * locked via the Furnace. Lock parameters without compound=true are refused rather than silently
 * dropped: the plain call takes no arguments, so the user's intent could not be honoured.
 *
 * compound=true: the published vault's claimRewardsAndLock takes the wallet's rewards (earned), quotes them itself
 * (FurnaceQuoter.quoteEnterWithClaim, for its event) and enters them with Furnace.enterWithClaimFor, minVeOut being
 * the entry's only guard. Rewards only grow until harvested, so the entry is derivable before the transaction, as
 * collect mode 1's is: given `user` and no minVeOutWei, the action quotes earned(user) and encodes the quote less
 * slippageBps (pendingEntry.ts). Only that quote needs FurnaceQuoter.
 */

const REWARDS: PendingEntry<"LpStakingVault7D" | "FurnaceQuoter"> = {
  locksWith: "compound=true",
  label: "compound=true",
  pending: "pending LP rewards",
  amount: "claimAmountWei",
  stateField: "pendingLpRewardsWei",
  // No swap: the tokens enter as they are. What moves is the Furnace's bonus, and a plain lock's time left.
  slippageBounds: "how far the Furnace bonus and a top-up's remaining time may move before the transaction is mined",
  nothingPending:
    "No LP rewards are pending for this wallet: compound=true would lock nothing (the vault would return without " +
    "a transfer).",
  // The vault is among the action's needs anyway; the quote adds the quoter.
  needsWhen: {
    contracts: ["LpStakingVault7D", "FurnaceQuoter"],
    when: quotedWhen("compound=true"),
    param: "minVeOutWei",
  },
  readPending: (deps, quoted, user) =>
    readStateView(deps, "The pending LP rewards", {
      address: quoted.LpStakingVault7D,
      abi: LpStakingVault7DAbi,
      functionName: "earned",
      args: [user],
    }),
};

export const HARVEST_PARAMS = {
  compound: {
    kind: "bool",
    default: "false",
    description:
      "false pays the rewards to the wallet; true locks them via the Furnace with the lock parameters below.",
  },
  targetTokenId: {
    kind: "uint256",
    default: "0",
    description: `compound=true: the lock to add to, or 0 to create a new lock${NEW_LOCK_LIMIT}.`,
  },
  durationSeconds: {
    kind: "uint256",
    default: "0",
    description:
      "compound=true: lock duration in seconds, 604800 (7 days) to 31536000 (365 days) — for a top-up too, which the " +
      "vault checks (an AutoMax lock's top-up: 31536000; a plain lock keeps its end).",
  },
  createAutoMax: {
    kind: "bool",
    default: "false",
    description: "compound=true, new lock: keep the lock at the maximum length (needs durationSeconds=31536000).",
  },
  ...pendingEntryParams(REWARDS),
} as const satisfies Record<string, ParamDoc>;

export type HarvestInput = { compound: false } | (LockTerms & EntryProtection & { compound: true });

export function parseHarvestQuery(url: string): HarvestInput {
  const q = parseQuery(url, HARVEST_PARAMS);
  if (q.compound !== true) {
    parseEntryProtection(url, REWARDS, false, q);
    return { compound: false };
  }
  const terms = requireLockTerms({
    targetTokenId: q.targetTokenId ?? 0n,
    durationSeconds: q.durationSeconds ?? 0n,
    createAutoMax: q.createAutoMax ?? false,
  });
  // The published vault checks the duration before any lock, for a top-up too (claimRewardsAndLock: InvalidDuration).
  if (terms.targetTokenId !== 0n) {
    requireLockDuration("durationSeconds", terms.durationSeconds, "createAutoMax", false, "a top-up through the vault");
  }
  return { compound: true, ...terms, ...parseEntryProtection(url, REWARDS, true, q) };
}

export const harvestRewards = defineAction({
  action: "harvest-rewards",
  verb: "Harvest",
  steps: ["harvest"],
  contract: "LpStakingVault7D",
  function: "claimRewards | claimRewardsAndLock",
  needs: ["LpStakingVault7D"],
  needsWhen: REWARDS.needsWhen,
  params: HARVEST_PARAMS,
  description:
    "Harvest: takes the token rewards earned by the wallet's staked LP. " +
    "By default they are paid to the wallet; with compound=true they are locked via the Furnace (at most once a " +
    "day), with no bound but minVeOutWei: give user and omit minVeOutWei, and the service quotes the pending " +
    "rewards and protects the entry with that quote less slippageBps (the answer's `quote`).",
  parse: parseHarvestQuery,
  // The plain claim takes no minVeOut: nothing is read for it.
  read: (deps, _contracts, input) =>
    input.compound ? readPendingEntry(deps, REWARDS, input) : Promise.resolve({ minVeOutWei: 0n }),
  // The published vault returns quietly when nothing is earned (claimRewards and claimRewardsAndLock alike).
  idle: "Nothing to harvest: the wallet has earned no LP rewards yet. The transaction would succeed and move nothing.",
  encode: (contracts, input: HarvestInput, reads: PendingEntryReads) => ({
    calls: [
      {
        step: "harvest",
        to: contracts.LpStakingVault7D,
        data: input.compound
          ? encodeCall(LpStakingVault7DAbi, "claimRewardsAndLock", [
              input.targetTokenId,
              input.durationSeconds,
              input.createAutoMax,
              reads.minVeOutWei,
            ])
          : encodeCall(LpStakingVault7DAbi, "claimRewards", []),
      },
    ],
    ...pendingQuoteExtra(REWARDS, reads),
  }),
});
