/**
 * Our RpcClient (api/chain/rpc.ts: node:http with a keep-alive agent) against viem's http transport for the
 * same eth_call (AssetToken.balanceOf) to the same anvil, in the same run, alternating call by call, with
 * raw fetch as a third column. This is the measurement behind keeping our own client (issue 17 point 4):
 * the figure is RpcClient p50 ÷ viem http p50 (below 1 = ours is faster).
 * Usage: npx tsx bench/rpc-transport.ts [N=2000]
 */
import { encodeFunctionData, http } from "viem";
import { AssetTokenAbi } from "../abis";
import { createRpcClient } from "../api/chain/rpc";
import { startAnvil } from "../devnet/anvil";
import { deployDevnet } from "../devnet/deploy";

const N = Math.min(Number(process.argv[2] ?? 2_000), 20_000);
const anvil = await startAnvil();
try {
  const { addresses } = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  const data = encodeFunctionData({
    abi: AssetTokenAbi,
    functionName: "balanceOf",
    args: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
  });
  const params = [{ to: addresses.AssetToken, data }, "latest"] as const;
  const ours = createRpcClient({ url: anvil.rpcUrl });
  const viem = http(anvil.rpcUrl, { retryCount: 0 })({});
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params });
  const check = (result: unknown) => {
    if (typeof result !== "string" || result.length !== 66) throw new Error("eth_call failed");
  };
  const contenders: [string, () => Promise<void>][] = [
    ["RpcClient (node:http keep-alive)", async () => check(await ours.request({ method: "eth_call", params }))],
    ["viem http transport", async () => check(await viem.request({ method: "eth_call", params: [...params] }))],
    [
      "raw fetch",
      async () => {
        const res = await fetch(anvil.rpcUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        check(((await res.json()) as { result?: unknown }).result);
      },
    ],
  ];
  const times = contenders.map(() => [] as number[]);
  for (let i = 0; i < 300; i++) for (const [, call] of contenders) await call(); // JIT and connections warm
  for (let i = 0; i < N; i++) {
    // Rotate who goes first, so no contender always follows the same one.
    for (let k = 0; k < contenders.length; k++) {
      const j = (i + k) % contenders.length;
      const t = performance.now();
      await contenders[j]![1]();
      times[j]!.push(performance.now() - t);
    }
  }
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [j, [label]] of contenders.entries())
    console.log(`${label.padEnd(36)} n=${N} p50 ${p50(times[j]!).toFixed(3)} ms`);
  console.log(`RpcClient / viem http transport, same eth_call, p50: ${(p50(times[0]!) / p50(times[1]!)).toFixed(2)}`);
} finally {
  await anvil.stop();
}
