import { BPS, DEFAULT_SLIPPAGE_BPS } from "./constants";

/**
 * The minVeOut to send with a Furnace entry: veOut less the slippage allowance, floored — but never 0
 * for a positive veOut, because the Furnace reverts `MinVeOutRequired` on minVeOut == 0 (protocol.md §1).
 */
export function applyMinVeOutClamp(veOut: bigint, slippageBps: bigint = DEFAULT_SLIPPAGE_BPS): bigint {
  if (veOut < 0n) throw new RangeError("applyMinVeOutClamp: veOut must be non-negative");
  if (slippageBps < 0n || slippageBps > BPS)
    throw new RangeError("applyMinVeOutClamp: slippageBps must be within [0, 10000]");
  const m = (veOut * (BPS - slippageBps)) / BPS;
  return veOut > 0n && m === 0n ? 1n : m;
}
