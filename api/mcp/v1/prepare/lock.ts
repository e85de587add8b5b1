import type { Address } from "viem";
import { VeLockNFTAbi } from "../../../../abis";
import { encodeCall } from "../../../chain/encode";
import { LockLimitReachedError } from "../../../http/errors";
import type { ParamDoc } from "../../../http/params";
import { parseQuery } from "../../../http/params";
import { MAX_LOCK_DURATION, MIN_LOCK_AMOUNT, MIN_LOCK_DURATION, MIN_TOPUP_AMOUNT } from "../../../math";
import { AT_MOST_AMOUNT, MAX_AMOUNT_WEI, readAllowance, withApproval } from "./approval";
import { coalesceRequests } from "./coalesce";
import { requireAtLeast, requireLockDuration } from "./lockTerms";
import { defineAction, type PrepareDeps } from "./pipeline";
import { type HintFor, prepareHref, type SimulationHint } from "./simulation";
import { refuseNewLockAtLimit } from "./stateRead";

/**
 * Plain locks on VeLockNFT: lock (Lock), topup (Top up), extend (Extend). The NFT pulls the token from
 * the sender, so lock and topup put an exact approve first when the allowance is short.
 * (protocol.md §7: on the published contracts these functions accept only the Furnace as caller.)
 */

const user = {
  kind: "address",
  required: true,
  description: "The wallet that owns the lock and signs (not the zero address).",
} as const;
const tokenId = { kind: "uint256", required: true, description: "The lock's token id (≥ 1)." } as const;

export const LOCK_PARAMS = {
  user,
  amountWei: {
    kind: "uint256",
    required: true,
    max: MAX_AMOUNT_WEI,
    description: `Token amount in wei, at least ${MIN_LOCK_AMOUNT} (1000 tokens). ${AT_MOST_AMOUNT}`,
  },
  durationSecs: {
    kind: "uint256",
    required: true,
    description: `Lock duration in seconds, ${MIN_LOCK_DURATION} (7 days) to ${MAX_LOCK_DURATION} (365 days).`,
  },
  autoMax: {
    kind: "bool",
    default: "false",
    description: `Keep the lock at the maximum length; needs durationSecs=${MAX_LOCK_DURATION}.`,
  },
} as const satisfies Record<string, ParamDoc>;

/**
 * On the published contracts (and the devnet) createLockFor / addToLockFor / extendLockToFor accept only the Furnace
 * (protocol.md §7), so a wallet's call reverts NotAuthorized (docs/limitations.md). Said in each tool's description,
 * and in every answer whose simulation did not run or did not pass, as `warning` (pipeline.ts).
 */
const FURNACE_ONLY =
  "On the published contracts (and the devnet) only the Furnace may call this function: sent from a wallet, this " +
  "batch reverts NotAuthorized.";

/** The description's first sentence after the verb's: what the guide and tools/list show first. */
const FURNACE_ONLY_DESCRIPTION =
  "On the published contracts (and the devnet) only the Furnace may call it: a wallet's batch reverts " +
  "NotAuthorized, so do not hand it to the wallet unless its simulation passed.";

/** The warning of a lock or top-up: the Furnace entry that does the same for the wallet, with its parameters. */
const furnaceWarning = (params: Record<string, string>): SimulationHint => ({
  message: `${FURNACE_ONLY} Do not hand it to the wallet: lock-via-furnace does the same for the wallet.`,
  action: "lock-via-furnace",
  params,
  path: prepareHref("lock-via-furnace", params),
});

/** A failed simulation's hint (NotAuthorized on the step) is the same advice. */
const furnaceHint =
  (step: "lock" | "topup", params: Record<string, string>): HintFor =>
  (error, failedStep) => {
    if (error.name !== "NotAuthorized" || failedStep !== step) return undefined;
    return {
      ...furnaceWarning(params),
      message:
        "This function accepts only the Furnace on this deployment: lock-via-furnace does the same for the wallet.",
    };
  };

const lockHintParams = (input: LockInput) => ({
  user: input.user,
  claimAmountWei: input.amountWei.toString(),
  targetTokenId: "0",
  durationSeconds: input.durationSecs.toString(),
  createAutoMax: String(input.autoMax),
});

/** What a wallet at the lock limit can do instead of prepare/lock's new lock. */
const LOCK_INSTEAD =
  "Top up one of its locks instead (lock-via-furnace with targetTokenId: one of get_state's veLocks), or first " +
  "unlock an expired one (VeLockNFT.unlock, which this API does not encode).";

export type LockInput = { user: Address; amountWei: bigint; durationSecs: bigint; autoMax: boolean };

/** lock and topup: VeLockNFT pulls AssetToken from the user's wallet, so its allowance decides the approve. */
const readAssetAllowance = (
  deps: Pick<PrepareDeps, "rpc">,
  contracts: { AssetToken: Address; VeLockNFT: Address },
  input: { user: Address },
) =>
  readAllowance(deps, {
    token: "AssetToken",
    tokenAddress: contracts.AssetToken,
    owner: input.user,
    spender: contracts.VeLockNFT,
  });

const assetApproval = (contracts: { AssetToken: Address; VeLockNFT: Address }, amount: bigint, allowance: bigint) =>
  ({
    token: "AssetToken",
    tokenAddress: contracts.AssetToken,
    spender: contracts.VeLockNFT,
    amount,
    allowance,
  }) as const;

export const lock = defineAction({
  action: "lock",
  verb: "Lock",
  steps: ["approve", "lock"],
  contract: "VeLockNFT",
  function: "createLockFor",
  needs: ["VeLockNFT", "AssetToken"],
  params: LOCK_PARAMS,
  description:
    "Lock: locks tokens from the wallet into a new vote-escrow lock for a chosen duration (no Furnace bonus). " +
    `${FURNACE_ONLY_DESCRIPTION} Use prepare_lock_via_furnace for a wallet's new lock. ` +
    "An approve step for the exact amount comes first when the allowance is short. A wallet that already holds 32 " +
    "locks, the most one may hold, is refused (LOCK_LIMIT_REACHED).",
  parse(url): LockInput {
    const q = parseQuery(url, LOCK_PARAMS);
    const amountWei = requireAtLeast("amountWei", q.amountWei, MIN_LOCK_AMOUNT, "the minimum lock is 1000 tokens");
    const autoMax = q.autoMax ?? false;
    requireLockDuration("durationSecs", q.durationSecs, "autoMax", autoMax);
    return { user: q.user, amountWei, durationSecs: q.durationSecs, autoMax };
  },
  // The allowance, and the wallet's room for a new lock (LOCK_LIMIT_REACHED at 32): one JSON-RPC batch.
  async read(deps, contracts, input): Promise<bigint> {
    const io = { ...deps, rpc: deps.rpc && coalesceRequests(deps.rpc) };
    const [allowance, room] = await Promise.allSettled([
      readAssetAllowance(io, contracts, input),
      refuseNewLockAtLimit(io, input.user, LOCK_INSTEAD),
    ]);
    // The refusal first (certain whatever the allowance), then a failed read, the allowance's before the count's.
    if (room.status === "rejected" && room.reason instanceof LockLimitReachedError) throw room.reason;
    if (allowance.status === "rejected") throw allowance.reason;
    if (room.status === "rejected") throw room.reason;
    return allowance.value;
  },
  hint: (input: LockInput) => furnaceHint("lock", lockHintParams(input)),
  warning: (input: LockInput) => furnaceWarning(lockHintParams(input)),
  encode: (contracts, input, allowance: bigint) => ({
    calls: withApproval(assetApproval(contracts, input.amountWei, allowance), {
      step: "lock",
      to: contracts.VeLockNFT,
      data: encodeCall(VeLockNFTAbi, "createLockFor", [input.user, input.amountWei, input.durationSecs, input.autoMax]),
    }),
  }),
});

export const TOPUP_PARAMS = {
  user,
  tokenId,
  amountWei: {
    kind: "uint256",
    required: true,
    max: MAX_AMOUNT_WEI,
    description: `Token amount in wei to add, at least ${MIN_TOPUP_AMOUNT} (1 token). ${AT_MOST_AMOUNT}`,
  },
} as const satisfies Record<string, ParamDoc>;

export type TopupInput = { user: Address; tokenId: bigint; amountWei: bigint };

const topupHintParams = (input: TopupInput) => ({
  user: input.user,
  claimAmountWei: input.amountWei.toString(),
  targetTokenId: input.tokenId.toString(),
  // The published Furnace tops up an AutoMax lock only with 365 days, and a plain lock's top-up keeps its end
  // (the value is not used): with it, the hint's call works for either, without reading the lock.
  durationSeconds: String(MAX_LOCK_DURATION),
});

export const topup = defineAction({
  action: "topup",
  verb: "Top up",
  steps: ["approve", "topup"],
  contract: "VeLockNFT",
  function: "addToLockFor",
  needs: ["VeLockNFT", "AssetToken"],
  params: TOPUP_PARAMS,
  description:
    "Top up: adds tokens from the wallet to an existing, unexpired lock it owns (an AutoMax lock also restarts its 365 days). " +
    `${FURNACE_ONLY_DESCRIPTION} Use prepare_lock_via_furnace with targetTokenId for a wallet's top-up. ` +
    "An approve step for the exact amount comes first when the allowance is short.",
  parse(url): TopupInput {
    const q = parseQuery(url, TOPUP_PARAMS);
    return {
      user: q.user,
      tokenId: requireAtLeast("tokenId", q.tokenId, 1n, "lock ids start at 1"),
      amountWei: requireAtLeast("amountWei", q.amountWei, MIN_TOPUP_AMOUNT, "the minimum top-up is 1 token"),
    };
  },
  read: readAssetAllowance,
  hint: (input: TopupInput) => furnaceHint("topup", topupHintParams(input)),
  warning: (input: TopupInput) => furnaceWarning(topupHintParams(input)),
  encode: (contracts, input, allowance: bigint) => ({
    calls: withApproval(assetApproval(contracts, input.amountWei, allowance), {
      step: "topup",
      to: contracts.VeLockNFT,
      data: encodeCall(VeLockNFTAbi, "addToLockFor", [input.user, input.tokenId, input.amountWei]),
    }),
  }),
});

export const EXTEND_PARAMS = {
  user,
  tokenId,
  newEnd: {
    kind: "uint256",
    required: true,
    description: "The new end as an absolute unix time in seconds: later than the current end, at most now + 365 days.",
  },
} as const satisfies Record<string, ParamDoc>;

export type ExtendInput = { user: Address; tokenId: bigint; newEnd: bigint };

/**
 * extendLockToFor is Furnace-only too, and this API encodes no other extension; but the wallet has two on Base
 * (published Furnace.extendWithBonus, through FurnaceExtendHelper, and VeClaimNFT.setAutoMax by the owner), so the
 * hint names them rather than saying the end cannot move: a user told so lets the lock expire.
 */
const extendAlternatives = (tokenId: bigint) =>
  "The wallet can move a plain lock's end " +
  `itself: Furnace.extendWithBonus(${tokenId}, durationSeconds, minBonusOut) sets it to now + ` +
  "durationSeconds (at most 365 days) and adds a bonus (quote it with " +
  `FurnaceQuoter.quoteExtendWithBonus), or VeLockNFT.setAutoMax(${tokenId}, true) keeps it at now + 365 ` +
  "days. This API encodes neither.";

const extendHint =
  (tokenId: bigint): HintFor =>
  (error, failedStep) =>
    error.name !== "NotAuthorized" || failedStep !== "extend"
      ? undefined
      : { message: `extendLockToFor accepts only the Furnace on this deployment. ${extendAlternatives(tokenId)}` };

export const extend = defineAction({
  action: "extend",
  verb: "Extend",
  steps: ["extend"],
  contract: "VeLockNFT",
  function: "extendLockToFor",
  needs: ["VeLockNFT"],
  params: EXTEND_PARAMS,
  description:
    "Extend: moves the end of an existing, unexpired lock the wallet owns to a later time (an AutoMax lock " +
    `is simply renewed to 365 days from now). ${FURNACE_ONLY_DESCRIPTION}`,
  parse(url): ExtendInput {
    const q = parseQuery(url, EXTEND_PARAMS);
    return {
      user: q.user,
      tokenId: requireAtLeast("tokenId", q.tokenId, 1n, "lock ids start at 1"),
      newEnd: requireAtLeast("newEnd", q.newEnd, 1n, "a lock end is a positive unix time"),
    };
  },
  hint: (input: ExtendInput) => extendHint(input.tokenId),
  warning: (input: ExtendInput) => ({
    message: `${FURNACE_ONLY} Do not hand it to the wallet. ${extendAlternatives(input.tokenId)}`,
  }),
  encode: (contracts, input: ExtendInput) => ({
    calls: [
      {
        step: "extend",
        to: contracts.VeLockNFT,
        data: encodeCall(VeLockNFTAbi, "extendLockToFor", [input.user, input.tokenId, input.newEnd]),
      },
    ],
  }),
});
