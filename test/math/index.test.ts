import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyMinVeOutClamp,
  bonusBpsVsPrincipalClaim,
  DURATION_BREAKPOINTS,
  durationWeight,
  durationWeightBps,
  furnaceEffectiveDuration,
  furnaceVeOut,
  MAX_LOCK_DURATION,
  MIN_LOCK_DURATION,
  WEIGHT_DENOM,
} from "../../api/math";
import { DURATION_WEIGHT_VECTORS } from "../support/vectors";

const E18 = 10n ** 18n;

const WEIGHT_VECTORS = DURATION_WEIGHT_VECTORS;

describe("durationWeight vectors (protocol.md §3)", () => {
  it.each(WEIGHT_VECTORS)("%s s → %s, %s bps", (seconds, weight, bps) => {
    expect(durationWeight(seconds)).toBe(weight);
    expect(durationWeightBps(seconds)).toBe(bps);
  });

  it("hits every breakpoint exactly", () => {
    expect(DURATION_BREAKPOINTS.map((b) => [b.seconds / 86_400n, b.bps])).toEqual([
      [7n, 100n],
      [14n, 175n],
      [21n, 300n],
      [30n, 500n],
      [90n, 1500n],
      [180n, 4000n],
      [270n, 6500n],
      [365n, 10_000n],
    ]);
    for (const b of DURATION_BREAKPOINTS) expect(durationWeight(b.seconds)).toBe(b.bps * 100_000_000n);
  });

  it("rejects a negative duration", () => {
    expect(() => durationWeight(-1n)).toThrow(RangeError);
  });
});

describe("applyMinVeOutClamp vectors (protocol.md §3)", () => {
  it.each([
    [1000n * E18, 995n * E18],
    [1n, 1n],
    [199n, 198n],
    [200n, 199n],
    [0n, 0n],
  ])("%s at 50 bps → %s", (veOut, expected) => {
    expect(applyMinVeOutClamp(veOut, 50n)).toBe(expected);
    expect(applyMinVeOutClamp(veOut)).toBe(expected); // 50 bps is the default
  });

  it("edges of the slippage range", () => {
    expect(applyMinVeOutClamp(12_345n, 0n)).toBe(12_345n);
    expect(applyMinVeOutClamp(12_345n, 10_000n)).toBe(1n); // 0 clamped up: minVeOut 0 reverts on chain
    expect(applyMinVeOutClamp(0n, 10_000n)).toBe(0n);
  });

  it.each([[-1n], [10_001n], [2n ** 256n]])("slippage %s is bad input", (slippage) => {
    expect(() => applyMinVeOutClamp(100n, slippage)).toThrow(RangeError);
  });

  it("negative veOut is bad input", () => {
    expect(() => applyMinVeOutClamp(-1n)).toThrow(RangeError);
  });
});

describe("bonusBpsVsPrincipalClaim", () => {
  it.each([
    [0n, 0n, 0n],
    [5n, 0n, 0n],
    [78n * E18, 2000n * E18, 390n],
    [1n, 3n, 3333n],
    [2n, 3n, 6666n],
    [3n, 3n, 10_000n],
    [1n, 10_001n, 0n],
  ])("bonus %s over principal %s → %s bps", (bonus, principal, bps) => {
    expect(bonusBpsVsPrincipalClaim(bonus, principal)).toBe(bps);
  });
  it("rejects negative amounts", () => {
    expect(() => bonusBpsVsPrincipalClaim(-1n, 1n)).toThrow(RangeError);
  });
});

describe("furnaceVeOut", () => {
  it("uses the clamped duration for a new lock, 365 d for AutoMax, the remaining time for a top-up", () => {
    const amount = 1000n * E18;
    expect(furnaceVeOut(amount, 0n, { kind: "new", durationSeconds: 0n })).toBe(
      (amount * MIN_LOCK_DURATION) / MAX_LOCK_DURATION,
    );
    expect(furnaceVeOut(amount, 0n, { kind: "new", durationSeconds: 2n * MAX_LOCK_DURATION })).toBe(amount);
    expect(furnaceVeOut(amount, 5n, { kind: "autoMax" })).toBe(amount + 5n);
    expect(furnaceVeOut(amount, 0n, { kind: "existing", lockEnd: 1_000n + 86_400n, now: 1_000n })).toBe(
      (amount * 86_400n) / MAX_LOCK_DURATION,
    );
    expect(furnaceVeOut(amount, 0n, { kind: "existing", lockEnd: 1_000n, now: 1_000n })).toBe(0n);
    expect(furnaceVeOut(amount, 0n, { kind: "existing", lockEnd: 999n, now: 1_000n })).toBe(0n);
  });
  it("matches the devnet's first seeded Furnace entry (2000e18 for 180 d)", () => {
    // Quoted on the devnet: principal 2000e18, bonus 78e18, veOut 1024767123287671232876.
    expect(furnaceVeOut(2000n * E18, 78n * E18, { kind: "new", durationSeconds: 180n * 86_400n })).toBe(
      1_024_767_123_287_671_232_876n,
    );
  });
});

// ---------- properties ----------

const seconds = fc.bigInt({ min: 0n, max: 2n * MAX_LOCK_DURATION });
const inRange = fc.bigInt({ min: MIN_LOCK_DURATION, max: MAX_LOCK_DURATION });
// Steepest segment: 270 d → 365 d, 3500 bps over 95 days, per second at 1e8 precision.
const MAX_SLOPE = (3500n * 100_000_000n) / (95n * 86_400n) + 1n;

describe("durationWeight properties", () => {
  it("is monotonic (non-decreasing)", () => {
    fc.assert(
      fc.property(seconds, seconds, (a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        return durationWeight(lo) <= durationWeight(hi) && durationWeightBps(lo) <= durationWeightBps(hi);
      }),
      { numRuns: 2000 },
    );
  });

  it("is bounded by [100, 10000] bps and flat outside [7 d, 365 d]", () => {
    fc.assert(
      fc.property(seconds, (s) => {
        const w = durationWeight(s);
        if (w < 100n * 100_000_000n || w > WEIGHT_DENOM) return false;
        if (s <= MIN_LOCK_DURATION && w !== 10_000_000_000n) return false;
        if (s >= MAX_LOCK_DURATION && w !== WEIGHT_DENOM) return false;
        return durationWeightBps(s) === w / 100_000_000n;
      }),
      { numRuns: 2000 },
    );
  });

  it("is continuous: one second never moves it by more than the steepest slope", () => {
    fc.assert(
      fc.property(inRange, (s) => {
        const step = durationWeight(s + 1n) - durationWeight(s);
        return step >= 0n && step <= MAX_SLOPE;
      }),
      { numRuns: 2000 },
    );
  });

  it("is continuous at every breakpoint (±1 s stays within one slope step of the breakpoint value)", () => {
    for (const b of DURATION_BREAKPOINTS) {
      const at = durationWeight(b.seconds);
      expect(at).toBe(b.bps * 100_000_000n);
      expect(at - durationWeight(b.seconds - 1n)).toBeLessThanOrEqual(MAX_SLOPE);
      expect(durationWeight(b.seconds + 1n) - at).toBeLessThanOrEqual(MAX_SLOPE);
      expect(durationWeight(b.seconds - 1n)).toBeLessThanOrEqual(at);
      expect(durationWeight(b.seconds + 1n)).toBeGreaterThanOrEqual(at);
    }
  });

  it("equals the segment formula computed independently (rational interpolation, floored)", () => {
    fc.assert(
      fc.property(inRange, (s) => {
        const i = DURATION_BREAKPOINTS.findIndex((b) => s <= b.seconds);
        if (i <= 0) return durationWeight(s) === 10_000_000_000n;
        const lo = DURATION_BREAKPOINTS[i - 1]!;
        const hi = DURATION_BREAKPOINTS[i]!;
        // w·(d1 − d0) ≤ w0·1e8·(d1 − d0) + (d − d0)(w1 − w0)·1e8 < (w + 1)·(d1 − d0)
        const span = hi.seconds - lo.seconds;
        const exact = lo.bps * 100_000_000n * span + (s - lo.seconds) * (hi.bps - lo.bps) * 100_000_000n;
        const w = durationWeight(s);
        return w * span <= exact && exact < (w + 1n) * span;
      }),
      { numRuns: 2000 },
    );
  });
});

describe("applyMinVeOutClamp properties", () => {
  const veOut = fc.bigInt({ min: 0n, max: 2n ** 200n });
  const slippage = fc.bigInt({ min: 0n, max: 10_000n });

  it("never returns 0 for a positive veOut and never exceeds veOut", () => {
    fc.assert(
      fc.property(veOut, slippage, (v, s) => {
        const m = applyMinVeOutClamp(v, s);
        if (v === 0n) return m === 0n;
        return m >= 1n && m <= v;
      }),
      { numRuns: 3000 },
    );
  });

  it("is the floored slippage formula wherever that is positive", () => {
    fc.assert(
      fc.property(veOut, slippage, (v, s) => {
        const floored = (v * (10_000n - s)) / 10_000n;
        const m = applyMinVeOutClamp(v, s);
        return floored > 0n ? m === floored : m === (v > 0n ? 1n : 0n);
      }),
      { numRuns: 3000 },
    );
  });

  it("is monotonic in veOut and anti-monotonic in slippage", () => {
    fc.assert(
      fc.property(veOut, veOut, slippage, slippage, (a, b, s, t) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const [sl, sh] = s <= t ? [s, t] : [t, s];
        return (
          applyMinVeOutClamp(lo, sl) <= applyMinVeOutClamp(hi, sl) &&
          applyMinVeOutClamp(hi, sh) <= applyMinVeOutClamp(hi, sl)
        );
      }),
      { numRuns: 2000 },
    );
  });
});

describe("bonusBpsVsPrincipalClaim and furnaceVeOut properties", () => {
  const amount = fc.bigInt({ min: 0n, max: 2n ** 128n });
  it("bonus bps is the floor of bonus·10000/principal", () => {
    fc.assert(
      fc.property(amount, amount, (bonus, principal) => {
        const bps = bonusBpsVsPrincipalClaim(bonus, principal);
        if (principal === 0n) return bps === 0n;
        return bps * principal <= bonus * 10_000n && bonus * 10_000n < (bps + 1n) * principal;
      }),
      { numRuns: 2000 },
    );
  });

  it("veOut never exceeds principal + bonus and a new lock's veOut grows with its duration", () => {
    fc.assert(
      fc.property(amount, amount, seconds, seconds, (p, b, d1, d2) => {
        const [lo, hi] = d1 <= d2 ? [d1, d2] : [d2, d1];
        const vLo = furnaceVeOut(p, b, { kind: "new", durationSeconds: lo });
        const vHi = furnaceVeOut(p, b, { kind: "new", durationSeconds: hi });
        const eff = furnaceEffectiveDuration({ kind: "new", durationSeconds: hi });
        return vLo <= vHi && vHi <= p + b && eff >= MIN_LOCK_DURATION && eff <= MAX_LOCK_DURATION;
      }),
      { numRuns: 2000 },
    );
  });
});
