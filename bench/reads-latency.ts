/**
 * Latency of GET /state/:address — the index's token ids (one SQL statement on Postgres, a real Ponder
 * index) then one Multicall3 eth_call with the balances, veBalanceOf, the NFT count and every lock's
 * ownerOf + getLockInfo, plus routing, strict parsing and JSON — against one bare eth_call
 * (AssetToken.balanceOf, raw fetch) to the same anvil in the same run. Three phases: index current; index
 * stopped and 100 blocks behind with a new lock of the user since (still one round trip); and 5 mints
 * since (two round trips). Sequential, loopback, bounded: N of each after a warm-up, alternating so both
 * see the same node state. The app is called in-process (app.request), so the figure is the service's
 * own cost over one node round trip, without an HTTP server in front. Needs Postgres (TEST_DATABASE_URL
 * or postgresql://postgres@127.0.0.1:5432/postgres).
 * Usage: npx tsx bench/reads-latency.ts [N=400]
 */
import { encodeFunctionData } from "viem";
import { AssetTokenAbi, LpStakingVault7DAbi, ShareholderRoyaltiesAbi } from "../abis";
import { canonicalMulticallRequest } from "../api/chain/multicall";
import { benchDevnet } from "./readsDevnet";
import { benchIndex } from "./stateIndex";

const N = Math.min(Number(process.argv[2] ?? 400), 5_000);
const b = await benchDevnet();
const idx = await benchIndex(b);
try {
  const user = b.seed.accounts.fresh.address;
  const statePath = `/api/mcp/v1/state/${user}`;
  const bare = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [
      {
        to: b.deployment.addresses.AssetToken,
        data: encodeFunctionData({ abi: AssetTokenAbi, functionName: "balanceOf", args: [user] }),
      },
      "latest",
    ],
  });
  const bareCall = async () => {
    const res = await fetch(b.anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: bare,
    });
    const json = (await res.json()) as { result?: string };
    if (typeof json.result !== "string") throw new Error("bare eth_call failed");
  };
  const stateCall = () => idx.get(statePath);
  // Breakdown: a Multicall3 eth_call of the four balances, sent raw.
  const c = b.deployment.addresses;
  const args = [user] as const;
  const multicall = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: canonicalMulticallRequest([
      { target: c.AssetToken, callData: encodeFunctionData({ abi: AssetTokenAbi, functionName: "balanceOf", args }) },
      {
        target: c.LpStakingVault7D,
        callData: encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "stakedBalance", args }),
      },
      {
        target: c.ShareholderRoyalties,
        callData: encodeFunctionData({ abi: ShareholderRoyaltiesAbi, functionName: "claimableEth", args }),
      },
      {
        target: c.LpStakingVault7D,
        callData: encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "earned", args }),
      },
    ]),
  });
  const multicallCall = async () => {
    const res = await fetch(b.anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: multicall,
    });
    const json = (await res.json()) as { result?: string };
    if (typeof json.result !== "string") throw new Error("multicall eth_call failed");
  };

  const q = (xs: number[], p: number) =>
    [...xs].sort((a, z) => a - z)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const row = (label: string, xs: number[]) =>
    console.log(
      `${label.padEnd(32)} n=${xs.length} p50 ${q(xs, 0.5).toFixed(3)} ms  p90 ${q(xs, 0.9).toFixed(3)} ms  p99 ${q(xs, 0.99).toFixed(3)} ms`,
    );

  const phase = async (label: string, warmup: number) => {
    // Warm-up long enough for the JIT to settle on every path (fewer rounds left the app path cold).
    for (let i = 0; i < warmup; i++) {
      await bareCall();
      await multicallCall();
      await stateCall();
    }
    const tBare: number[] = [];
    const tMulti: number[] = [];
    const tState: number[] = [];
    const deadline = Date.now() + 60_000;
    for (let i = 0; i < N && Date.now() < deadline; i++) {
      let t = performance.now();
      await bareCall();
      tBare.push(performance.now() - t);
      t = performance.now();
      await multicallCall();
      tMulti.push(performance.now() - t);
      t = performance.now();
      await stateCall();
      tState.push(performance.now() - t);
    }
    const body = JSON.parse(await stateCall()) as { source: string; blockNumber: string; indexedBlock: string | null };
    console.log(`-- ${label}: source ${body.source}, block ${body.blockNumber}, indexed ${body.indexedBlock}`);
    row("bare eth_call (baseline)", tBare);
    row("4-balance multicall, raw", tMulti);
    row("GET /state/:address", tState);
    console.log(
      `state latency / bare eth_call (${label}): p50 ${(q(tState, 0.5) / q(tBare, 0.5)).toFixed(2)}x, p90 ${(q(tState, 0.9) / q(tBare, 0.9)).toFixed(2)}x`,
    );
  };

  await idx.lockViaFurnace(); // the user holds a few locks, so their reads are part of the call
  await idx.lockViaFurnace();
  await idx.catchUp();
  await phase("index current", 300);
  await idx.freeze();
  await idx.clients.testClient.mine({ blocks: 100 });
  await idx.lockViaFurnace();
  await phase("index 100+ blocks behind, 1 mint since", 100);
  for (let i = 0; i < 5; i++) await idx.lockViaFurnace();
  await phase("index behind, 6 mints since (2 round trips)", 100);
} finally {
  await idx.stop();
  await b.stop();
}
