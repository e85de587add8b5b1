import fc from "fast-check";
import { type Address, getAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import {
  deploylessMulticallDataViaViem,
  deploylessMulticallRequest,
  MULTICALL3_CREATION_CODE,
} from "../../api/chain/multicall";

describe("deployless multicall call data", () => {
  it("uses Multicall3's creation code from viem", () => {
    expect(MULTICALL3_CREATION_CODE.startsWith("0x6080604052")).toBe(true);
    expect(MULTICALL3_CREATION_CODE.length).toBeGreaterThan(10_000);
  });

  it("the precomputed prefix encodes exactly what viem's encodeDeployData does, for any calls", () => {
    const address = fc
      .uint8Array({ minLength: 20, maxLength: 20 })
      .map((b) => getAddress(`0x${Buffer.from(b).toString("hex")}`) as Address);
    const data = fc.uint8Array({ maxLength: 100 }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex);
    fc.assert(
      fc.property(fc.array(fc.record({ target: address, callData: data }), { maxLength: 6 }), (calls) => {
        const [{ data: ours }, tag] = deploylessMulticallRequest(calls);
        return tag === "latest" && ours === deploylessMulticallDataViaViem(calls);
      }),
      { numRuns: 200 },
    );
  });
});
