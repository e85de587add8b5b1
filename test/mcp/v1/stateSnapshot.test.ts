import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../../api/app";
import type { LockStore } from "../../../api/read/contract";
import { createLockStore } from "../../../api/read/store";
import { DEVNET_ACCOUNTS } from "../../../devnet/seed";
import { chainBalancesAt, chainLocksAt } from "../../support/chainTruth";
import { execute, lockEvents, prepareOk } from "../../support/execution";
import {
  createTestDatabase,
  type IndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../../support/ponder";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";

// Issue 13: a state answer is one block B, whatever the index's lag. The real indexer (`ponder start`) runs
// on the seeded devnet, on PGlite and on Postgres; every answer is compared with the chain read at the
// answer's own block, never with what the index holds.

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const E18 = 10n ** 18n;
const DAY = 86_400n;
const statePath = (a: string) => `/api/mcp/v1/state/${a}`;
const ROLES = Object.keys(DEVNET_ACCOUNTS) as (keyof typeof DEVNET_ACCOUNTS)[];

describe.each([
  ["PGlite", ""],
  ["Postgres", PG_URL],
])("state snapshots with a live index on %s", (_label, url) => {
  let d: ReadsDevnet;
  let database: TestDatabase;
  let ponder: PonderProcess | undefined;
  let index: IndexDb;
  let store: LockStore;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    d = await startReadsDevnet();
    database = await createTestDatabase(url);
    ponder = await startPonder({
      rpcUrl: d.anvil.rpcUrl,
      manifestFile: writeManifest(d.deployment.manifest),
      database: database.forPonder("snap"),
      // On Postgres also a views schema, as the production replicas read it (README "Production").
      extraEnv: url ? { DATABASE_VIEWS_SCHEMA: "snap_views" } : undefined,
    });
    // Ready means historical indexing is done; Ponder's newest 30 blocks, which hold the seed, may still be
    // pending. No block is mined to help it along.
    await ponder.waitForReady(120_000);
    index = await ponder.openDb();
    store = createLockStore({ db: index.db });
    app = d.app({ index: { locks: store } });
  }, 180_000);

  afterAll(async () => {
    await index?.close().catch(() => {});
    await ponder?.stop();
    await database?.drop();
    await d?.stop();
  });

  async function expectChainAtItsBlock(user: Address) {
    d.proxy.reset();
    const { status, body } = await d.get(app, statePath(user));
    expect(status).toBe(200);
    const b = BigInt(body.blockNumber);
    expect(body.source).toBe("subgraph+rpc");
    expect(body.user.veLocks).toEqual(await chainLocksAt(d, user, b));
    expect(body.user).toMatchObject(await chainBalancesAt(d, user, b));
    expect(d.proxy.count("eth_call")).toBeLessThanOrEqual(2);
    expect(d.proxy.roundTrips()).toBeLessThanOrEqual(2);
    expect(d.proxy.count("eth_getLogs")).toBe(0);
    return body;
  }

  it("right after /ready, every seeded owner's answer equals the chain at its block", async () => {
    let locks = 0;
    for (const role of ROLES) {
      const body = await expectChainAtItsBlock(DEVNET_ACCOUNTS[role].address);
      locks += body.user.veLocks.length;
      if (body.indexedBlock !== null) expect(BigInt(body.indexedBlock)).toBeLessThanOrEqual(BigInt(body.blockNumber));
    }
    expect(locks).toBeGreaterThan(32); // the comparison is not vacuous: capped alone holds 32
  });

  it("a lock made through prepare/lock-via-furnace in block N is in the very next answer", async () => {
    const user = DEVNET_ACCOUNTS.fresh;
    const env = await prepareOk(d, app, "lock-via-furnace", {
      user: user.address,
      claimAmountWei: 1500n * E18,
      durationSeconds: 21n * DAY,
    });
    const receipts = await execute(d, user.privateKey, env);
    const last = receipts.at(-1)!;
    const created = lockEvents(d, last).find((e) => e.eventName === "LockCreated")!.args as { tokenId: bigint };
    // No sleep, no mined block, no wait for the indexer.
    const body = await expectChainAtItsBlock(user.address);
    expect(BigInt(body.blockNumber)).toBeGreaterThanOrEqual(last.blockNumber);
    expect(body.user.veLocks.map((l: { tokenId: string }) => l.tokenId)).toContain(String(created.tokenId));
  });

  it.runIf(url !== "")("reads the same through Ponder's views schema (what API replicas read)", async () => {
    const { url: dbUrl } = database.forPonder("snap") as { url: string };
    const pool = new pg.Pool({ connectionString: dbUrl, max: 1 });
    try {
      const views = createLockStore({ db: drizzle(pool), schema: "snap_views" });
      const deadline = Date.now() + 60_000;
      for (;;) {
        const ok = await views.lockIdsOf(DEVNET_ACCOUNTS.capped.address).then(
          () => true,
          () => false,
        );
        if (ok || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      for (const role of ROLES) {
        const user = DEVNET_ACCOUNTS[role].address;
        // The indexer may commit a block between the two reads; then read both again.
        let [a, b] = [await store.lockIdsOf(user), await views.lockIdsOf(user)];
        if (a.indexedBlock !== b.indexedBlock) [a, b] = [await store.lockIdsOf(user), await views.lockIdsOf(user)];
        expect(b).toEqual(a);
      }
      expect((await views.lockIdsOf(DEVNET_ACCOUNTS.capped.address)).indexedBlock).not.toBeNull();
    } finally {
      await pool.end();
    }
  });

  it("the indexed block moves with blocks that carry no event, and a current index costs one round trip", async () => {
    await d.chain.testClient.mine({ blocks: 1 });
    const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const deadline = Date.now() + 60_000;
    let indexed: bigint | null = null;
    while (Date.now() < deadline) {
      indexed = (await store.lockIdsOf(DEVNET_ACCOUNTS.alice.address)).indexedBlock;
      if (indexed !== null && indexed >= head) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(indexed).toBe(head); // the empty block's number, read from _ponder_checkpoint
    d.proxy.reset();
    const { body } = await d.get(app, statePath(DEVNET_ACCOUNTS.alice.address));
    expect(body.source).toBe("subgraph+rpc");
    expect(body.indexedBlock).toBe(String(head));
    expect(body.blockNumber).toBe(String(head));
    expect(d.proxy.roundTrips()).toBe(1);
    expect(d.proxy.count()).toBe(1);

    const metrics = await (await app.request("/api/metrics")).text();
    expect(metrics).toContain(`api_index_indexed_block ${head}`);
    expect(metrics).toContain(`api_chain_head_block ${head}`);
    expect(metrics).toContain("api_index_lag_blocks 0");
  });
});
