import { MAX_LOCK_DURATION } from "./constants";

/**
 * The ve of one lock at time `t` (protocol.md §2, what veBalanceOf sums per owner): an AutoMax lock counts its whole
 * amount; any other floor(amount × (lockEnd − t) / 365 d), and 0 once lockEnd ≤ t.
 */
export function lockVe(lock: { amount: bigint; lockEnd: bigint; autoMax: boolean }, t: bigint): bigint {
  if (lock.amount < 0n) throw new RangeError("lockVe: amount must be non-negative");
  if (lock.autoMax) return lock.amount;
  return lock.lockEnd > t ? (lock.amount * (lock.lockEnd - t)) / MAX_LOCK_DURATION : 0n;
}

/**
 * The end getLockInfo reports at time `t` (protocol.md §8): a live AutoMax lock always ends t + 365 d; any other
 * lock (and a burned one, all zeros) its stored end.
 */
export function effectiveLockEnd(lock: { amount: bigint; lockEnd: bigint; autoMax: boolean }, t: bigint): bigint {
  return lock.autoMax && lock.amount !== 0n ? t + MAX_LOCK_DURATION : lock.lockEnd;
}
