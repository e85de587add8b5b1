/**
 * The lock index against a real devnet: exact after the seed, exact after random activity (property test: the index
 * against the stored ends, the API's state answers against getLockInfo's effective ends), and back on the
 * canonical chain after a reorg. Runs on PGlite, or on Postgres when DATABASE_URL is set.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { createRpcClient } from "../../api/chain/rpc";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";
import { createLockStore } from "../../api/read/store";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedResult } from "../../devnet/seed";
import { send, startDevnet, type TestDevnet } from "../support/devnet";
import {
  ACTORS,
  applyLockOps,
  expectIndexMatchesChain,
  expectStateMatchesChain,
  headBlock,
  lockOpArb,
  prepareActors,
  readIndexedLocks,
} from "../support/lockChain";
import {
  createTestDatabase,
  type IndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../support/ponder";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const E18 = 10n ** 18n;
const backend = process.env.DATABASE_URL ? "postgres" : "pglite";

describe(`lock index (${backend})`, () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let proxy: RpcProxy;
  let database: TestDatabase;
  let manifestFile: string;
  let ponder: PonderProcess;
  let idx: IndexDb;
  // Until then the backfill's log fetches are held, so "not ready yet" is observable rather than a race; the
  // first test releases them early (the deadline keeps a filtered run, e.g. -t property, from waiting forever).
  let holdLogsUntil = Date.now() + 20_000;

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    await prepareActors(devnet);
    proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
    proxy.setFault({
      kind: "delay",
      ms: 1_000,
      match: (method) => method === "eth_getLogs" && Date.now() < holdLogsUntil,
    });
    database = await createTestDatabase();
    manifestFile = writeManifest(devnet.deployment.manifest);
    ponder = await startPonder({ rpcUrl: proxy.url, manifestFile, database: database.forPonder() });
    idx = await ponder.openDb();
  });

  afterAll(async () => {
    await idx?.close();
    await ponder?.stop();
    await proxy?.stop();
    await devnet?.stop();
    await database?.drop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });

  it("the lock store says not ready while Ponder back-fills, ready once /ready is 200", async () => {
    const store = createLockStore({ db: idx.db });
    let first: boolean | undefined;
    const deadline = Date.now() + 60_000;
    while (first === undefined && Date.now() < deadline) {
      // Until Ponder has created its tables the query fails; that is "no answer yet", not "ready".
      first = await store.isReady().catch(() => undefined);
      if (first === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(first).toBe(false);
    let ready: Response | null = null;
    while (!ready && Date.now() < deadline) {
      ready = await fetch(`${ponder.url}/ready`).catch(() => null); // the HTTP server may come up after the tables
      if (!ready) await new Promise((r) => setTimeout(r, 50));
    }
    expect(ready?.status).toBe(503);
    holdLogsUntil = 0;
    await ponder.waitForReady();
    expect(await store.isReady()).toBe(true);
  });

  it("after the seed, every token's row equals getLockInfo / ownerOf and live amounts sum to totalLockedClaim", async () => {
    await ponder.waitForBlock(await headBlock(devnet));
    const { tokens } = await expectIndexMatchesChain(devnet, idx);
    expect(tokens).toBe(devnet.seed.liveTokenIds.length + devnet.seed.burnedTokenIds.length);

    const store = createLockStore({ db: idx.db });
    const { accounts, tokenIds } = devnet.seed;
    const capped = await store.liveLocksOf(accounts.capped.address);
    expect(capped.map((l) => l.tokenId)).toEqual(tokenIds.capped);
    expect(capped[0]?.autoMax).toBe(true);
    expect(await store.liveLocksOf(accounts.idle.address)).toEqual([]);
    // A lowercase query address finds the same locks (Ponder stores hex lower-case).
    expect(await store.liveLocksOf(accounts.alice.address.toLowerCase() as `0x${string}`)).toEqual(
      await store.liveLocksOf(accounts.alice.address),
    );
    const bobs = (await store.liveLocksOf(accounts.bob.address)).map((l) => l.tokenId);
    expect(bobs).toEqual([tokenIds.bobMergedInto]);

    // Burned rows stay, zeroed and ownerless: merged-away, unlocked, and sold back then settled by the Furnace.
    const rows = await readIndexedLocks(idx);
    for (const tokenId of devnet.seed.burnedTokenIds) {
      const row = rows.find((r) => r.tokenId === tokenId);
      expect(row).toMatchObject({ owner: null, amount: 0n, lockEnd: 0n, autoMax: false, burned: true });
    }
    const events = (kind: string) =>
      idx.query<{ token_id: string; from_token_id: string | null; recipient: string | null }>(
        `SELECT token_id, from_token_id, recipient FROM ${idx.table("lock_event")} WHERE kind = $1 ORDER BY id`,
        [kind],
      );
    const transfers = await events("transfer");
    expect(transfers.map((t) => [BigInt(t.token_id), t.recipient])).toEqual([
      [tokenIds.bobSoldBack, devnet.addresses.Furnace.toLowerCase()],
    ]);
    // Listed by the market (MetadataUpdate; getLockInfo's flag read at its block): bob's, delisted by the market
    // before it moves the lock to the Furnace (as the published market sells), and carol's, then delisted.
    const ids = async (kind: string) => (await events(kind)).map((e) => BigInt(e.token_id)).sort();
    expect(await ids("list")).toEqual([tokenIds.bobSoldBack, tokenIds.carolFurnace].sort());
    expect(await ids("unlist")).toEqual([tokenIds.bobSoldBack, tokenIds.carolFurnace].sort());
    expect(rows.filter((r) => r.listed)).toEqual([]);
    const merges = await events("merge");
    expect(merges.map((m) => [BigInt(String(m.from_token_id)), BigInt(m.token_id)])).toEqual([
      [tokenIds.bobMergedFrom, tokenIds.bobMergedInto],
    ]);
  });

  it("stays exact under random sequences of lock operations (property)", async () => {
    const applied: number[] = [];
    // What the API answers over this index, for the same users: getLockInfo's values at the answer's block.
    const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: manifestFile, RPC_URL: devnet.rpcUrl });
    const app = createApp({
      config,
      rpc: createRpcClient({ url: devnet.rpcUrl, timeoutMs: 10_000 }),
      index: { locks: createLockStore({ db: idx.db }) },
      logger: createLogger({ level: "error" }),
    });
    const users = ACTORS.map((a) => DEVNET_ACCOUNTS[a].address);
    await fc.assert(
      fc.asyncProperty(fc.array(lockOpArb, { minLength: 6, maxLength: 14 }), async (ops) => {
        applied.push(await applyLockOps(devnet, ops));
        await ponder.waitForBlock(await headBlock(devnet));
        await expectIndexMatchesChain(devnet, idx);
        await expectStateMatchesChain(devnet, app, users);
      }),
      // The chain keeps its state between runs, so shrinking would replay on a different chain: report, don't shrink.
      { numRuns: 4, endOnFailure: true },
    );
    // The property must have exercised the index, not just skipped every operation.
    expect(applied.reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
  });

  it("follows a reorg: blocks replaced by a longer fork leave no trace", async () => {
    const { testClient } = devnet.clients;
    const [alice, carol] = [DEVNET_ACCOUNTS.alice, DEVNET_ACCOUNTS.carol];
    // New locks through the Furnace, as on Base; 7-day locks get no devnet bonus, so amounts stay round.
    const create = (who: typeof alice, amount: bigint, days: bigint) =>
      send(devnet, who.privateKey, {
        address: devnet.addresses.Furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [amount * E18, 0n, days * 86_400n, false, 1n],
      });
    const store = createLockStore({ db: idx.db });
    const before = await store.liveLocksOf(alice.address);
    const forkPoint = await headBlock(devnet);
    const snapshot = await testClient.snapshot();

    // Old branch: alice creates two locks; the index sees them.
    await create(alice, 1_111n, 7n);
    await create(alice, 2_222n, 7n);
    await ponder.waitForBlock(await headBlock(devnet));
    const onOldBranch = await store.liveLocksOf(alice.address);
    expect(onOldBranch.length).toBe(before.length + 2);

    // New branch from the same parent, longer than the old one: carol's locks instead, then empty blocks.
    await testClient.revert({ id: snapshot });
    expect(await headBlock(devnet)).toBe(forkPoint);
    await create(carol, 3_333n, 7n);
    await testClient.mine({ blocks: 4 });
    const newHead = await headBlock(devnet);
    expect(newHead).toBeGreaterThan(forkPoint + 2n);
    await ponder.waitForBlock(newHead);

    expect(await store.liveLocksOf(alice.address)).toEqual(before);
    await expectIndexMatchesChain(devnet, idx);
    const carols = await store.liveLocksOf(carol.address);
    expect(carols.at(-1)?.amount).toBe(3_333n * E18);
  });
});
