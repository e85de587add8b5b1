/**
 * A stream resumed with Last-Event-ID after a reorg, through the served process as production runs it: the seeded
 * devnet, ONE indexer (`ponder start --schema s_v1 --views-schema s` on Postgres) and an API process
 * (dist/server/main.js) reading the views. Red team rtlive F2's scenario: head L; snapshot; an empty L+1, alice's locks in
 * L+2, L+3; evm_revert; the new branch with alice's locks in L+1', L+2' and bob's in L+3'. A client resumed from any of
 * L−1, L, L+1, L+3 is sent the new branch's blocks one by one, each with its activity items (the REST feed's at
 * that block); it was sent `reorg` and the head's answers alone, the items of L+1' and L+2' never. The old branch's
 * L+1 is empty: the new branch's row there lies below the first replaced block with rows of ours, and is replayed too.
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { headBlock } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";
import { readSse } from "../support/sseReader";

const BASE = "/api/index/v1";

let chain: SeededChain;
let topology: LiveTopology;
let api: ServiceChild;

async function openStream(query: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${api.url}${BASE}/stream?${query}`, { headers, signal: controller.signal });
  return { res, ...readSse(res), close: () => controller.abort() };
}

async function restAt(path: string, block: bigint): Promise<unknown> {
  const res = await fetch(`${api.url}${BASE}${path}${path.includes("?") ? "&" : "?"}block=${block}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

/** Until the index has `block` (its REST answer there exists). */
async function indexed(block: bigint): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if ((await fetch(`${api.url}${BASE}/stats?block=${block}`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the index never reached ${block}`);
}

const create = (who: (typeof DEVNET_ACCOUNTS)["alice"], amount: bigint) => lockViaFurnace(chain, who, amount);

beforeAll(async () => {
  topology = await startLiveTopology({
    apis: 1,
    env: { REDIS_URL: "", LOG_LEVEL: "error", INDEXER_POLLING_MS: "200" },
  });
  chain = topology.chain;
  api = topology.apis[0]!;
}, 240_000);

afterAll(async () => {
  await topology?.stop();
});

describe("a stream resumed after a reorg", () => {
  it("replays the new branch's blocks one by one, with their activity, from the lowest block the reorg may have replaced", async () => {
    const { testClient } = chain.devnet.clients;
    const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
    // A live stream during the reorg: once it is told, this process has heard the reorg.
    const live = await openStream("stats");
    await live.until((e) => e.event === "stats");
    const head = await headBlock(chain.devnet);
    const snapshot = await testClient.snapshot();
    // The old branch: an empty block, then alice's two locks. The new branch has alice's first lock a block earlier
    // (a transaction included again sooner): a row of ours below the first replaced block with rows.
    await testClient.mine({ blocks: 1 });
    await create(DEVNET_ACCOUNTS.alice, 1_000n);
    await create(DEVNET_ACCOUNTS.alice, 1_100n);
    const oldTip = await headBlock(chain.devnet);
    expect(oldTip).toBe(head + 3n);
    await live.until((e) => e.event === "stats" && e.id === oldTip.toString(), 60_000);
    await testClient.revert({ id: snapshot });
    await create(DEVNET_ACCOUNTS.alice, 2_000n);
    await create(DEVNET_ACCOUNTS.alice, 2_100n);
    await create(DEVNET_ACCOUNTS.bob, 1_200n);
    await testClient.mine({ blocks: 1 });
    const tip = await headBlock(chain.devnet);
    expect(tip).toBe(head + 4n);
    await live.until((e) => e.event === "reorg", 60_000);
    await indexed(tip);
    live.close();

    const [b1, b2] = [head + 1n, head + 2n];
    // head − 1 and head were not replaced; head + 1 was (empty on the old branch, alice's on the new); oldTip was.
    for (const last of [head - 1n, head, head + 1n, oldTip]) {
      const s = await openStream(`account=${alice}`, { "last-event-id": last.toString() });
      expect(s.res.status).toBe(200);
      // Until nothing more comes: the new branch's blocks (before the fix, the head's answer alone).
      await s.until((e) => e.event === "account", 30_000);
      await new Promise((r) => setTimeout(r, 1_500));
      s.close();
      const reorgs = s.events.filter((e) => e.event === "reorg");
      if (last > head) {
        // Told first, with the id of a block below the first that may differ (a reconnect after it replays from
        // there): from the first replaced block with rows, or the client's own block when lower (in doubt it tells).
        expect(reorgs).toHaveLength(1);
        expect(s.events[0]!.event).toBe("reorg");
        expect(BigInt(s.events[0]!.id!)).toBeLessThanOrEqual(head);
        const from = last < b2 ? last : b2;
        expect(JSON.parse(reorgs[0]!.data)).toEqual({
          orphaned: { from: from.toString(), to: last.toString() },
          head: tip.toString(),
        });
      } else if (reorgs.length > 0) {
        // A block this replica cannot tell from a replaced one (between Ponder's finalized block and the first
        // replaced): told in doubt, from the client's own block.
        expect(JSON.parse(reorgs[0]!.data)).toMatchObject({ orphaned: { from: last.toString(), to: last.toString() } });
      }
      // The new branch's blocks in order, each with its items: the feed's at that block — b1's too, below the first
      // replaced block with rows of ours on the old branch.
      // (A replay told in doubt starts below the client's block, at the lowest block that may differ.)
      const accounts = s.events.filter((e) => e.event === "account").map((e) => BigInt(e.id!));
      expect(accounts.filter((b) => b >= b1).slice(0, 2), `resumed from ${last}`).toEqual([b1, b2]);
      expect(accounts.every((b, i) => i === 0 || accounts[i - 1]! < b)).toBe(true);
      if (reorgs.length === 0) expect(accounts.every((b) => b > last)).toBe(true);
      for (const block of [b1, b2]) {
        const ev = s.events.find((e) => e.event === "account" && e.id === block.toString())!;
        const { activity } = JSON.parse(ev.data) as { activity: { kind: string; blockNumber: string }[] };
        const feed = (await restAt(`/activity?account=${alice}`, block)) as { events: { blockNumber: string }[] };
        expect(activity).toEqual(feed.events.filter((e) => e.blockNumber === block.toString()));
        expect(activity.map((e) => e.kind)).toContain("create");
      }
    }
  }, 180_000);
});
