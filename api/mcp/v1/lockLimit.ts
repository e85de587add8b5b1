import type { Address } from "viem";
import { VeLockNFTAbi } from "../../../abis";
import { ChainUnreadyError, LockLimitReachedError } from "../../http/errors";
import { deployedAddress, type Manifest } from "../../manifest";
import { MAX_LOCKS_PER_USER } from "../../math";

/**
 * The per-wallet lock limit (protocol.md §1, §8): the published VeLockNFT lets one wallet hold at most
 * MAX_LOCKS_PER_USER (32) live locks and refuses the next mint (TooManyVeNFTs; the Furnace turns it into
 * InvariantViolation). A request for a new lock — a Furnace entry with targetTokenId 0 (lock-via-furnace, collect mode 1,
 * harvest compound=true, the quote) or prepare/lock — reads the wallet's count (VeLockNFT.balanceOf, one eth_call sent
 * with the action's other reads) and is refused at the limit: the batch would certainly revert, and with simulate=false
 * (or no simulation) nothing else would say so before the wallet pays gas for it.
 */

/** VeLockNFT, which the count is read from: a manifest without it is CHAIN_UNREADY for a request that counts. */
export function lockNftAddress(manifest: Manifest): Address {
  const address = deployedAddress(manifest, "VeLockNFT");
  if (!address) throw new ChainUnreadyError("VeLockNFT", manifest.chain);
  return address;
}

/** The wallet's live lock count (burned and sold-back locks are not counted): VeLockNFT.balanceOf(user). */
export const lockCountCall = (veLockNFT: Address, user: Address) =>
  ({ address: veLockNFT, abi: VeLockNFTAbi, functionName: "balanceOf", args: [user] }) as const;

/** Said beside "0 to create a new lock" in the parameter tables (tools/list shows it to an assistant). */
export const NEW_LOCK_LIMIT = " (refused, LOCK_LIMIT_REACHED, for a wallet that already holds 32 locks)";

/** What a Furnace entry's refusal suggests: the same entry into one of the wallet's locks. */
export const TOP_UP_INSTEAD =
  "Top up one of its locks instead (targetTokenId: one of get_state's veLocks), or first unlock an expired one " +
  "(VeLockNFT.unlock, which this API does not encode).";

/** Throws LOCK_LIMIT_REACHED (409) when `locks` leaves no room for one more. */
export function refuseAtLockLimit(user: Address, locks: bigint, instead: string = TOP_UP_INSTEAD): void {
  if (locks < BigInt(MAX_LOCKS_PER_USER)) return;
  throw new LockLimitReachedError({ user, locks: Number(locks), maxLocks: MAX_LOCKS_PER_USER }, instead);
}

/** The quote's `warning` for a new lock the wallet has no room for (the quote route answers it; prepare refuses). */
export const lockLimitWarning = (locks: bigint) =>
  `LOCK_LIMIT_REACHED: this wallet already holds ${locks} locks, the most one wallet may hold (${MAX_LOCKS_PER_USER}); ` +
  `the Furnace reverts a new lock, and prepare refuses it. ${TOP_UP_INSTEAD}`;
