import type { Hono } from "hono";
import type { Address } from "viem";
import { FurnaceQuoterAbi } from "../../../abis";
import { readView, viewFailure } from "../../chain/readView";
import { decodeRevert } from "../../chain/revert";
import type { RpcClient } from "../../chain/rpc";
import type { AppDeps } from "../../deps";
import { deadlineRpc } from "../../http/cancellation";
import type { AppEnv } from "../../http/env";
import { BadParamsError, ChainUnreadyError, QuoteFailedError } from "../../http/errors";
import type { ParamDoc } from "../../http/params";
import { parseQuery, refuseZeroAddress } from "../../http/params";
import { deployedAddress, type Manifest } from "../../manifest";
import {
  applyMinVeOutClamp,
  BPS,
  bonusBpsVsPrincipalClaim,
  DEFAULT_SLIPPAGE_BPS,
  MAX_LOCKS_PER_USER,
} from "../../math";
import type { RouteDefinition } from "../../route/definition";
import { constant, integer, object, uintString } from "../../route/jsonSchema";
import { lockCountCall, lockLimitWarning, lockNftAddress, NEW_LOCK_LIMIT, refuseAtLockLimit } from "./lockLimit";
import { AT_MOST_AMOUNT, MAX_AMOUNT_WEI } from "./prepare/approval";
import { coalesceRequests } from "./prepare/coalesce";

/**
 * GET /quote/lock-via-furnace (spec §4.2, protocol.md §5): one FurnaceQuoter.quoteEnterWithClaim eth_call (or
 * quoteEnterWithEth for an amount of ETH), then the shared math for minVeOut and the bonus ratio.
 * prepare/lock-via-furnace, the collect actions and harvest-rewards reuse quoteLockViaFurnace, so the minVeOut they
 * encode is exactly the one this route shows.
 */

export type QuoteDeps = { rpc: RpcClient | null; config: { manifest: Manifest } };

/**
 * What enters: tokens (quoteEnterWithClaim), or ETH the Furnace swaps into the token first (quoteEnterWithEth: what
 * collect mode 1 locks, through Furnace.lockEthReward, whose swap has no minimum output of its own).
 */
export type FurnaceEntryAmount =
  | { claimAmountWei: bigint; ethAmountWei?: never }
  | { ethAmountWei: bigint; claimAmountWei?: never };

export type LockViaFurnaceQuoteParameters = FurnaceEntryAmount & {
  user: Address;
  /** 0 (default) mints a new lock; otherwise the lock to top up. */
  targetTokenId?: bigint;
  durationSeconds?: bigint;
  createAutoMax?: boolean;
  /** [0, 10000], default 50. */
  slippageBps?: bigint;
};

export type LockViaFurnaceQuote = {
  principalClaimWei: bigint;
  bonusClaimWei: bigint;
  veOutWei: bigint;
  minVeOutWei: bigint;
  routeTokenId: bigint;
  slippageBps: bigint;
  bonusBpsVsPrincipalClaim: bigint;
  /** `atLockLimit: "warn"` only: the wallet already holds the most locks, so the new lock quoted cannot be made. */
  lockLimit?: { locks: bigint };
};

/**
 * Quotes a Furnace entry (slippageBps already within [0, 10000]: QUOTE_PARAMS declares the range and
 * parseQuery enforces it). Throws ChainUnreadyError (no FurnaceQuoter in the manifest) or QuoteFailedError with `detail.reason` = the decoded custom error name on
 * a quoter revert (e.g. "MinLockAmountNotMet"), null on a transport failure. A new lock (targetTokenId 0) also reads the
 * wallet's lock count, in the same tick as the quoter call (one batch on a coalescing client): LockLimitReachedError at
 * the limit (lockLimit.ts), which the quoter does not check.
 */
export async function quoteLockViaFurnace(
  deps: QuoteDeps,
  p: LockViaFurnaceQuoteParameters,
  /**
   * `refuse` (a prepare: its batch would revert) throws LockLimitReachedError at the limit, and a failed count read
   * fails the quote; `warn` (the quote route: the reference service quotes a 33rd lock, spec §9) returns `lockLimit`,
   * and a count it could not read says nothing.
   */
  atLockLimit: "refuse" | "warn" = "refuse",
): Promise<LockViaFurnaceQuote> {
  const slippageBps = p.slippageBps ?? DEFAULT_SLIPPAGE_BPS;
  const quoter = deployedAddress(deps.config.manifest, "FurnaceQuoter");
  if (!quoter) throw new ChainUnreadyError("FurnaceQuoter", deps.config.manifest.chain);
  // A new lock's count is read from VeLockNFT: a prepare (refuse) cannot do without it, so its absence is
  // CHAIN_UNREADY here, before any read; the quote route (warn) answers without the count.
  const newLock = (p.targetTokenId ?? 0n) === 0n;
  const lockNft = !newLock
    ? undefined
    : atLockLimit === "refuse"
      ? lockNftAddress(deps.config.manifest)
      : deployedAddress(deps.config.manifest, "VeLockNFT");
  if (!deps.rpc)
    throw new QuoteFailedError("No RPC endpoint is configured.", { reason: null, upstream: "unconfigured" });

  const functionName = p.ethAmountWei === undefined ? "quoteEnterWithClaim" : "quoteEnterWithEth";
  const amount = p.ethAmountWei ?? p.claimAmountWei;
  // A new lock: the wallet's lock count too, sent in the same tick (one JSON-RPC batch on a coalescing client).
  const counted = lockNft ? readLockCount(deps.rpc, lockNft, p.user) : null;
  // Settled at once: a quoter failure reported below leaves no unhandled rejection behind.
  const settledCount = counted && Promise.allSettled([counted]).then(([r]) => r!);
  let quote: readonly [bigint, bigint, bigint, bigint];
  try {
    quote = await readView(deps.rpc, {
      address: quoter,
      abi: FurnaceQuoterAbi,
      functionName,
      args: [p.user, amount, p.targetTokenId ?? 0n, p.durationSeconds ?? 0n, p.createAutoMax ?? false],
    });
  } catch (error) {
    const failure = viewFailure({ functionName }, error);
    if (failure.kind === "malformed") {
      throw new QuoteFailedError(
        "The quoter answer is malformed.",
        { reason: null, upstream: "invalid" },
        { cause: failure },
      );
    }
    const revert = failure.kind === "rpc" ? decodeRevert(failure.revertData) : null;
    if (revert) {
      throw new QuoteFailedError(
        `The quoter rejected the entry: ${revert.name}.${whatItNeeds(revert.name, p.targetTokenId ?? 0n)}`,
        { reason: revert.name, ...(revert.args.length ? { args: revert.args } : {}) },
        { cause: failure },
      );
    }
    if (failure.kind === "rpc") {
      throw new QuoteFailedError(
        "The quoter call failed upstream.",
        { reason: null, upstream: "rpc" },
        { cause: failure },
      );
    }
    throw new QuoteFailedError(
      `The quoter could not be reached (${failure.kind}).`,
      { reason: null, upstream: failure.kind },
      { cause: failure },
    );
  }
  // The quoter does not count locks (as published): the quote of a 33rd lock is a number the Furnace cannot mint.
  let lockLimit: { locks: bigint } | undefined;
  if (settledCount) {
    const count = await settledCount;
    if (atLockLimit === "refuse") {
      if (count.status === "rejected") throw count.reason;
      refuseAtLockLimit(p.user, count.value);
    } else if (count.status === "fulfilled" && count.value >= BigInt(MAX_LOCKS_PER_USER)) {
      lockLimit = { locks: count.value };
    }
  }
  const [principalClaimWei, bonusClaimWei, veOutWei, routeTokenId] = quote;
  return {
    principalClaimWei,
    bonusClaimWei,
    veOutWei,
    minVeOutWei: applyMinVeOutClamp(veOutWei, slippageBps),
    routeTokenId,
    slippageBps,
    bonusBpsVsPrincipalClaim: bonusBpsVsPrincipalClaim(bonusClaimWei, principalClaimWei),
    ...(lockLimit ? { lockLimit } : {}),
  };
}

/**
 * The wallet's live lock count, for a quote of a new lock. A failed read is the quote's own failure (502 QUOTE_FAILED,
 * `detail.read: "balanceOf"`), as the quoter call's would be.
 */
async function readLockCount(rpc: RpcClient, veLockNFT: Address, user: Address): Promise<bigint> {
  const call = lockCountCall(veLockNFT, user);
  try {
    return await readView(rpc, call);
  } catch (error) {
    const failure = viewFailure({ functionName: call.functionName }, error);
    const upstream = failure.kind === "malformed" ? "invalid" : failure.kind;
    throw new QuoteFailedError(
      failure.kind === "malformed"
        ? "The wallet's lock count answer is malformed."
        : `The wallet's lock count could not be read (${failure.kind}).`,
      { reason: null, upstream, read: call.functionName },
      { cause: failure },
    );
  }
}

/**
 * What the published Furnace's duration rules ask (FurnaceGuardHelper: a new lock's duration is clamped to [7 d, 365 d],
 * AutoMax needs 365 d; a top-up of an AutoMax lock needs durationSeconds ≥ 365 d, of a plain lock 7 days left), said
 * beside an InvalidDuration, which names none of them.
 */
function whatItNeeds(revert: string, targetTokenId: bigint): string {
  if (revert !== "InvalidDuration") return "";
  return targetTokenId === 0n
    ? " A new AutoMax lock needs durationSeconds=31536000."
    : " A top-up of an AutoMax lock needs durationSeconds=31536000 (more is clamped to it); a plain lock needs at " +
        "least 7 days left.";
}

/** Also the parameters of prepare/lock-via-furnace, which quotes the same entry before encoding it. */
export const QUOTE_PARAMS = {
  user: { kind: "address", required: true, description: "The wallet that would lock (not the zero address)." },
  claimAmountWei: {
    kind: "uint256",
    required: true,
    max: MAX_AMOUNT_WEI,
    description: `Token amount in wei to lock. ${AT_MOST_AMOUNT}`,
  },
  targetTokenId: {
    kind: "uint256",
    default: "0",
    description: `The lock to add to, or 0 to create a new lock${NEW_LOCK_LIMIT}.`,
  },
  durationSeconds: {
    kind: "uint256",
    default: "0",
    description:
      "New lock: lock duration in seconds, 604800 (7 days) to 31536000 (365 days); the quoter clamps any other " +
      "value into that range, so 0 (the default) is quoted as a 7-day lock (prepare refuses it: pass the length " +
      "you mean). A top-up of an AutoMax lock: 31536000 (more is clamped to it; the Furnace refuses less); a " +
      "plain lock's top-up keeps its end (the value is not used).",
  },
  createAutoMax: {
    kind: "bool",
    default: "false",
    description: "New lock: keep the lock at the maximum length (needs durationSeconds=31536000).",
  },
  slippageBps: {
    kind: "uint256",
    default: String(DEFAULT_SLIPPAGE_BPS),
    min: 0n,
    max: BPS,
    description:
      "Tolerated shortfall of the voting power against the quote, in basis points (0 to 10000). A top-up of a " +
      "plain lock loses 1/(seconds left) of its voting power each second after the quote: 50 covers 50 minutes " +
      "at 7 days left, 0 not even one block.",
  },
} as const satisfies Record<string, ParamDoc>;

/** The route's own table: the entry may be priced in tokens or in ETH (exactly one of the two). */
const QUOTE_ROUTE_PARAMS = {
  ...QUOTE_PARAMS,
  claimAmountWei: {
    kind: "uint256",
    max: MAX_AMOUNT_WEI,
    description: `Token amount in wei to lock. Exactly one of claimAmountWei and ethAmountWei is required. ${AT_MOST_AMOUNT}`,
  },
  ethAmountWei: {
    kind: "uint256",
    max: MAX_AMOUNT_WEI,
    description:
      "Instead of claimAmountWei: an amount of ETH (wei) the Furnace swaps into the token and locks " +
      "(FurnaceQuoter.quoteEnterWithEth), e.g. the wallet's pendingRoyaltiesEthWei, as collect mode 1 locks " +
      `it. Its minVeOutWei is the only slippage guard of that swap. ${AT_MOST_AMOUNT}`,
  },
} as const satisfies Record<string, ParamDoc>;

/** Exactly one of the two amounts: a request that names both, or neither, is ambiguous. */
function entryAmount(claimAmountWei: bigint | undefined, ethAmountWei: bigint | undefined): FurnaceEntryAmount {
  if (claimAmountWei !== undefined && ethAmountWei !== undefined) {
    throw new BadParamsError("Give claimAmountWei or ethAmountWei, not both.", { param: "ethAmountWei" });
  }
  if (ethAmountWei !== undefined) return { ethAmountWei };
  if (claimAmountWei !== undefined) return { claimAmountWei };
  throw new BadParamsError("Missing required parameter claimAmountWei (or ethAmountWei).", { param: "claimAmountWei" });
}

/** Parses the quote query strictly (every failure is BAD_PARAMS, before any RPC). */
export function parseQuoteQuery(url: string): LockViaFurnaceQuoteParameters {
  const q = parseQuery(url, QUOTE_ROUTE_PARAMS);
  return {
    user: refuseZeroAddress("user", q.user),
    ...entryAmount(q.claimAmountWei, q.ethAmountWei),
    targetTokenId: q.targetTokenId,
    durationSeconds: q.durationSeconds,
    createAutoMax: q.createAutoMax,
    slippageBps: q.slippageBps,
  };
}

/** The route's documented face (api/openapi, the MCP tool quote_lock_via_furnace); the handler below uses it. */
export const quoteRoute = {
  path: "/quote/lock-via-furnace",
  operationId: "quote_lock_via_furnace",
  summary: "Quote locking tokens (or ETH) via the Furnace",
  description:
    "FurnaceQuoter.quoteEnterWithClaim for the wallet (quoteEnterWithEth with ethAmountWei): the principal, the " +
    "Furnace bonus, the voting power (veOut) the entry would mint and the least voting power to accept " +
    "(minVeOutWei = veOut less slippageBps, at least 1 when veOut > 0). Harvest with compound=true locks the " +
    "pending LP rewards (quote them with claimAmountWei), collect mode=1 the pending royalties in ETH (quote them " +
    "with ethAmountWei); or give either `user` and no minVeOutWei and it quotes by itself, as lock-via-furnace does. " +
    "A quoter revert is 502 QUOTE_FAILED with `detail.reason` naming it. A new lock (targetTokenId=0) for a wallet " +
    "that already holds 32 locks, the most one wallet may hold, is quoted as the reference quotes it (the quoter does " +
    "not count locks) with a `warning` that the Furnace would revert; its prepare is 409 LOCK_LIMIT_REACHED.",
  query: QUOTE_ROUTE_PARAMS,
  errors: ["BAD_PARAMS", "CHAIN_UNREADY", "QUOTE_FAILED", "UPSTREAM_UNAVAILABLE"],
  exampleRequest: {
    user: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    claimAmountWei: "5000000000000000000000",
    durationSeconds: "31536000",
    createAutoMax: "true",
  },
  response: {
    schema: object(
      {
        ok: constant(true),
        principalClaimWei: uintString("Tokens the entry locks: from the wallet, or what ethAmountWei buys (wei)."),
        bonusClaimWei: uintString("Tokens the Furnace adds as bonus (wei)."),
        veOutWei: uintString("Voting power the entry would mint (wei)."),
        minVeOutWei: uintString("veOutWei less slippageBps, at least 1 when veOutWei > 0: the least to accept."),
        routeTokenId: uintString("The lock the entry goes to (0 = a new lock)."),
        slippageBps: integer("The slippage applied, in basis points (a JSON number, as the reference sends it).", {
          minimum: 0,
          maximum: 10_000,
        }),
        bonusBpsVsPrincipalClaim: uintString("The bonus as basis points of the principal."),
        warning: {
          type: "string",
          description:
            "Present when the quoted entry cannot be made: a new lock for a wallet that already holds 32 locks " +
            "(LOCK_LIMIT_REACHED; the Furnace reverts it, and the prepare refuses it). Top up one of its locks instead.",
        },
      },
      { optional: ["warning"] },
    ),
    example: {
      ok: true,
      principalClaimWei: "5000000000000000000000",
      bonusClaimWei: "1250000000000000000000",
      veOutWei: "6250000000000000000000",
      minVeOutWei: "6218750000000000000000",
      routeTokenId: "0",
      slippageBps: 50,
      bonusBpsVsPrincipalClaim: "2500",
    },
  },
} as const satisfies RouteDefinition;

export function registerQuoteRoutes(v1: Hono<AppEnv>, deps: AppDeps): void {
  v1.get(quoteRoute.path, async (c) => {
    const params = parseQuoteQuery(c.req.url);
    // A new lock's quote also reads the wallet's lock count: both in one JSON-RPC batch (one round trip).
    const rpc = deadlineRpc(c, deps.rpc);
    const q = await quoteLockViaFurnace({ ...deps, rpc: rpc && coalesceRequests(rpc) }, params, "warn");
    c.header("cache-control", "no-store");
    return c.json({
      ok: true,
      principalClaimWei: q.principalClaimWei.toString(),
      bonusClaimWei: q.bonusClaimWei.toString(),
      veOutWei: q.veOutWei.toString(),
      minVeOutWei: q.minVeOutWei.toString(),
      routeTokenId: q.routeTokenId.toString(),
      // A JSON number, as the reference's client types have it (protocol.md §5); it is at most 10000.
      slippageBps: Number(q.slippageBps),
      bonusBpsVsPrincipalClaim: q.bonusBpsVsPrincipalClaim.toString(),
      // The reference quotes a 33rd lock as any other (spec §9: no incompatible change in v1); the answer says why the
      // entry it quotes cannot be made, and the prepare refuses it (409 LOCK_LIMIT_REACHED).
      ...(q.lockLimit ? { warning: lockLimitWarning(q.lockLimit.locks) } : {}),
    });
  });
}
