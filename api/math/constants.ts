/** Protocol constants of protocol.md §3, as the contracts define them (bigint: they meet chain values). */

/** 7 days: the shortest lock; shorter durations weigh as 7 days. */
export const MIN_LOCK_DURATION = 604_800n;
/** 365 days: the longest lock, the AutoMax duration and the ve decay denominator. */
export const MAX_LOCK_DURATION = 31_536_000n;
export const MIN_LOCK_AMOUNT = 1000n * 10n ** 18n;
export const MIN_TOPUP_AMOUNT = 10n ** 18n;
export const BPS = 10_000n;
/** durationWeight carries 1e8 sub-basis-point precision. */
export const WEIGHT_PRECISION = 100_000_000n;
/** durationWeight of a full-length lock: 10_000 bps × 1e8. */
export const WEIGHT_DENOM = BPS * WEIGHT_PRECISION;
export const MAX_LOCKS_PER_USER = 32;
export const DEFAULT_SLIPPAGE_BPS = 50n;
