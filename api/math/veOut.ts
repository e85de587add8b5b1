import { MAX_LOCK_DURATION } from "./constants";
import { clampLockDuration } from "./durationWeight";

/** Where a Furnace entry lands, which decides the duration its ve is computed over (protocol.md §3). */
export type FurnaceRoute =
  /** a new lock of `durationSeconds` (clamped to [7 d, 365 d]) */
  | { kind: "new"; durationSeconds: bigint }
  /** a new or existing AutoMax lock: always the full 365 d */
  | { kind: "autoMax" }
  /** a top-up of an existing lock: its remaining time, `lockEnd − now` (0 once expired) */
  | { kind: "existing"; lockEnd: bigint; now: bigint };

/** The effective duration a Furnace entry's ve is computed over. */
export function furnaceEffectiveDuration(route: FurnaceRoute): bigint {
  switch (route.kind) {
    case "autoMax":
      return MAX_LOCK_DURATION;
    case "new":
      return clampLockDuration(route.durationSeconds);
    case "existing":
      return route.lockEnd > route.now ? route.lockEnd - route.now : 0n;
  }
}

/** veOut of a Furnace entry: `floor((principal + bonus) × effectiveDuration / 365 d)`. */
export function furnaceVeOut(principal: bigint, bonus: bigint, route: FurnaceRoute): bigint {
  if (principal < 0n || bonus < 0n) throw new RangeError("furnaceVeOut: amounts must be non-negative");
  return ((principal + bonus) * furnaceEffectiveDuration(route)) / MAX_LOCK_DURATION;
}
