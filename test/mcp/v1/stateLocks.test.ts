import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRpcClient } from "../../../api/chain/rpc";
import type { LockStore } from "../../../api/read/contract";
import { createLockStore } from "../../../api/read/store";
import { BOARD_PLAYERS, DEVNET_ACCOUNTS } from "../../../devnet/seed";
import { chainLocksAt } from "../../support/chainTruth";
import { type IndexedReads, indexSeededDevnet } from "../../support/indexedReads";
import { type IndexDb, openIndexDb } from "../../support/ponder";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";

// End to end: the real indexer (`ponder start`) over the seeded devnet, its tables read through the real
// LockStore on Postgres, served by the state route. Then the store is broken in real ways (table gone,
// table locked, connection closed) to prove a lock-list failure only degrades to "rpc"; a back-filling
// index (not ready) cannot make an answer wrong, since every id it names is checked on chain.

let d: ReadsDevnet;
let indexed: IndexedReads;
let index: IndexDb;
let store: LockStore;

beforeAll(async () => {
  d = await startReadsDevnet();
  indexed = await indexSeededDevnet(d, "reads_locks");
  ({ index, store } = indexed);
}, 180_000);

afterAll(async () => {
  await indexed?.stop();
  await d?.stop();
});

const statePath = (a: string) => `/api/mcp/v1/state/${a}`;

describe("state with the lock index", () => {
  it.each(Object.keys(DEVNET_ACCOUNTS) as (keyof typeof DEVNET_ACCOUNTS)[])(
    "%s: source subgraph+rpc, locks as on chain",
    async (role) => {
      const user = DEVNET_ACCOUNTS[role].address;
      d.proxy.reset();
      const { status, body } = await d.get(d.app({ index: { locks: store } }), statePath(user.toLowerCase()));
      expect(status).toBe(200);
      expect(body.source).toBe("subgraph+rpc");
      expect(body.indexedBlock).toBe(body.blockNumber); // nothing mined since the index caught up
      expect(body.user.veLocks).toEqual(await chainLocksAt(d, user, BigInt(body.blockNumber)));
      expect(d.proxy.roundTrips()).toBe(1); // the locks ride in the balances' eth_call
    },
  );

  it("the capped user lists exactly 32 locks; burned locks never appear", async () => {
    const { body } = await d.get(d.app({ index: { locks: store } }), statePath(DEVNET_ACCOUNTS.capped.address));
    expect(body.user.veLocks).toHaveLength(32);
    expect(body.user.veLocks.map((l: { tokenId: string }) => l.tokenId)).toEqual(d.seed.tokenIds.capped.map(String));
    const listed = new Set<string>();
    // Every account that holds a lock: the roles and the board players (devnet/seed.ts).
    for (const who of [...Object.values(DEVNET_ACCOUNTS), ...Object.values(BOARD_PLAYERS)]) {
      const r = await d.get(d.app({ index: { locks: store } }), statePath(who.address));
      for (const l of r.body.user.veLocks) listed.add(l.tokenId);
    }
    for (const burned of d.seed.burnedTokenIds) expect(listed.has(String(burned))).toBe(false);
    expect(listed.size).toBe(d.seed.liveTokenIds.length);
  });
});

describe("a failing lock index degrades to source rpc, never fails the request", () => {
  const user = DEVNET_ACCOUNTS.alice.address;
  const expectRpcOnly = async (locks: LockStore, rpcTimeoutMs?: number) => {
    const config = rpcTimeoutMs ? { ...d.config, rpcTimeoutMs } : d.config;
    const rpc = createRpcClient({ url: d.proxy.url, timeoutMs: config.rpcTimeoutMs });
    const t0 = Date.now();
    const { status, body } = await d.get(d.app({ index: { locks }, config, rpc }), statePath(user));
    expect(status).toBe(200);
    expect(body.source).toBe("rpc");
    expect(body.indexedBlock).toBeNull();
    expect(body.user.veLocks).toEqual([]);
    expect(BigInt(body.user.claimBalanceWei)).toBeGreaterThan(0n);
    return Date.now() - t0;
  };

  // These break the index for good, so the indexer is stopped first (it must not repair what we break).
  beforeAll(async () => {
    await indexed.ponder.stop();
  });

  it("a store whose lock query hangs (table locked by another session) → rpc after the timeout", async () => {
    // Hold an exclusive lock in an open transaction: the store's SELECT waits on it for real.
    const url = (indexed.database.forPonder("reads_locks") as { url: string }).url;
    const session = new pg.Client({ connectionString: url, options: '-c search_path="reads_locks"' });
    await session.connect();
    try {
      await session.query("BEGIN");
      await session.query("LOCK TABLE lock IN ACCESS EXCLUSIVE MODE");
      // The index may take a quarter of the route's deadline (min(RPC_TIMEOUT_MS, 10 s) = 800 ms): 200 ms.
      const ms = await expectRpcOnly(store, 800);
      expect(ms).toBeGreaterThanOrEqual(190);
      expect(ms).toBeLessThan(5_000);
    } finally {
      await session.query("ROLLBACK").catch(() => {});
      await session.end();
    }
  });

  it("an index that is not ready (back-filling) still answers exactly: readiness is not trusted either way", async () => {
    await index.query(`UPDATE _ponder_meta SET value = jsonb_set(value, '{is_ready}', '0') WHERE key = 'app'`);
    expect(await store.isReady()).toBe(false);
    const { body } = await d.get(d.app({ index: { locks: store } }), statePath(user));
    expect(body.source).toBe("subgraph+rpc");
    expect(body.user.veLocks).toEqual(await chainLocksAt(d, user, BigInt(body.blockNumber)));
  });

  it("an index whose rows are wrong (owners and amounts forged) never puts them in an answer", async () => {
    const bob = DEVNET_ACCOUNTS.bob.address;
    const saved = await index.query<{ token_id: string; amount: string }>(
      "SELECT token_id::text, amount::text FROM lock WHERE owner = $1",
      [user.toLowerCase()],
    );
    expect(saved.length).toBeGreaterThan(0);
    // Ponder's live-query trigger on `lock` expects a TEMP table of the indexer's own session; skip triggers.
    await index.query("SET session_replication_role = replica");
    await index.query("UPDATE lock SET owner = $1, amount = 1 WHERE owner = $2", [
      bob.toLowerCase(),
      user.toLowerCase(),
    ]);
    try {
      // bob's index rows now include alice's locks: ownerOf at B drops them, bob's count proves the rest.
      const forBob = await d.get(d.app({ index: { locks: store } }), statePath(bob));
      expect(forBob.body.source).toBe("subgraph+rpc");
      expect(forBob.body.user.veLocks).toEqual(await chainLocksAt(d, bob, BigInt(forBob.body.blockNumber)));
      // alice's locks are missing from the index: her NFT count exposes it, so nothing is claimed complete.
      const forAlice = await d.get(d.app({ index: { locks: store } }), statePath(user));
      expect(forAlice.body.source).toBe("rpc");
      expect(forAlice.body.user.veLocks).toEqual([]);
    } finally {
      for (const row of saved) {
        await index.query("UPDATE lock SET owner = $1, amount = $2::numeric WHERE token_id = $3::numeric", [
          user.toLowerCase(),
          row.amount,
          row.token_id,
        ]);
      }
      await index.query("SET session_replication_role = DEFAULT");
    }
  });

  it("a lock table that is gone → rpc", async () => {
    await index.query(`UPDATE _ponder_meta SET value = jsonb_set(value, '{is_ready}', '1') WHERE key = 'app'`);
    expect(await store.isReady()).toBe(true);
    await index.query("DROP VIEW IF EXISTS lock CASCADE").catch(() => {});
    await index.query("DROP TABLE IF EXISTS lock CASCADE");
    await expectRpcOnly(store);
  });

  it("a closed database connection → rpc", async () => {
    const other = await openIndexDb(indexed.database.forPonder("reads_locks"));
    await other.close();
    await expectRpcOnly(createLockStore({ db: other.db }));
  });
});
