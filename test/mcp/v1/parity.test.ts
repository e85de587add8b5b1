import { decodeFunctionResult, encodeFunctionData, type Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../api/chain/rpc";
import { DURATION_BREAKPOINTS, durationWeight, durationWeightBps } from "../../../api/math";
import { type AnvilHandle, startAnvil } from "../../../devnet/anvil";
import { DEVNET_ABIS, deployDevnet } from "../../../devnet/deploy";

// Parity of api/math with the devnet FurnaceQuoter on chain: exact equality over a 6-hour grid from
// 6 h to 400 d plus every breakpoint ± 1 s. Calls go out as JSON-RPC batches to keep this fast.
const HOUR = 3_600n;
const DAY = 86_400n;
const BATCH = 400;

let anvil: AnvilHandle;
let quoter: `0x${string}`;

beforeAll(async () => {
  anvil = await startAnvil();
  quoter = (await deployDevnet({ rpcUrl: anvil.rpcUrl })).addresses.FurnaceQuoter;
});
afterAll(async () => {
  await anvil?.stop();
});

function durations(): bigint[] {
  const out = new Set<bigint>();
  for (let s = 6n * HOUR; s <= 400n * DAY; s += 6n * HOUR) out.add(s);
  for (const b of DURATION_BREAKPOINTS) for (const d of [-1n, 0n, 1n]) out.add(b.seconds + d);
  return [...out].sort((a, b) => (a < b ? -1 : 1));
}

async function onChain(fn: "durationWeightBps" | "durationWeight", inputs: bigint[]): Promise<bigint[]> {
  const rpc = createRpcClient({ url: anvil.rpcUrl });
  const out: bigint[] = [];
  for (let i = 0; i < inputs.length; i += BATCH) {
    const chunk = inputs.slice(i, i + BATCH);
    const results = await rpc.batch(
      chunk.map((d) => ({
        method: "eth_call",
        params: [
          { to: quoter, data: encodeFunctionData({ abi: DEVNET_ABIS.FurnaceQuoter, functionName: fn, args: [d] }) },
          "latest",
        ],
      })),
    );
    for (const r of results) {
      out.push(decodeFunctionResult({ abi: DEVNET_ABIS.FurnaceQuoter, functionName: fn, data: r as Hex }) as bigint);
    }
  }
  return out;
}

describe("durationWeight parity with FurnaceQuoter on chain", () => {
  const grid = durations();

  it("covers the grid and every breakpoint ± 1 s", () => {
    // Every breakpoint is a whole day, so on the grid already: the ±1 s neighbours add two points each.
    expect(grid.length).toBe(1600 + 2 * DURATION_BREAKPOINTS.length);
    expect(grid[0]).toBe(6n * HOUR);
    expect(grid.at(-1)).toBe(400n * DAY);
  });

  it("durationWeightBps: exact equality at every point", async () => {
    const chain = await onChain("durationWeightBps", grid);
    const mismatches = grid.filter((d, i) => chain[i] !== durationWeightBps(d));
    expect(mismatches).toEqual([]);
    expect(new Set(chain).size).toBeGreaterThan(1000); // the grid really walks the curve
  });

  it("durationWeight at 1e8 precision (devnet extra): exact equality at every point", async () => {
    const chain = await onChain("durationWeight", grid);
    const mismatches = grid.filter((d, i) => chain[i] !== durationWeight(d));
    expect(mismatches).toEqual([]);
  });
});
