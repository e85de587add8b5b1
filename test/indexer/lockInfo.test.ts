/** indexer/lockInfo.ts: a reverted getLockInfo is "not listed"; any other failure is rethrown (Ponder retries/stops). */
import { ContractFunctionExecutionError, ContractFunctionRevertedError, HttpRequestError } from "viem";
import { describe, expect, it } from "vitest";
import { isContractRevert, listedFlag } from "../../indexer/lockInfo";

const reverted = () =>
  new ContractFunctionExecutionError(
    new ContractFunctionRevertedError({ abi: [], functionName: "getLockInfo", data: "0x7e273289" }),
    { abi: [], functionName: "getLockInfo" },
  );

describe("listedFlag", () => {
  it("returns getLockInfo's fourth value", async () => {
    expect(await listedFlag(async () => [1n, 2n, false, true])).toEqual({ listed: true, reverted: false });
    expect(await listedFlag(async () => [0n, 0n, false, false])).toEqual({ listed: false, reverted: false });
  });

  it("a reverted read (e.g. a burned id on a contract that reverts for it) is not listed, not an error", async () => {
    expect(isContractRevert(reverted())).toBe(true);
    expect(
      await listedFlag(async () => {
        throw reverted();
      }),
    ).toEqual({ listed: false, reverted: true });
  });

  it("a transport failure or any other error is rethrown", async () => {
    const transport = new HttpRequestError({ url: "http://127.0.0.1:1" });
    expect(isContractRevert(transport)).toBe(false);
    await expect(
      listedFlag(async () => {
        throw transport;
      }),
    ).rejects.toBe(transport);
    await expect(
      listedFlag(async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });
});
