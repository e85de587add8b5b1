/**
 * Latency of GET /state/:address (four balances in one deployless-multicall eth_call, plus routing,
 * strict parsing and JSON) against one bare eth_call (AssetToken.balanceOf, raw fetch) to the same
 * anvil in the same run. Sequential, loopback, bounded: N of each after a warm-up, alternating so
 * both see the same node state. The app is called in-process (app.request), so the figure is the
 * service's own cost over one node round trip, without an HTTP server in front.
 * Usage: npx tsx bench/reads-latency.ts [N=400]
 */
import { encodeFunctionData } from "viem";
import { AssetTokenAbi, LpStakingVault7DAbi, ShareholderRoyaltiesAbi } from "../abis";
import { deploylessMulticallRequest } from "../api/chain/multicall";
import { benchDevnet } from "./readsDevnet";

const N = Math.min(Number(process.argv[2] ?? 400), 5_000);
const b = await benchDevnet();
try {
  const user = b.seed.accounts.carol.address;
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
  const stateCall = () => b.get(statePath);
  // Breakdown: the state route's own eth_call (deployless Multicall3, four balances), sent raw.
  const c = b.deployment.addresses;
  const args = [user] as const;
  const multicall = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: deploylessMulticallRequest([
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

  // Warm-up long enough for the JIT to settle on every path (fewer rounds left the app path cold).
  for (let i = 0; i < 300; i++) {
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
  const q = (xs: number[], p: number) =>
    [...xs].sort((a, z) => a - z)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const row = (label: string, xs: number[]) =>
    console.log(
      `${label.padEnd(32)} n=${xs.length} p50 ${q(xs, 0.5).toFixed(3)} ms  p90 ${q(xs, 0.9).toFixed(3)} ms  p99 ${q(xs, 0.99).toFixed(3)} ms`,
    );
  row("bare eth_call (baseline)", tBare);
  row("its multicall eth_call, raw", tMulti);
  row("GET /state/:address", tState);
  console.log(
    `state latency / bare eth_call: p50 ${(q(tState, 0.5) / q(tBare, 0.5)).toFixed(2)}x, p90 ${(q(tState, 0.9) / q(tBare, 0.9)).toFixed(2)}x`,
  );
} finally {
  await b.stop();
}
