import { ClaimAllHelperAbi, ShareholderRoyaltiesAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { type LockTerms, refuseLockParams, requireLockTerms, requireMinVeOut } from "./lockTerms";
import { defineAction } from "./pipeline";

/**
 * collect-all and collect-royalties (verb: Collect). Mode 0 pays the ETH out (the contract ignores the lock
 * arguments, so they are encoded as their defaults, and lock parameters given with mode 0 are refused rather than
 * dropped, as harvest-rewards refuses them without compound); mode 1 turns it into the token and locks it through
 * the Furnace, so the lock rules and minVeOut > 0 apply. No other mode exists on chain. The published
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
    default: "0",
    description: "Mode 1: the least voting power to accept (wei, > 0); take minVeOutWei from /quote/lock-via-furnace.",
  },
} as const satisfies Record<string, ParamDoc>;

export type CollectInput = LockTerms & { mode: 0 | 1; minVeOutWei: bigint };

export function parseCollectQuery(url: string): CollectInput {
  const q = parseQuery(url, COLLECT_PARAMS);
  const mode = q.mode;
  const terms: LockTerms = {
    targetTokenId: q.targetTokenId ?? 0n,
    durationSeconds: q.durationSeconds ?? 0n,
    createAutoMax: q.createAutoMax ?? false,
  };
  const minVeOutWei = q.minVeOutWei ?? 0n;
  if (mode === 1n) {
    requireLockTerms(terms);
    requireMinVeOut(minVeOutWei);
  } else refuseLockParams(url, "mode=1");
  return { mode: mode === 1n ? 1 : 0, ...terms, minVeOutWei };
}

const lockArgs = (i: CollectInput) =>
  [i.mode, i.targetTokenId, i.durationSeconds, i.createAutoMax, i.minVeOutWei] as const;

export const collectAll = defineAction({
  action: "collect-all",
  verb: "Collect",
  steps: ["collect"],
  contract: "ClaimAllHelper",
  function: "claimAll",
  needs: ["ClaimAllHelper"],
  params: COLLECT_PARAMS,
  description:
    "Collect: gathers the wallet's shareholder royalties (ETH) and withdraws its King balance (the ETH MineCore " +
    "holds for it) in one transaction. With mode=0 the royalties are paid to the wallet; with mode=1 they are " +
    "converted to the token and locked via the Furnace; the King balance is paid in ETH either way. LP staking " +
    "rewards are not collected here: Harvest them (harvest-rewards).",
  parse: parseCollectQuery,
  encode: (contracts, input: CollectInput) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ClaimAllHelper,
        data: encodeCall(ClaimAllHelperAbi, "claimAll", lockArgs(input)),
      },
    ],
  }),
});

export const collectRoyalties = defineAction({
  action: "collect-royalties",
  verb: "Collect",
  steps: ["collect"],
  contract: "ShareholderRoyalties",
  function: "claimShareholder",
  needs: ["ShareholderRoyalties"],
  params: COLLECT_PARAMS,
  description:
    "Collect: takes the wallet's accrued shareholder royalties. " +
    "With mode=0 the ETH is paid to the wallet; with mode=1 it is converted to the token and locked via the Furnace.",
  parse: parseCollectQuery,
  encode: (contracts, input: CollectInput) => ({
    calls: [
      {
        step: "collect",
        to: contracts.ShareholderRoyalties,
        data: encodeCall(ShareholderRoyaltiesAbi, "claimShareholder", lockArgs(input)),
      },
    ],
  }),
});
