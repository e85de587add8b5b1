/**
 * RPC round trips per request of the three read endpoints, counted at the JSON-RPC proxy in front of a
 * seeded devnet. Targets (issue 5): state 1, quote 1, preflight after finalization 0. Baseline, same
 * run: the state balances read the obvious way (viem readContract per balance), through the same proxy.
 * Then state with the real lock index (issue 13; Ponder on Postgres, reading anvil directly so the proxy
 * counts only the API): 1 per request when the index is current, at most 2 when it lags.
 * Usage: npx tsx bench/reads-roundtrips.ts
 */
import { createPublicClient, http } from "viem";
import { AssetTokenAbi, LpStakingVault7DAbi, ShareholderRoyaltiesAbi } from "../abis";
import { startRpcProxy } from "../test/support/rpcProxy";
import { benchDevnet } from "./readsDevnet";
import { benchIndex } from "./stateIndex";

const N = 50;
let proxy: Awaited<ReturnType<typeof startRpcProxy>> | undefined;
const b = await benchDevnet(async (upstream) => {
  proxy = await startRpcProxy({ upstream });
  return proxy;
});
const p = proxy!;
try {
  const users = Object.values(b.seed.accounts).map((a) => a.address);
  const perRequest = async (label: string, paths: string[]) => {
    p.reset();
    for (const path of paths) await b.get(path);
    const trips = p.roundTrips() / paths.length;
    console.log(
      `${label.padEnd(28)} ${paths.length} requests, ${p.roundTrips()} round trips, ${p.count()} calls → ${trips.toFixed(2)} per request`,
    );
    return trips;
  };
  const pick = (i: number) => users[i % users.length]!;

  await b.get("/api/mcp/v1/preflight"); // the one read that fills the gate cache
  const state = await perRequest(
    "GET /state/:address",
    Array.from({ length: N }, (_, i) => `/api/mcp/v1/state/${pick(i)}`),
  );
  const quote = await perRequest(
    "GET /quote/lock-via-furnace",
    Array.from(
      { length: N },
      (_, i) =>
        `/api/mcp/v1/quote/lock-via-furnace?user=${b.seed.accounts.fresh.address}&claimAmountWei=${2000n * 10n ** 18n + BigInt(i)}&durationSeconds=${7 * 86_400 + i * 3_600}`,
    ),
  );
  const preflight = await perRequest(
    "GET /preflight (finalized)",
    Array.from({ length: N }, () => "/api/mcp/v1/preflight"),
  );

  // Baseline: one readContract per balance, as a straightforward implementation would do.
  const client = createPublicClient({ transport: http(p.url, { batch: false }), cacheTime: 0 });
  const c = b.deployment.addresses;
  p.reset();
  for (let i = 0; i < N; i++) {
    const args = [pick(i)] as const;
    await client.readContract({ address: c.AssetToken, abi: AssetTokenAbi, functionName: "balanceOf", args });
    await client.readContract({
      address: c.LpStakingVault7D,
      abi: LpStakingVault7DAbi,
      functionName: "stakedBalance",
      args,
    });
    await client.readContract({
      address: c.ShareholderRoyalties,
      abi: ShareholderRoyaltiesAbi,
      functionName: "claimableEth",
      args,
    });
    await client.readContract({ address: c.LpStakingVault7D, abi: LpStakingVault7DAbi, functionName: "earned", args });
  }
  const naive = p.roundTrips() / N;
  console.log(
    `${"baseline: 4× readContract".padEnd(28)} ${N} snapshots, ${p.roundTrips()} round trips → ${naive.toFixed(2)} per snapshot`,
  );

  const ok = state === 1 && quote === 1 && preflight === 0;
  console.log(
    `round trips per request: state ${state}, quote ${quote}, preflight ${preflight} (targets 1/1/0: ${ok ? "met" : "MISSED"}); state vs baseline ${state}/${naive} = ${(state / naive).toFixed(2)}`,
  );

  const idx = await benchIndex(b);
  try {
    const withIndex = async (label: string) => {
      p.reset();
      let worst = 0;
      const sources = new Set<string>();
      for (let i = 0; i < N; i++) {
        const before = p.roundTrips();
        sources.add((JSON.parse(await idx.get(`/api/mcp/v1/state/${pick(i)}`)) as { source: string }).source);
        worst = Math.max(worst, p.roundTrips() - before);
      }
      console.log(
        `${label.padEnd(28)} ${N} requests, ${p.roundTrips()} round trips → ${(p.roundTrips() / N).toFixed(2)} per request, worst ${worst}, source ${[...sources].join("/")}`,
      );
      return { mean: p.roundTrips() / N, worst };
    };
    const current = await withIndex("state, index current");
    await idx.freeze();
    await idx.clients.testClient.mine({ blocks: 100 });
    await idx.lockViaFurnace();
    const lag1 = await withIndex("state, index 100 blocks behind + 1 mint");
    for (let i = 0; i < 5; i++) await idx.lockViaFurnace();
    const lag6 = await withIndex("state, index behind + 6 mints");
    const indexOk = current.worst === 1 && lag1.worst <= 2 && lag6.worst <= 2;
    console.log(
      `state with the index: current ${current.mean.toFixed(2)} (target 1), lagging worst ${Math.max(lag1.worst, lag6.worst)} (target ≤ 2): ${indexOk ? "met" : "MISSED"}`,
    );
    if (!ok || !indexOk) process.exitCode = 1;
  } finally {
    await idx.stop();
  }
} finally {
  await b.stop();
}
