/**
 * RPC round trips per prepare request, counted at the JSON-RPC proxy in front of a seeded devnet, once the
 * shared gate holds the finalized preflight. Targets (issue 6): 0 for the actions without reads, 1 for those
 * with an allowance or quote read (lock-via-furnace batches its quote and allowance into that one trip), with
 * simulate=false. With `user` given and simulation on (issue 16): exactly one more (the eth_simulateV1).
 * Baseline, same run: the same reads done the obvious way for lock-via-furnace (preflight + quote + allowance,
 * one readContract each, no cache), through the same proxy.
 * Usage: npx tsx bench/prepare-roundtrips.ts
 */
import { createPublicClient, http } from "viem";
import { AssetTokenAbi, FurnaceQuoterAbi, LaunchControllerAbi } from "../abis";
import { ACTIONS } from "../api/mcp/v1/prepare";
import { startRpcProxy } from "../test/support/rpcProxy";
import { benchDevnet } from "./readsDevnet";

const N = 20;
const E18 = 10n ** 18n;
let proxy: Awaited<ReturnType<typeof startRpcProxy>> | undefined;
const b = await benchDevnet(async (upstream) => {
  proxy = await startRpcProxy({ upstream });
  return proxy;
});
const p = proxy!;
try {
  const user = b.seed.accounts.fresh.address;
  const params = (i: number): Record<string, Record<string, string | bigint>> => ({
    "collect-all": { mode: "0" },
    "collect-royalties": {},
    "harvest-rewards": {},
    "withdraw-lp": {},
    "lock-via-furnace": {
      user,
      claimAmountWei: 2000n * E18 + BigInt(i),
      durationSeconds: BigInt(7 * 86_400 + i * 3_600),
    },
    "stake-lp": { user, amountWei: E18 + BigInt(i) },
    "unbond-lp": { amountWei: BigInt(i + 1) },
    lock: { user, amountWei: 1000n * E18 + BigInt(i), durationSecs: 604_800n },
    topup: { user, tokenId: 1n, amountWei: E18 + BigInt(i) },
    extend: { user, tokenId: 1n, newEnd: 9_999_999_999n + BigInt(i) },
  });
  const path = (action: string, q: Record<string, string | bigint>) =>
    `/api/mcp/v1/prepare/${action}?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`;

  await b.get("/api/mcp/v1/preflight"); // fills the shared gate once; finalized answers are kept
  const perAction: Record<string, number> = {};
  const simulated: Record<string, number> = {};
  for (const a of ACTIONS) {
    p.reset();
    for (let i = 0; i < N; i++) await b.get(path(a.action, { ...params(i)[a.action]!, simulate: "false" }));
    perAction[a.action] = p.roundTrips() / N;
    console.log(
      `${`GET /prepare/${a.action} simulate=false`.padEnd(48)} ${N} requests, ${p.roundTrips()} round trips, ${p.count()} calls → ${perAction[a.action]!.toFixed(2)} per request`,
    );
    p.reset();
    for (let i = 0; i < N; i++) await b.get(path(a.action, { ...params(i)[a.action]!, user }));
    simulated[a.action] = p.roundTrips() / N;
    console.log(
      `${`GET /prepare/${a.action} user (simulated)`.padEnd(48)} ${N} requests, ${p.roundTrips()} round trips, ${p.count("eth_simulateV1")} eth_simulateV1 → ${simulated[a.action]!.toFixed(2)} per request`,
    );
  }

  // Baseline: lock-via-furnace's reads, one readContract each and the preflight read every time.
  const client = createPublicClient({ transport: http(p.url, { batch: false }), cacheTime: 0 });
  const c = b.deployment.addresses;
  p.reset();
  for (let i = 0; i < N; i++) {
    await client.readContract({ address: c.LaunchController, abi: LaunchControllerAbi, functionName: "preflight" });
    await client.readContract({
      address: c.FurnaceQuoter,
      abi: FurnaceQuoterAbi,
      functionName: "quoteEnterWithClaim",
      args: [user, 2000n * E18 + BigInt(i), 0n, BigInt(7 * 86_400 + i * 3_600), false],
    });
    await client.readContract({
      address: c.AssetToken,
      abi: AssetTokenAbi,
      functionName: "allowance",
      args: [user, c.Furnace],
    });
  }
  const naive = p.roundTrips() / N;
  console.log(
    `${"baseline: lock-via-furnace naive".padEnd(32)} ${N} requests, ${p.roundTrips()} round trips → ${naive.toFixed(2)} per request`,
  );

  const target = (action: string) => (["lock-via-furnace", "stake-lp", "lock", "topup"].includes(action) ? 1 : 0);
  const missed = ACTIONS.filter(
    (a) => perAction[a.action] !== target(a.action) || simulated[a.action] !== target(a.action) + 1,
  ).map((a) => a.action);
  if (missed.length) process.exitCode = 1;
  const withReads = ACTIONS.filter((a) => target(a.action) === 1).map((a) => `${a.action} ${perAction[a.action]}`);
  console.log(
    `round trips per prepare: ${withReads.join(", ")}, the other six ${ACTIONS.filter((a) => target(a.action) === 0)
      .map((a) => perAction[a.action])
      .join(
        "/",
      )} with simulate=false; simulation adds ${ACTIONS.map((a) => simulated[a.action]! - perAction[a.action]!).join("/")} (targets 1 and 0, +1 simulated: ${missed.length ? `MISSED ${missed.join(",")}` : "met"}); lock-via-furnace vs naive ${perAction["lock-via-furnace"]}/${naive} = ${(perAction["lock-via-furnace"]! / naive).toFixed(2)}`,
  );
} finally {
  await b.stop();
}
