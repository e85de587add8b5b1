import type { Address, Hex } from "viem";

/**
 * Multicall3.tryBlockAndAggregate(false, calls) call data and its answer, ABI-coded by hand: the state route
 * sends it on every request, and viem's generic coder spent ~0.15 ms per request on it (about a third of a
 * loopback node round trip). test/chain/aggregateCodec.test.ts pins both directions to viem's coder.
 */

/** keccak256("tryBlockAndAggregate(bool,(address,bytes)[])")[0:4]. */
const SELECTOR = "0x399542e9";

const word = (n: number | bigint) => n.toString(16).padStart(64, "0");
const pad = (body: string) => body.padEnd(Math.ceil(body.length / 64) * 64, "0");

export function encodeTryBlockAndAggregate(calls: readonly { target: Address; callData: Hex }[]): Hex {
  const n = calls.length;
  let offsets = "";
  let tails = "";
  let offset = 32 * n;
  for (const call of calls) {
    const data = call.callData.slice(2);
    const element = `${word(0).slice(40)}${call.target.slice(2).toLowerCase()}${word(0x40)}${word(data.length / 2)}${pad(data)}`;
    offsets += word(offset);
    tails += element;
    offset += element.length / 2;
  }
  return `${SELECTOR}${word(0)}${word(0x40)}${word(n)}${offsets}${tails}` as Hex;
}

export class AggregateDecodeError extends Error {
  override name = "AggregateDecodeError";
}

/** Decodes (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[]); throws on anything malformed. */
export function decodeTryBlockAndAggregate(raw: Hex): {
  blockNumber: bigint;
  results: { success: boolean; returnData: Hex }[];
} {
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
  at(32); // block hash: present, not used
  const array = small(64);
  const n = small(array);
  const base = array + 32;
  const results: { success: boolean; returnData: Hex }[] = [];
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
  return { blockNumber, results };
}
