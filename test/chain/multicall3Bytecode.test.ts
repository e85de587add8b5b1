/**
 * The project's own copy of Multicall3's creation code (api/chain/multicall3Bytecode.ts) is the one viem ships: the
 * installed viem's file is read here, in the test only (production code never loads a private path of a package:
 * test/production/publicApis.test.ts). The runtime code hash the start-up check compares with is derived by running
 * the creation code on anvil.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { keccak256 } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MULTICALL3_ADDRESS } from "../../api/chain/multicall";
import { MULTICALL3_CREATION_CODE, MULTICALL3_RUNTIME_CODE_HASH } from "../../api/chain/multicall3Bytecode";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import { installMulticall3 } from "../../devnet/multicall3";

let anvil: AnvilHandle;
beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => {
  await anvil?.stop();
});

const rpc = async (method: string, params: unknown[]) => {
  const res = await fetch(anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: string }).result;
};

describe("Multicall3's creation code", () => {
  it("is byte for byte what the installed viem ships as multicall3Bytecode", () => {
    const viemDir = path.dirname(createRequire(import.meta.url).resolve("viem/package.json"));
    const source = readFileSync(path.join(viemDir, "_esm", "constants", "contracts.js"), "utf8");
    const shipped = /export const multicall3Bytecode = ["'](0x[0-9a-f]+)["']/.exec(source)?.[1];
    expect(shipped).toBeDefined();
    expect(MULTICALL3_CREATION_CODE).toBe(shipped);
  });

  it("is solc 0.8.12's build (its CBOR metadata) of Multicall3: tryBlockAndAggregate's selector is in it", () => {
    expect(MULTICALL3_CREATION_CODE.endsWith("64736f6c634300080c0033")).toBe(true);
    expect(MULTICALL3_CREATION_CODE).toContain("399542e9"); // tryBlockAndAggregate(bool,(address,bytes)[])
  });

  it("deploys the runtime code whose hash the start-up check knows, the code the devnet installs", async () => {
    const runtime = (await rpc("eth_call", [{ data: MULTICALL3_CREATION_CODE }, "latest"])) as `0x${string}`;
    expect(keccak256(runtime)).toBe(MULTICALL3_RUNTIME_CODE_HASH);
    await installMulticall3(anvil.rpcUrl);
    expect(keccak256((await rpc("eth_getCode", [MULTICALL3_ADDRESS, "latest"])) as `0x${string}`)).toBe(
      MULTICALL3_RUNTIME_CODE_HASH,
    );
  });
});
