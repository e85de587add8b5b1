/**
 * Wei → the supply API's decimal string (spec §2.1, protocol.md §6): the 18-decimal value with
 * exactly two fractional digits, truncated toward zero, never rounded. Pure digit-string work on
 * the bigint's decimal form, so no value ever passes through floating point.
 */

const DECIMALS = 18;
const FRACTION_DIGITS = 2;

/**
 * 0.01 token: the smallest wei value formatWei2 does not answer as "0.00". Anything below is published as a zero
 * figure, which the supply routes never answer (api/supply/reads.ts fails it closed).
 */
export const SMALLEST_FIGURE_WEI = 10n ** BigInt(DECIMALS - FRACTION_DIGITS);

export function formatWei2(wei: bigint): string {
  if (wei < 0n) throw new RangeError("formatWei2: a supply figure cannot be negative");
  // Left-pad so there is always at least one whole digit before the 18 fractional ones.
  const digits = wei.toString().padStart(DECIMALS + 1, "0");
  const whole = digits.slice(0, digits.length - DECIMALS);
  const fraction = digits.slice(digits.length - DECIMALS, digits.length - DECIMALS + FRACTION_DIGITS);
  return `${whole}.${fraction}`;
}
