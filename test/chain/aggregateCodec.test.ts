import { decodeFunctionResult, encodeFunctionData, encodeFunctionResult, getAddress, type Hex, parseAbi } from "viem";
import { describe, expect, it } from "vitest";
import {
  AggregateDecodeError,
  decodeTryBlockAndAggregate,
  encodeTryBlockAndAggregate,
  encodeTryBlockAndAggregateResult,
} from "../../api/chain/aggregateCodec";

const ABI = parseAbi([
  "function tryBlockAndAggregate(bool requireSuccess, (address target, bytes callData)[] calls) payable returns (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[] returnData)",
]);

// A small deterministic generator: lengths 0..100 bytes hit the 32-byte padding boundaries.
let seed = 7;
const next = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed;
};
const bytes = (n: number): Hex =>
  `0x${Array.from({ length: n }, () => (next() % 256).toString(16).padStart(2, "0")).join("")}`;
const address = () => getAddress(bytes(20));

describe("tryBlockAndAggregate codec", () => {
  it("encodes exactly as viem does, for 0..40 calls of any data length", () => {
    for (let n = 0; n <= 40; n++) {
      const calls = Array.from({ length: n }, () => ({ target: address(), callData: bytes(next() % 101) }));
      for (const requireSuccess of [false, true])
        expect(encodeTryBlockAndAggregate(calls, requireSuccess)).toBe(
          encodeFunctionData({ abi: ABI, functionName: "tryBlockAndAggregate", args: [requireSuccess, calls] }),
        );
    }
  });

  it("decodes exactly what viem decodes", () => {
    for (let n = 0; n <= 40; n++) {
      const results = Array.from({ length: n }, () => ({ success: next() % 3 !== 0, returnData: bytes(next() % 101) }));
      const block = BigInt(next()) * 1_000_003n;
      const data = encodeFunctionResult({
        abi: ABI,
        functionName: "tryBlockAndAggregate",
        result: [block, bytes(32), results],
      });
      const ours = decodeTryBlockAndAggregate(data);
      const viem = decodeFunctionResult({ abi: ABI, functionName: "tryBlockAndAggregate", data });
      expect(ours).toEqual(viem);
      // And back: the canonical encoding readView compares the answer with is viem's.
      expect(encodeTryBlockAndAggregateResult(ours)).toBe(data);
    }
  });

  it("refuses malformed answers: short, truncated, offsets out of range, a bool that is not 0/1", () => {
    const good = encodeFunctionResult({
      abi: ABI,
      functionName: "tryBlockAndAggregate",
      result: [5n, bytes(32), [{ success: true, returnData: bytes(32) }]],
    });
    const word = (n: bigint) => n.toString(16).padStart(64, "0");
    const bad: Hex[] = [
      "0x",
      `0x${word(1n)}`,
      good.slice(0, good.length - 2) as Hex,
      good.slice(0, good.length - 64) as Hex,
      `0x${word(5n)}${word(0n)}${word(10n ** 30n)}` as Hex,
      `${good.slice(0, 2 + 64 * 3)}${word(10n ** 6n)}${good.slice(2 + 64 * 4)}` as Hex, // array length too big
      `${good.slice(0, 2 + 64 * 5)}${word(2n)}${good.slice(2 + 64 * 6)}` as Hex, // success = 2
    ];
    for (const data of bad)
      expect(() => decodeTryBlockAndAggregate(data), data.slice(0, 80)).toThrow(AggregateDecodeError);
  });
});
