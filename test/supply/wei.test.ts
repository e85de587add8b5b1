import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatWei2, SMALLEST_FIGURE_WEI } from "../../api/supply/wei";

/**
 * Independent reference: the uint256 arrives as 64 hex characters and is turned into decimal digits
 * by schoolbook multiply-by-16-and-add on a digit array, then cut by digit position. No BigInt, no
 * Number arithmetic on the value, no toString(10) of it — so it shares no code path with formatWei2.
 */
function referenceFromHex(hex64: string): string {
  const digits: number[] = [0]; // little-endian decimal digits
  for (const ch of hex64) {
    let carry = Number.parseInt(ch, 16);
    for (let i = 0; i < digits.length; i++) {
      const v = digits[i]! * 16 + carry;
      digits[i] = v % 10;
      carry = Math.floor(v / 10);
    }
    while (carry > 0) {
      digits.push(carry % 10);
      carry = Math.floor(carry / 10);
    }
  }
  // big-endian string, at least 19 digits so there is a whole part
  let s = digits.reverse().join("").replace(/^0+/, "");
  while (s.length < 19) s = `0${s}`;
  const whole = s.slice(0, s.length - 18);
  const frac = s.slice(s.length - 18, s.length - 16);
  return `${whole}.${frac}`;
}

const hex64 = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });

describe("formatWei2", () => {
  it("matches the protocol.md §6 vectors", () => {
    expect(formatWei2(12345678901234567890123n)).toBe("12345.67");
    expect(formatWei2(1n)).toBe("0.00");
    expect(formatWei2(0n)).toBe("0.00");
  });

  it("SMALLEST_FIGURE_WEI is where the figure stops being 0.00 (the supply routes' zero guard)", () => {
    expect(SMALLEST_FIGURE_WEI).toBe(10n ** 16n);
    expect(formatWei2(SMALLEST_FIGURE_WEI - 1n)).toBe("0.00");
    expect(formatWei2(SMALLEST_FIGURE_WEI)).toBe("0.01");
  });

  it("truncates, never rounds, at the edges", () => {
    expect(formatWei2(10n ** 16n - 1n)).toBe("0.00");
    expect(formatWei2(10n ** 16n)).toBe("0.01");
    expect(formatWei2(10n ** 18n - 1n)).toBe("0.99");
    expect(formatWei2(10n ** 18n)).toBe("1.00");
    expect(formatWei2(1_995_000_000_000_000_000n)).toBe("1.99");
    expect(formatWei2(2n ** 256n - 1n)).toBe("115792089237316195423570985008687907853269984665640564039457.58");
    // a figure a float would mangle: 2^53 + 1 whole tokens
    expect(formatWei2((2n ** 53n + 1n) * 10n ** 18n + 999n * 10n ** 15n)).toBe("9007199254740993.99");
  });

  it("rejects negatives (circulating never goes below zero)", () => {
    expect(() => formatWei2(-1n)).toThrow(RangeError);
  });

  it("always has a canonical whole part and exactly two fractional digits", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), (wei) => {
        expect(formatWei2(wei)).toMatch(/^(0|[1-9][0-9]*)\.[0-9]{2}$/);
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with an independent string-arithmetic reference over random uint256", () => {
    // The reference itself must be right before it can judge anything.
    expect(referenceFromHex("0".repeat(64))).toBe("0.00");
    expect(referenceFromHex(12345678901234567890123n.toString(16).padStart(64, "0"))).toBe("12345.67");
    fc.assert(
      fc.property(hex64, (hex) => {
        expect(formatWei2(BigInt(`0x${hex}`))).toBe(referenceFromHex(hex));
      }),
      { numRuns: 3000 },
    );
    // Small values (mostly zeros in front) exercise the padding, which random 256-bit values rarely do.
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 22n }), (wei) => {
        expect(formatWei2(wei)).toBe(referenceFromHex(wei.toString(16).padStart(64, "0")));
      }),
      { numRuns: 3000 },
    );
  });
});
