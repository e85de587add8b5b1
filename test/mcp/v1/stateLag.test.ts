import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { multicallViaFor } from "../../../api/chain/multicall";
import { readSnapshot } from "../../../api/mcp/v1/snapshot";
import type { LockStore } from "../../../api/read/contract";
import { createLockStore } from "../../../api/read/store";
import { IndexWatermark, WATERMARK_DEFAULTS } from "../../../api/read/watermark";
import { openIndexDatabase } from "../../../api/server/indexDatabase";
import { DEVNET_ABIS, sendTx } from "../../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../../devnet/seed";
import { chainBalancesAt, chainLocksAt } from "../../support/chainTruth";
import { execute, lockEvents, prepareOk } from "../../support/execution";
import {
  createTestDatabase,
  type IndexDb,
  openIndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../../support/ponder";
import { type ReadsDevnet, startReadsDevnet } from "../../support/readsDevnet";

// Issue 13 faults: the index stopped at block I while the chain moves on (10,000 blocks, new locks, an
// unlock), the node refusing or capping eth_getLogs, the index unreachable. Every answer is compared with
// the chain at its own block; `source` and `indexedBlock` are the only things a lag may change.

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const E18 = 10n ** 18n;
const DAY = 86_400n;
const statePath = (a: string) => `/api/mcp/v1/state/${a}`;
const fresh = DEVNET_ACCOUNTS.fresh;

let d: ReadsDevnet;
let database: TestDatabase;
let ponder: PonderProcess | undefined;
let index: IndexDb;
let store: LockStore;
let indexed: bigint;
let shortLock: bigint;

async function furnaceLock(days: bigint) {
  const app = d.app();
  const env = await prepareOk(d, app, "lock-via-furnace", {
    user: fresh.address,
    claimAmountWei: 1200n * E18,
    durationSeconds: days * DAY,
  });
  const last = (await execute(d, fresh.privateKey, env)).at(-1)!;
  return (lockEvents(d, last).find((e) => e.eventName === "LockCreated")!.args as { tokenId: bigint }).tokenId;
}

beforeAll(async () => {
  d = await startReadsDevnet();
  database = await createTestDatabase(PG_URL);
  const manifestFile = writeManifest(d.deployment.manifest);
  ponder = await startPonder({ rpcUrl: d.anvil.rpcUrl, manifestFile, database: database.forPonder("lag") });
  shortLock = await furnaceLock(7n); // indexed, then unlocked while the index is stopped
  await d.chain.testClient.mine({ blocks: 1 });
  const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
  await ponder.waitForBlock(head, 120_000);
  await ponder.stop();
  ponder = undefined;
  index = await openIndexDb(database.forPonder("lag"));
  store = createLockStore({ db: index.db });
  indexed = (await store.lockIdsOf(fresh.address)).indexedBlock!;
  expect(indexed).toBe(head);
  expect((await store.lockIdsOf(fresh.address)).tokenIds).toContain(shortLock);

  // The chain moves on without the index: 10,000 empty blocks, the short lock expires and is unlocked
  // (a removal), then a new lock is minted (an addition).
  // In steps of 100: anvil_mine's cost grows faster than the block count (1,000 in one call take longer
  // than 10 × 100), and one call of 10,000 outlasts viem's request timeout.
  for (let i = 0; i < 100; i++) await d.chain.testClient.mine({ blocks: 100 });
  await d.chain.testClient.increaseTime({ seconds: 8 * 86_400 });
  await d.chain.testClient.mine({ blocks: 1 });
  await sendTx(d.chain, fresh.privateKey, {
    address: d.deployment.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName: "unlock",
    args: [shortLock],
  });
  await furnaceLock(30n);
}, 600_000); // mines 10,000 blocks: ~290 s on a loaded 2-core machine (docs/toolchain.md)

afterAll(async () => {
  await index?.close().catch(() => {});
  await ponder?.stop();
  await database?.drop();
  await d?.stop();
});

async function stateOf(app = d.app({ index: { locks: store } })) {
  d.proxy.reset();
  const t0 = Date.now();
  const { status, body } = await d.get(app, statePath(fresh.address));
  expect(status).toBe(200);
  return { body, ms: Date.now() - t0 };
}

describe("an index far behind the chain", () => {
  it("10,000 blocks behind, a lock unlocked and one minted since: exact, subgraph+rpc, one round trip", async () => {
    const { body } = await stateOf();
    const b = BigInt(body.blockNumber);
    expect(b - indexed).toBeGreaterThan(10_000n);
    expect(body.indexedBlock).toBe(String(indexed));
    expect(body.source).toBe("subgraph+rpc");
    const truth = await chainLocksAt(d, fresh.address, b);
    expect(body.user.veLocks).toEqual(truth);
    expect(truth.some((l) => l.tokenId === String(shortLock))).toBe(false);
    expect(truth.length).toBeGreaterThan(0);
    expect(body.user).toMatchObject(await chainBalancesAt(d, fresh.address, b));
    expect(d.proxy.roundTrips()).toBe(1); // the new mint is within the ids tried speculatively
    expect(d.proxy.count("eth_getLogs")).toBe(0);
  });

  it("more mints since the index than the first read tries: a second eth_call pinned to the same block", async () => {
    for (let i = 0; i < 5; i++) await furnaceLock(14n);
    const { body } = await stateOf();
    const b = BigInt(body.blockNumber);
    expect(body.source).toBe("subgraph+rpc");
    expect(body.user.veLocks).toEqual(await chainLocksAt(d, fresh.address, b));
    expect(body.user).toMatchObject(await chainBalancesAt(d, fresh.address, b));
    expect(d.proxy.roundTrips()).toBe(2);
    const [first, second] = d.proxy.calls;
    expect([first!.method, second!.method]).toEqual(["eth_call", "eth_call"]);
    expect(first!.params[1]).toBe("latest");
    expect(second!.params[1]).toBe(`0x${b.toString(16)}`);
  });

  it("too many mints since the index to try: the snapshot says incomplete, keeping only proven locks", async () => {
    const ids = await store.lockIdsOf(fresh.address);
    const snap = await readSnapshot({
      rpc: d.rpc,
      via: multicallViaFor(31337),
      contracts: contracts(),
      user: fresh.address,
      index: ids,
      maxNewMints: 2n,
    });
    expect(snap.complete).toBe(false);
    expect(snap.roundTrips).toBe(1);
    const truth = await chainLocksAt(d, fresh.address, snap.blockNumber);
    // Proven: the index's ids the user still owns at B (the unlocked one is gone), values from B.
    const proven = snap.locks.map((l) => ({
      tokenId: String(l.tokenId),
      amountWei: String(l.amount),
      lockEnd: String(l.lockEnd),
      autoMax: l.autoMax,
    }));
    expect(proven.length).toBeGreaterThan(0);
    expect(proven.length).toBeLessThan(truth.length);
    for (const l of proven) expect(truth).toContainEqual(l);
    expect(snap.lockCount).toBe(BigInt(truth.length));
  });

  const contracts = () => ({
    token: d.deployment.addresses.AssetToken,
    vault: d.deployment.addresses.LpStakingVault7D,
    royalties: d.deployment.addresses.ShareholderRoyalties,
    ve: d.deployment.addresses.VeLockNFT,
  });

  it("with a hint the eth_call leaves before the SQL answer arrives; the answer waits for both", async () => {
    const ids = await store.lockIdsOf(fresh.address);
    let release: (v: typeof ids) => void = () => {};
    const slowIndex = new Promise<typeof ids>((r) => {
      release = r;
    });
    d.proxy.reset();
    let done = false;
    const pending = readSnapshot({
      rpc: d.rpc,
      via: multicallViaFor(31337),
      contracts: contracts(),
      user: fresh.address,
      index: slowIndex,
      hint: ids,
    }).finally(() => {
      done = true;
    });
    const deadline = Date.now() + 5_000;
    while (d.proxy.count("eth_call") === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(d.proxy.count("eth_call")).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false); // still waiting for the index
    release(ids);
    const snap = await pending;
    expect(snap.complete).toBe(true);
    expect(snap.roundTrips).toBe(2); // 6 mints since the frozen index: more than the first read tries
  });

  it("a stale hint (ids the user no longer has, none of the new ones) costs a second read, not a wrong answer", async () => {
    const ids = await store.lockIdsOf(fresh.address);
    d.proxy.reset();
    const snap = await readSnapshot({
      rpc: d.rpc,
      via: multicallViaFor(31337),
      contracts: contracts(),
      user: fresh.address,
      index: ids,
      hint: { tokenIds: [shortLock], maxTokenId: 1n, indexedBlock: 1n },
    });
    expect(snap.complete).toBe(true);
    expect(snap.roundTrips).toBe(2);
    expect(d.proxy.roundTrips()).toBe(2);
    const truth = await chainLocksAt(d, fresh.address, snap.blockNumber);
    expect(snap.locks.map((l) => String(l.tokenId))).toEqual(truth.map((l) => l.tokenId));
  });

  it("the lag is on /api/metrics", async () => {
    const app = d.app({ index: { locks: store } });
    const { body } = await stateOf(app);
    const text = await (await app.request("/api/metrics")).text();
    expect(text).toContain(`api_index_indexed_block ${indexed}`);
    expect(text).toContain(`api_chain_head_block ${body.blockNumber}`);
    expect(text).toContain(`api_index_lag_blocks ${BigInt(body.blockNumber) - indexed}`);
  });
});

describe("node faults around logs do not matter: the snapshot never asks for logs", () => {
  it.each([
    ["eth_getLogs refused", { kind: "rpcError", code: -32601, message: "the method eth_getLogs is not available" }],
    ["a log range the node caps", { kind: "rpcError", code: -32005, message: "query exceeds max block range 1000" }],
    ["a log answer too large", { kind: "rpcError", code: -32005, message: "query returned more than 10000 results" }],
  ] as const)("%s: still exact", async (_label, fault) => {
    d.proxy.setFault({ ...fault, match: (method) => method === "eth_getLogs" });
    try {
      const { body } = await stateOf();
      expect(body.source).toBe("subgraph+rpc");
      expect(body.user.veLocks).toEqual(await chainLocksAt(d, fresh.address, BigInt(body.blockNumber)));
      expect(d.proxy.count("eth_getLogs")).toBe(0);
    } finally {
      d.proxy.setFault(null);
    }
  });
});

describe("an index that cannot answer", () => {
  it("index down (connection closed): rpc, no locks, indexedBlock null, one round trip, promptly", async () => {
    const down = await openIndexDb(database.forPonder("lag"));
    await down.close();
    const { body, ms } = await stateOf(d.app({ index: { locks: createLockStore({ db: down.db }) } }));
    expect(body.source).toBe("rpc");
    expect(body.indexedBlock).toBeNull();
    expect(body.user.veLocks).toEqual([]);
    expect(body.user).toMatchObject(await chainBalancesAt(d, fresh.address, BigInt(body.blockNumber)));
    expect(d.proxy.roundTrips()).toBe(1);
    expect(ms).toBeLessThan(2_000);
    const text = await (await d.app().request("/api/metrics")).text();
    expect(text).toContain("# TYPE api_index_lag_blocks gauge");
  });

  it("index gone after a first read: rpc with no locks, although the user's remembered ids are still read", async () => {
    const db = await openIndexDb(database.forPonder("lag"));
    const app = d.app({ index: { locks: createLockStore({ db: db.db }) } });
    const first = await stateOf(app);
    expect(first.body.source).toBe("subgraph+rpc");
    expect(first.body.user.veLocks.length).toBeGreaterThan(0);
    await db.close();
    const { body } = await stateOf(app);
    expect(body.source).toBe("rpc");
    expect(body.indexedBlock).toBeNull();
    expect(body.user.veLocks).toEqual([]);
    expect(d.proxy.roundTrips()).toBe(1);
  });

  it("an index schema that does not exist: rpc, indexedBlock null", async () => {
    const { body } = await stateOf(
      d.app({ index: { locks: createLockStore({ db: index.db, schema: "no_such_schema" }) } }),
    );
    expect(body.source).toBe("rpc");
    expect(body.indexedBlock).toBeNull();
    expect(body.user.veLocks).toEqual([]);
  });
});

describe("a repeat read while the index's watermark is fresh (api/read/watermark.ts)", () => {
  /** The frozen index's store, counting the per-user SQL lookups the route makes. */
  function countingStore() {
    const counted = { lookups: 0, store: { ...store } };
    counted.store.lockIdsOf = (owner) => {
      counted.lookups++;
      return store.lockIdsOf(owner);
    };
    return counted;
  }
  async function untilFresh(watermark: IndexWatermark) {
    const deadline = Date.now() + 5_000;
    while (watermark.fresh() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    return watermark;
  }
  const freshWatermark = (read = () => store.indexMark()) =>
    untilFresh(new IndexWatermark(read, { pollMs: 20 }).start());

  it("the store's mark is lockIdsOf's, through drizzle and through the API process's prepared statement", async () => {
    const ids = await store.lockIdsOf(fresh.address);
    expect(await store.indexMark()).toEqual({ maxTokenId: ids.maxTokenId, indexedBlock: indexed });
    const where = database.forPonder("lag");
    if (where.kind !== "postgres") throw new Error("stateLag runs on Postgres");
    const opened = openIndexDatabase({ url: where.url, schema: where.schema });
    try {
      expect(await opened.locks.indexMark()).toEqual({ maxTokenId: ids.maxTokenId, indexedBlock: indexed });
      expect((await untilFresh(opened.watermark)).fresh()).toEqual({
        maxTokenId: ids.maxTokenId,
        indexedBlock: indexed,
      });
    } finally {
      await opened.close();
    }
  });

  it("an unchanged user: no SQL, one eth_call, exact at its block, indexedBlock from the watermark", async () => {
    const counted = countingStore();
    const watermark = await freshWatermark();
    try {
      const app = d.app({ index: { locks: counted.store, watermark } });
      const first = await stateOf(app); // no hint yet: the index is asked
      expect(counted.lookups).toBe(1);
      expect(first.body.source).toBe("subgraph+rpc");
      const { body } = await stateOf(app);
      expect(counted.lookups).toBe(1);
      expect(d.proxy.roundTrips()).toBe(1);
      expect(body.source).toBe("subgraph+rpc");
      expect(body.indexedBlock).toBe(String(indexed));
      const b = BigInt(body.blockNumber);
      expect(body.user.veLocks).toEqual(await chainLocksAt(d, fresh.address, b));
      expect(body.user).toMatchObject(await chainBalancesAt(d, fresh.address, b));
    } finally {
      await watermark.stop();
    }
  });

  it("locks minted since the hint beyond the ids tried: the chain disproves the hint, the index is asked, exact", async () => {
    const counted = countingStore();
    const watermark = await freshWatermark();
    try {
      const app = d.app({ index: { locks: counted.store, watermark } });
      await stateOf(app);
      for (let i = 0; i < 3; i++) await furnaceLock(14n); // more than SPECULATIVE_IDS
      const { body } = await stateOf(app);
      expect(counted.lookups).toBe(2);
      expect(d.proxy.roundTrips()).toBe(2);
      expect(body.source).toBe("subgraph+rpc");
      const b = BigInt(body.blockNumber);
      const truth = await chainLocksAt(d, fresh.address, b);
      expect(body.user.veLocks).toEqual(truth);
      // The next read starts from the proven set: one round trip, no SQL.
      const again = await stateOf(app);
      expect(counted.lookups).toBe(2);
      expect(d.proxy.roundTrips()).toBe(1);
      expect(again.body.user.veLocks).toEqual(await chainLocksAt(d, fresh.address, BigInt(again.body.blockNumber)));
    } finally {
      await watermark.stop();
    }
  });

  it("a watermark whose polls fail goes stale and is not used: every read asks the index again", async () => {
    const counted = countingStore();
    let failing = false;
    const watermark = await freshWatermark(() =>
      failing ? Promise.reject(new Error("database gone")) : store.indexMark(),
    );
    try {
      const app = d.app({ index: { locks: counted.store, watermark } });
      await stateOf(app);
      failing = true;
      await new Promise((r) => setTimeout(r, WATERMARK_DEFAULTS.maxAgeMs + 50));
      expect(watermark.fresh()).toBeUndefined();
      const { body } = await stateOf(app);
      expect(counted.lookups).toBe(2);
      expect(body.source).toBe("subgraph+rpc"); // the index itself still answers
      expect(body.indexedBlock).toBe(String(indexed));
    } finally {
      await watermark.stop();
    }
  });
});
