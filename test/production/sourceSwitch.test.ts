/**
 * The views switched to another schema of the same Ponder build (docs/operations.md "Unrecoverable reorg": a
 * re-index into a new schema) forget what was computed from the old one, in the process and in Redis. The devnet,
 * `ponder start --schema s_v1 --views-schema s`, one API process on Redis. Alice's lock at block X, indexed; the API
 * computes /stats and the ve board at X (kept in the process, shared in Redis). Then the indexer is stopped, the
 * chain replaced from before X (bob's lock in block X, at X's timestamp, so the Redis key's block and time are the
 * same), and a new indexer re-indexes it into s_v2 with the same views schema and the same build. Asked again at X,
 * the running API process and a new one (nothing of X in memory, Redis only) answer the chain at X: its
 * totalLockedClaim and each holder's veBalanceOf. Before api/read/indexSource.ts both answered alice's branch's /stats
 * (79899eb: totalLockedWei with her 3,000 tokens), the running one from memory, the new one from Redis.
 */
import type { Address } from "viem";
import { describe, expect, it } from "vitest";
import { BRANCH_CHECK_MS } from "../../api/read/branchCheck";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { liveTopologyPerFile, lockViaFurnace } from "../support/liveTopology";
import type { ServiceChild } from "../support/replica";

const BASE = "/api/index/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const live = liveTopologyPerFile({ redisPrefix: "sourceswitchtest" });

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(api: ServiceChild, path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${BASE}${path}`);
  return { status: res.status, body: (await res.json()) as Json };
}

describe("a views switch to another schema of the same build", () => {
  it("forgets the old schema's answers at a past block: /stats and the ve board at X are the chain's", async () => {
    const topology = live();
    const { chain } = topology;
    const test = chain.devnet.clients.testClient;
    const publicClient = chain.devnet.clients.publicClient;
    const ve = chain.devnet.addresses.VeLockNFT;
    const [alice, bob] = [DEVNET_ACCOUNTS.alice, DEVNET_ACCOUNTS.bob];
    const api = topology.apis[0]!;

    /** What the chain says at `block`: the locked total, and each account's ve. */
    const truth = async (block: bigint) => {
      const veOf = (who: Address) =>
        publicClient.readContract({
          address: ve,
          abi: DEVNET_ABIS.VeLockNFT,
          functionName: "veBalanceOf",
          args: [who],
          blockNumber: block,
        });
      return {
        totalLockedWei: String(
          await publicClient.readContract({
            address: ve,
            abi: DEVNET_ABIS.VeLockNFT,
            functionName: "totalLockedClaim",
            blockNumber: block,
          }),
        ),
        ve: { [alice.address]: String(await veOf(alice.address)), [bob.address]: String(await veOf(bob.address)) },
      };
    };
    /** /stats and the ve board's rows of alice and bob at X, as `from` answers them. */
    const answered = async (from: ServiceChild, x: bigint) => {
      const stats = await get(from, `/stats?block=${x}`);
      expect(stats.status, JSON.stringify(stats.body)).toBe(200);
      const board = await get(from, `/leaderboards/ve?block=${x}&limit=1000`);
      expect(board.status, JSON.stringify(board.body)).toBe(200);
      const veOf = (who: Address) =>
        String((board.body.rows as { address: string; veWei: string }[]).find((r) => r.address === who)?.veWei ?? "0");
      return {
        totalLockedWei: String(stats.body.totalLockedWei),
        ve: { [alice.address]: veOf(alice.address), [bob.address]: veOf(bob.address) },
      };
    };

    // The old branch: alice's lock in block X, indexed, a few blocks on; X's answers computed and kept.
    const fork = await test.snapshot();
    const orphan = await lockViaFurnace(chain, alice, 3_000n);
    const x = orphan.blockNumber;
    const { timestamp } = await publicClient.getBlock({ blockNumber: x });
    await test.mine({ blocks: 3 });
    for (let i = 0; i < 60 && BigInt((await get(api, "/stats")).body.blockNumber ?? 0) < x + 3n; i++) await sleep(500);
    const old = await answered(api, x);
    expect(old).toEqual(await truth(x));

    // The indexer stopped, the chain replaced from before X: bob's lock in block X at X's time, then 45 blocks: the new
    // indexer points the views at its schema once back-filled to its finalized block (30 below the chain's head), so
    // its first head there is above the old one. The index's head never goes back, which the memos would have heard
    // as a reorg (forgetOnReorg): nothing but the switch itself tells the process.
    await topology.indexer.stop();
    await test.revert({ id: fork });
    await test.setNextBlockTimestamp({ timestamp });
    const canonical = await lockViaFurnace(chain, bob, 2_000n);
    expect(canonical.blockNumber).toBe(x);
    await test.mine({ blocks: 45 });
    const now = await truth(x);
    expect(now).not.toEqual(old);

    // The runbook's re-index: a new schema, the same views schema, the same build.
    const next = await topology.spawnIndexer("s_v2");
    await next.waitFor200("/ready", 120_000);
    for (let i = 0; i < 60 && !(await topology.viewsTarget()).includes("s_v2"); i++) await sleep(500);
    expect(await topology.viewsTarget()).toContain("s_v2");
    // Within one check of the index's source (every BRANCH_CHECK_MS) every process knows.
    await sleep(BRANCH_CHECK_MS + 2_000);

    // The running process, whose kept answers at X were the old schema's; a new one, with nothing in memory and the
    // old schema's answers at X's key in Redis. Both asked before either is judged, so a failure shows each.
    const running = await answered(api, x);
    const fresh = await topology.spawnApi();
    await fresh.waitFor200("/ready", 60_000);
    expect({ running, fresh: await answered(fresh, x) }).toEqual({ running: now, fresh: now });
  }, 420_000);
});
