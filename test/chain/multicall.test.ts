import fc from "fast-check";
import { type Address, deploylessCallViaBytecodeBytecode, encodeDeployData, getAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { VeLockNFTAbi } from "../../abis";
import { encodeTryBlockAndAggregate } from "../../api/chain/aggregateCodec";
import { decodeMember, MULTICALL3_ADDRESS, MULTICALL3_CREATION_CODE, multicallView } from "../../api/chain/multicall";
import { ViewReadError, viewRequest } from "../../api/chain/readView";
import { RpcError } from "../../api/chain/rpc";

const DEPLOYLESS_CONSTRUCTOR = [
  { type: "constructor", stateMutability: "nonpayable", inputs: [{ type: "bytes" }, { type: "bytes" }] },
] as const;

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => getAddress(`0x${Buffer.from(b).toString("hex")}`) as Address);
const data = fc.uint8Array({ maxLength: 100 }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex);
const members = fc.array(fc.record({ target: address, callData: data }), { maxLength: 6 });

describe("the multicall's outer call is a readView request", () => {
  it("deployless: exactly what viem's encodeDeployData produces, for any calls", () => {
    fc.assert(
      fc.property(members, (calls) => {
        const { params } = viewRequest(multicallView(calls, "deployless"));
        const expected = encodeDeployData({
          abi: DEPLOYLESS_CONSTRUCTOR,
          bytecode: deploylessCallViaBytecodeBytecode,
          args: [MULTICALL3_CREATION_CODE, encodeTryBlockAndAggregate(calls)],
        });
        return JSON.stringify(params) === JSON.stringify([{ data: expected }, "latest"]);
      }),
      { numRuns: 200 },
    );
  });

  it("deployed: to the address given (the canonical one, or MULTICALL3's), at the block asked for", () => {
    const calls = [{ target: MULTICALL3_ADDRESS, callData: "0x12345678" as Hex }];
    expect(viewRequest(multicallView(calls, MULTICALL3_ADDRESS), "0x2a").params).toEqual([
      { to: MULTICALL3_ADDRESS, data: encodeTryBlockAndAggregate(calls) },
      "0x2a",
    ]);
    const elsewhere = "0x000000000000000000000000000000000000bEEF";
    expect(viewRequest(multicallView(calls, elsewhere)).params).toEqual([
      { to: elsewhere, data: encodeTryBlockAndAggregate(calls) },
      "latest",
    ]);
  });
});

describe("decodeMember: a member's answer by its own view", () => {
  const ownerOf = { address: MULTICALL3_ADDRESS, abi: VeLockNFTAbi, functionName: "ownerOf" } as const;
  const word = (hex: string) => hex.padStart(64, "0");
  it("decodes by the ABI", () => {
    const owner = getAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
    expect(decodeMember(ownerOf, { success: true, returnData: `0x${word(owner.slice(2))}` }, 9)).toBe(owner);
  });

  it("a revert is kind rpc with its revert data and position; a malformed answer is malformed", () => {
    const fail = (returnData: Hex, success: boolean) => {
      try {
        decodeMember(ownerOf, { success, returnData }, 9);
      } catch (error) {
        return error as ViewReadError;
      }
      throw new Error("no error");
    };
    const reverted = fail("0x7e273289", false);
    expect([reverted.kind, reverted.member, reverted.revertData]).toEqual(["rpc", 9, "0x7e273289"]);
    expect(reverted.cause).toBeInstanceOf(RpcError);
    // Dirty upper bytes in an address word, a short answer, a word too many.
    for (const returnData of [`0x${"ff".repeat(32)}`, "0x1234", `0x${word("1")}${word("2")}`] as Hex[]) {
      const e = fail(returnData, true);
      expect([e instanceof ViewReadError, e.kind, e.member]).toEqual([true, "malformed", 9]);
    }
  });
});
