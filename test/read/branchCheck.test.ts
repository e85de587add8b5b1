/**
 * A reorg below Ponder's finalized checkpoint, in the production topology: the devnet (anvil), `ponder start` on
 * Postgres with its views schema, the API process (dist/server/main.js). Ponder treats blocks 30 deep as final on a
 * chain it has no finality value for; a reorg deeper than its finalized block is one it cannot roll back ("Encountered
 * unrecoverable reorg" on every poll) and its tables stay on the orphaned branch. Before api/read/branchCheck.ts the
 * API served that branch — a finalized block's answer `immutable`, 200 — with /ready 200 and nothing in its log. Now
 * every index answer is 503 INDEX_UNAVAILABLE "replaced branch", with an error line and the gauge at 1, while /ready
 * and the supply routes, which do not read the index, keep answering 200.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import type { ServiceChild } from "../support/replica";

const BASE = "/api/index/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let topology: LiveTopology;
let api: ServiceChild;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(path: string, init?: RequestInit): Promise<{ status: number; cache: string | null; body: Json }> {
  const res = await fetch(`${api.url}${path}`, init);
  return { status: res.status, cache: res.headers.get("cache-control"), body: (await res.json()) as Json };
}

beforeAll(async () => {
  topology = await startLiveTopology({
    apis: 1,
    env: { REDIS_URL: "", LOG_LEVEL: "error", INDEXER_POLLING_MS: "200", RATE_LIMIT_MAX: "1000000" },
  });
  api = topology.apis[0]!;
}, 240_000);

afterAll(async () => {
  await topology?.stop();
});

/** Ponder's finalized block, as its checkpoint table in the views schema says. */
async function finalizedBlock(): Promise<bigint> {
  const client = new pg.Client({ connectionString: topology.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT finalized_checkpoint FROM s._ponder_checkpoint LIMIT 1");
    return rows[0] ? BigInt(String(rows[0].finalized_checkpoint).slice(26, 42)) : 0n;
  } finally {
    await client.end();
  }
}

describe("an index left on a replaced branch by a reorg below Ponder's finalized checkpoint", () => {
  it("is refused 503 INDEX_UNAVAILABLE 'replaced branch' on every index route; /ready and supply stay 200", async () => {
    const { chain } = topology;
    const test = chain.devnet.clients.testClient;
    const fork = await test.snapshot();
    // The old branch: alice's lock, then blocks until Ponder's finalized checkpoint is past its block.
    const { blockNumber: lockBlock } = await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
    await test.mine({ blocks: 70 });
    for (let i = 0; i < 120 && (await finalizedBlock()) < lockBlock; i++) {
      await test.mine({ blocks: 1 });
      await sleep(1_000);
    }
    expect(await finalizedBlock()).toBeGreaterThanOrEqual(lockBlock);
    const final = await get(`${BASE}/stats?block=${lockBlock}`);
    expect(final.status).toBe(200);
    const orphanedTotal = final.body.totalLockedWei;

    // The new branch from before that lock, longer than the old one, without it.
    const oldHead = await chain.devnet.clients.publicClient.getBlockNumber({ cacheTime: 0 });
    await test.revert({ id: fork });
    const forkHead = await chain.devnet.clients.publicClient.getBlockNumber({ cacheTime: 0 });
    await test.mine({ blocks: Number(oldHead - forkHead) + 10 });

    // Within two checks 5 s apart (and Ponder's polls), the finalized block's answer is refused, not the orphan's.
    let after = await get(`${BASE}/stats?block=${lockBlock}`);
    for (let i = 0; i < 120 && after.status === 200; i++) {
      expect(after.body.totalLockedWei).toBe(orphanedTotal);
      await sleep(500);
      after = await get(`${BASE}/stats?block=${lockBlock}`);
    }
    expect(after.status).toBe(503);
    expect(after.body).toMatchObject({ error: "INDEX_UNAVAILABLE", detail: { reason: "replaced branch" } });

    // Every index answer: the head, a lock, an account's history, the activity feed, GraphQL and a new stream.
    for (const path of [`${BASE}/stats`, `${BASE}/locks/1`, `${BASE}/activity`, `${BASE}/stream?stats`]) {
      const res = await get(path);
      expect([path, res.status, res.body.detail?.reason]).toEqual([path, 503, "replaced branch"]);
    }
    const graphql = await get("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ _meta { block } }" }),
    });
    expect(JSON.stringify(graphql.body)).toContain("replaced branch");

    // What does not read the index keeps serving: readiness, supply; the operator has a log line and a gauge.
    expect((await get("/ready")).status).toBe(200);
    expect((await get("/api/supply/total")).status).toBe(200);
    expect(api.log()).toContain("index on a replaced branch");
    const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
    expect(metrics).toMatch(/^api_index_replaced_branch 1$/m);
  }, 240_000);
});
