import { LpStakingVault7DAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { type LockTerms, refuseLockParams, requireLockDuration, requireLockTerms, requireMinVeOut } from "./lockTerms";
import { defineAction } from "./pipeline";

/**
 * harvest-rewards (verb: Harvest): the LP staking rewards, paid to the wallet or, with compound=true,
 * locked via the Furnace. Lock parameters without compound=true are refused rather than silently
 * dropped: the plain call takes no arguments, so the user's intent could not be honoured.
 */

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
    description: "compound=true: the lock to add to, or 0 to create a new lock.",
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
  minVeOutWei: {
    kind: "uint256",
    description: "compound=true: the least voting power to accept (wei, > 0); take it from /quote/lock-via-furnace.",
  },
} as const satisfies Record<string, ParamDoc>;

export type HarvestInput = { compound: false } | (LockTerms & { compound: true; minVeOutWei: bigint });

export function parseHarvestQuery(url: string): HarvestInput {
  const q = parseQuery(url, HARVEST_PARAMS);
  if (q.compound !== true) {
    refuseLockParams(url, "compound=true");
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
  return { compound: true, ...terms, minVeOutWei: requireMinVeOut(q.minVeOutWei) };
}

export const harvestRewards = defineAction({
  action: "harvest-rewards",
  verb: "Harvest",
  steps: ["harvest"],
  contract: "LpStakingVault7D",
  function: "claimRewards | claimRewardsAndLock",
  needs: ["LpStakingVault7D"],
  params: HARVEST_PARAMS,
  description:
    "Harvest: takes the token rewards earned by the wallet's staked LP. " +
    "By default they are paid to the wallet; with compound=true they are locked via the Furnace (at most once a day).",
  parse: parseHarvestQuery,
  // The published vault returns quietly when nothing is earned (claimRewards and claimRewardsAndLock alike).
  idle: "Nothing to harvest: the wallet has earned no LP rewards yet. The transaction would succeed and move nothing.",
  encode: (contracts, input: HarvestInput) => ({
    calls: [
      {
        step: "harvest",
        to: contracts.LpStakingVault7D,
        data: input.compound
          ? encodeCall(LpStakingVault7DAbi, "claimRewardsAndLock", [
              input.targetTokenId,
              input.durationSeconds,
              input.createAutoMax,
              input.minVeOutWei,
            ])
          : encodeCall(LpStakingVault7DAbi, "claimRewards", []),
      },
    ],
  }),
});
