/**
 * A stream resumed with Last-Event-ID after a reorg, through the served process as production runs it: the seeded
 * devnet, ONE indexer (`ponder start --schema s_v1 --views-schema s` on Postgres) and an API process
 * (dist/server/main.js) reading the views. Red team rtlive F2's scenario: head L; snapshot; alice's locks in L+1,
 * L+2; evm_revert; the new branch with alice's locks in L+1', L+2' and bob's in L+3'. A client resumed from any of
 * L−1, L, L+2 is sent the new branch's blocks one by one, each with its activity items (the REST feed's at that
 * block); it was sent `reorg` and the head's answers alone, the items of L+1' and L+2' never. Only the one whose last
 * block was replaced (L+2) is told of the reorg, from L+1: L−1 and L were not replaced.
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
  it("replays the new branch's blocks one by one, with their activity; only a replaced last block is told the reorg", async () => {
    const { testClient } = chain.devnet.clients;
    const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
    // A live stream during the reorg: once it is told, this process has heard the reorg.
    const live = await openStream("stats");
    await live.until((e) => e.event === "stats");
    const head = await headBlock(chain.devnet);
    const snapshot = await testClient.snapshot();
    await create(DEVNET_ACCOUNTS.alice, 1_000n);
    await create(DEVNET_ACCOUNTS.alice, 1_100n);
    const oldTip = await headBlock(chain.devnet);
    expect(oldTip).toBe(head + 2n);
    await live.until((e) => e.event === "stats" && e.id === oldTip.toString(), 60_000);
    await testClient.revert({ id: snapshot });
    await create(DEVNET_ACCOUNTS.alice, 2_000n);
    await create(DEVNET_ACCOUNTS.alice, 2_100n);
    await create(DEVNET_ACCOUNTS.bob, 1_200n);
    const tip = await headBlock(chain.devnet);
    expect(tip).toBe(head + 3n);
    await live.until((e) => e.event === "reorg", 60_000);
    await indexed(tip);
    live.close();

    const [b1, b2] = [head + 1n, head + 2n];
    for (const last of [head - 1n, head, oldTip]) {
      const s = await openStream(`account=${alice}`, { "last-event-id": last.toString() });
      expect(s.res.status).toBe(200);
      // Until nothing more comes: the new branch's blocks (before the fix, the head's answer alone).
      await s.until((e) => e.event === "account", 30_000);
      await new Promise((r) => setTimeout(r, 1_500));
      s.close();
      const reorgs = s.events.filter((e) => e.event === "reorg");
      if (last === oldTip) {
        // Told first, with the id of the block before the first replaced one (a reconnect after it replays them).
        expect(s.events[0]).toMatchObject({ event: "reorg", id: head.toString() });
        expect(JSON.parse(reorgs[0]!.data)).toEqual({
          orphaned: { from: b1.toString(), to: oldTip.toString() },
          head: tip.toString(),
        });
        expect(reorgs).toHaveLength(1);
      } else {
        expect(reorgs, `resumed from ${last}`).toEqual([]);
      }
      // The new branch's blocks in order, each with its items: the feed's at that block; after the reorg, the
      // head's answer too (what the orphaned blocks changed is told again).
      const accounts = s.events.filter((e) => e.event === "account");
      expect(
        accounts.map((e) => e.id),
        `resumed from ${last}`,
      ).toEqual((last === oldTip ? [b1, b2, tip] : [b1, b2]).map(String));
      for (const block of [b1, b2]) {
        const ev = accounts.find((e) => e.id === block.toString())!;
        const { activity } = JSON.parse(ev.data) as { activity: { kind: string; blockNumber: string }[] };
        const feed = (await restAt(`/activity?account=${alice}`, block)) as { events: { blockNumber: string }[] };
        expect(activity).toEqual(feed.events.filter((e) => e.blockNumber === block.toString()));
        expect(activity.map((e) => e.kind)).toContain("create");
      }
    }
  }, 180_000);
});
