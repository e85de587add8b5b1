import { MAX_LOCK_DURATION, MIN_LOCK_DURATION, WEIGHT_PRECISION } from "./constants";

const DAY = 86_400n;

/**
 * The duration → weight curve (protocol.md §3): linear between these (days, bps) points. Exported so
 * the tests can walk every breakpoint; the contracts hold the same table (LockMath.durationWeight).
 */
export const DURATION_BREAKPOINTS: readonly { readonly seconds: bigint; readonly bps: bigint }[] = [
  [7n, 100n],
  [14n, 175n],
  [21n, 300n],
  [30n, 500n],
  [90n, 1500n],
  [180n, 4000n],
  [270n, 6500n],
  [365n, 10_000n],
].map(([days, bps]) => ({ seconds: days! * DAY, bps: bps! }));

/** A lock duration clamped to [7 d, 365 d], as every on-chain rule applies it. */
export function clampLockDuration(seconds: bigint): bigint {
  return seconds < MIN_LOCK_DURATION ? MIN_LOCK_DURATION : seconds > MAX_LOCK_DURATION ? MAX_LOCK_DURATION : seconds;
}

/**
 * Weight of a lock duration at 1e8 sub-bp precision, floored exactly as the contract floors it:
 * `w0·1e8 + floor((d − d0)·(w1 − w0)·1e8 / (d1 − d0))` on the segment holding d = clamp(seconds, 7d, 365d).
 */
export function durationWeight(seconds: bigint): bigint {
  if (seconds < 0n) throw new RangeError("durationWeight: seconds must be non-negative");
  const d = clampLockDuration(seconds);
  const first = DURATION_BREAKPOINTS[0]!;
  if (d <= first.seconds) return first.bps * WEIGHT_PRECISION;
  for (let i = 1; i < DURATION_BREAKPOINTS.length; i++) {
    const hi = DURATION_BREAKPOINTS[i]!;
    if (d <= hi.seconds) {
      const lo = DURATION_BREAKPOINTS[i - 1]!;
      return (
        lo.bps * WEIGHT_PRECISION +
        ((d - lo.seconds) * (hi.bps - lo.bps) * WEIGHT_PRECISION) / (hi.seconds - lo.seconds)
      );
    }
  }
  // Unreachable: d ≤ 365 d after the clamp, and 365 d is the last breakpoint.
  return DURATION_BREAKPOINTS[DURATION_BREAKPOINTS.length - 1]!.bps * WEIGHT_PRECISION;
}

/** durationWeight in whole basis points (floored), what FurnaceQuoter.durationWeightBps returns. */
export function durationWeightBps(seconds: bigint): bigint {
  return durationWeight(seconds) / WEIGHT_PRECISION;
}
