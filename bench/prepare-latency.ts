/**
 * Prepare latency against one bare eth_call (AssetToken.allowance, raw fetch) to the same anvil, same run.
 * Three routes: withdraw-lp (no read: gate cache + parse + encode), lock (one allowance eth_call) and
 * lock-via-furnace (quote + allowance in one JSON-RPC batch). Sequential, loopback, bounded (N each, 60 s cap),
 * alternating so all see the same node state; in-process app.request, so the figure is the service's own cost
 * over a node round trip, without an HTTP server in front.
 * Issue 16: the same three with `user` and simulation on (one more round trip: eth_simulateV1 of the batch);
 * the three above run with simulate=false.
 * Usage: npx tsx bench/prepare-latency.ts [N=300]
 */
import { encodeFunctionData } from "viem";
import { AssetTokenAbi } from "../abis";
import { bareEthCall, benchDevnet } from "./readsDevnet";

const N = Math.min(Number(process.argv[2] ?? 300), 5_000);
const E18 = 10n ** 18n;
const b = await benchDevnet();
try {
  const user = b.seed.accounts.fresh.address;
  const c = b.deployment.addresses;
  const bareCall = bareEthCall(
    b.anvil.rpcUrl,
    c.AssetToken,
    encodeFunctionData({ abi: AssetTokenAbi, functionName: "allowance", args: [user, c.VeLockNFT] }),
  );

  const withdraw = `/api/mcp/v1/prepare/withdraw-lp?user=${user}`;
  const lock = `/api/mcp/v1/prepare/lock?user=${user}&amountWei=${1000n * E18}&durationSecs=604800`;
  const furnace = `/api/mcp/v1/prepare/lock-via-furnace?user=${user}&claimAmountWei=${2000n * E18}&durationSeconds=2592000`;
  const routes = {
    "withdraw-lp (no read)": `${withdraw}&simulate=false`,
    "lock (allowance)": `${lock}&simulate=false`,
    "lock-via-furnace (quote+allow.)": `${furnace}&simulate=false`,
    "withdraw-lp + simulation": withdraw,
    "lock + simulation": lock,
    "lock-via-furnace + simulation": furnace,
  };
  const calls: [string, () => Promise<unknown>][] = [
    ["bare eth_call (baseline)", bareCall],
    ...Object.entries(routes).map(([label, p]) => [label, () => b.get(p)] as [string, () => Promise<unknown>]),
  ];

  for (let i = 0; i < 50; i++) for (const [, f] of calls) await f();
  const times = new Map<string, number[]>(calls.map(([l]) => [l, []]));
  const deadline = Date.now() + 60_000;
  for (let i = 0; i < N && Date.now() < deadline; i++) {
    for (const [label, f] of calls) {
      const t = performance.now();
      await f();
      times.get(label)!.push(performance.now() - t);
    }
  }
  const q = (xs: number[], p: number) =>
    [...xs].sort((a, z) => a - z)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  for (const [label, xs] of times) {
    console.log(
      `${label.padEnd(34)} n=${xs.length} p50 ${q(xs, 0.5).toFixed(3)} ms  p90 ${q(xs, 0.9).toFixed(3)} ms  p99 ${q(xs, 0.99).toFixed(3)} ms`,
    );
  }
  const base = times.get("bare eth_call (baseline)")!;
  const ratio = (label: string) => (q(times.get(label)!, 0.5) / q(base, 0.5)).toFixed(2);
  console.log(
    `prepare latency / bare eth_call (p50): withdraw-lp ${ratio("withdraw-lp (no read)")}x, lock ${ratio("lock (allowance)")}x, lock-via-furnace ${ratio("lock-via-furnace (quote+allow.)")}x`,
  );
  console.log(
    `with simulation / bare eth_call (p50): withdraw-lp ${ratio("withdraw-lp + simulation")}x, lock ${ratio("lock + simulation")}x, lock-via-furnace ${ratio("lock-via-furnace + simulation")}x`,
  );
} finally {
  await b.stop();
}
