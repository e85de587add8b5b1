import { getAddress } from "viem";
import { describe, expect, it } from "vitest";
import { checksumMemo } from "../../api/read/checksum";

const address = (i: number) => `0x${(i * 2654435761).toString(16).padStart(40, "0").slice(-40)}`;

describe("checksumMemo", () => {
  it("answers what getAddress answers, for addresses seen, forgotten and seen again", () => {
    const shown = checksumMemo(8);
    for (const round of [0, 1]) {
      for (let i = 0; i < 40; i++) {
        const a = address(i + round * 5);
        expect(shown(a)).toBe(getAddress(a));
        expect(shown(a)).toBe(getAddress(a)); // a hit
      }
    }
    // Any case in, EIP-55 out.
    const mixed = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    expect(shown(mixed.toLowerCase())).toBe(mixed);
    expect(shown(mixed.toUpperCase().replace("0X", "0x"))).toBe(mixed);
  });

  it("refuses what is not an address, and remembers nothing for it", () => {
    const shown = checksumMemo(8);
    expect(() => shown("0x1234")).toThrow();
    expect(() => shown("0x1234")).toThrow();
  });
});
