import { BPS } from "./constants";

/** The Furnace bonus as basis points of the principal, floored; 0 when there is no principal. */
export function bonusBpsVsPrincipalClaim(bonus: bigint, principal: bigint): bigint {
  if (bonus < 0n || principal < 0n) throw new RangeError("bonusBpsVsPrincipalClaim: amounts must be non-negative");
  return principal === 0n ? 0n : (bonus * BPS) / principal;
}
