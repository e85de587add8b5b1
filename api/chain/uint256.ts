import type { Hex } from "viem";

const UINT256_WORD = /^0x[0-9a-fA-F]{64}$/;

/** True only for exactly `0x` + 64 hex characters: the one shape a uint256 view may return (spec §2.2). */
export function isUint256Word(value: unknown): value is Hex {
  return typeof value === "string" && UINT256_WORD.test(value);
}

/** Decodes a strict uint256 word, or null for anything else (`0x`, short, long, non-hex, non-string). */
export function decodeUint256Word(value: unknown): bigint | null {
  return isUint256Word(value) ? BigInt(value) : null;
}
