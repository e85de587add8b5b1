import type { Address, Hex } from "viem";

/**
 * Multicall3.tryBlockAndAggregate(false, calls): its call data and its answer, both ways, ABI-coded by hand.
 * The state route sends it on every request, and viem's generic coder is the larger part of the route's own
 * cost there (measured in api/chain/readView.ts). readView holds it to the same rule as viem's coder: the
 * answer counts only if re-encoding what it decodes to gives it back exactly. test/chain/aggregateCodec.test.ts
 * pins all three directions to viem's coder.
 */

/** keccak256("tryBlockAndAggregate(bool,(address,bytes)[])")[0:4]. */
const SELECTOR = "0x399542e9";

const word = (n: number | bigint) => n.toString(16).padStart(64, "0");
const pad = (body: string) => body.padEnd(Math.ceil(body.length / 64) * 64, "0");

export type AggregateMember = { target: Address; callData: Hex };
export type AggregateResult = { success: boolean; returnData: Hex };
/** What viem's decodeFunctionResult returns for tryBlockAndAggregate: (blockNumber, blockHash, results). */
export type AggregateAnswer = readonly [bigint, Hex, readonly AggregateResult[]];

/** The ABI encoding of a dynamic array of (head word, bytes) tuples: offsets, then each element. */
function encodeTupleArray<T>(items: readonly T[], head: (item: T) => string, bytes: (item: T) => string): string {
  let offsets = "";
  let tails = "";
  let offset = 32 * items.length;
  for (const item of items) {
    const data = bytes(item);
    const element = `${head(item)}${word(0x40)}${word(data.length / 2)}${pad(data)}`;
    offsets += word(offset);
    tails += element;
    offset += element.length / 2;
  }
  return `${word(items.length)}${offsets}${tails}`;
}

/** tryBlockAndAggregate(requireSuccess, calls)'s call data. */
export function encodeTryBlockAndAggregate(calls: readonly AggregateMember[], requireSuccess = false): Hex {
  const array = encodeTupleArray(
    calls,
    (c) => c.target.slice(2).toLowerCase().padStart(64, "0"),
    (c) => c.callData.slice(2),
  );
  return `${SELECTOR}${word(requireSuccess ? 1 : 0)}${word(0x40)}${array}` as Hex;
}

/** The canonical encoding of an answer: what a node must have sent for it to count. */
export function encodeTryBlockAndAggregateResult([blockNumber, blockHash, results]: AggregateAnswer): Hex {
  const array = encodeTupleArray(
    results,
    (r) => word(r.success ? 1 : 0),
    (r) => r.returnData.slice(2),
  );
  return `0x${word(blockNumber)}${blockHash.slice(2).padStart(64, "0")}${word(0x60)}${array}` as Hex;
}

export class AggregateDecodeError extends Error {
  override name = "AggregateDecodeError";
}

/** Decodes (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[]); throws on anything out of bounds. */
export function decodeTryBlockAndAggregate(raw: Hex): AggregateAnswer {
  const hex = raw.slice(2);
  const bytes = hex.length / 2;
  const at = (byte: number): bigint => {
    if (!Number.isInteger(byte) || byte < 0 || byte + 32 > bytes) throw new AggregateDecodeError("out of bounds");
    return BigInt(`0x${hex.slice(byte * 2, byte * 2 + 64)}`);
  };
  const small = (byte: number): number => {
    const v = at(byte);
    if (v > BigInt(bytes)) throw new AggregateDecodeError("offset or length out of bounds");
    return Number(v);
  };
  const blockNumber = at(0);
  at(32);
  const blockHash = `0x${hex.slice(64, 128)}` as Hex;
  const array = small(64);
  const n = small(array);
  const base = array + 32;
  const results: AggregateResult[] = [];
  for (let i = 0; i < n; i++) {
    const element = base + small(base + 32 * i);
    const success = at(element);
    if (success > 1n) throw new AggregateDecodeError("bool out of range");
    const data = element + small(element + 32);
    const length = small(data);
    if (data + 32 + length > bytes) throw new AggregateDecodeError("bytes out of bounds");
    results.push({
      success: success === 1n,
      returnData: `0x${hex.slice((data + 32) * 2, (data + 32 + length) * 2)}` as Hex,
    });
  }
  return [blockNumber, blockHash, results];
}

/** The three together, as readView takes a hand coder (api/chain/readView.ts: ViewCodec). */
export const tryBlockAndAggregateCodec = {
  encodeCall: ([requireSuccess, calls]: readonly [boolean, readonly AggregateMember[]]) =>
    encodeTryBlockAndAggregate(calls, requireSuccess),
  decodeResult: decodeTryBlockAndAggregate,
  encodeResult: encodeTryBlockAndAggregateResult,
};
