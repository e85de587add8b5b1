/**
 * GraphQL against the chain (issue 23, 6 and 9): a real Ponder index of a seeded devnet (PGlite, or Postgres when
 * DATABASE_URL is set) and the app over it; every lock GraphQL reports compared with getLockInfo / ownerOf /
 * veOfToken read AT THE BLOCK `_meta.block` names, each owner's `locks` with the chain's owners there, and an
 * account's `lockEvents` pages that hold their block while new blocks are mined and indexed between them.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { createRpcClient } from "../../api/chain/rpc";
import { loadConfig } from "../../api/config";
import { createLockIndex } from "../../api/locks/atBlock";
import { silentLogger } from "../../api/observability/logger";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedResult } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { ACTORS, applyLockOps, headBlock, lockOpArb, prepareActors, readChainLocks } from "../support/lockChain";
import {
  createTestDatabase,
  type IndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../support/ponder";

const backend = process.env.DATABASE_URL ? "postgres" : "pglite";
type Gql = { data?: Record<string, any> | null; errors?: { message: string; extensions: { code: string } }[] };

describe(`GraphQL against the chain (${backend})`, () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let database: TestDatabase;
  let manifestFile: string;
  let ponder: PonderProcess;
  let idx: IndexDb;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    await prepareActors(devnet);
    database = await createTestDatabase();
    manifestFile = writeManifest(devnet.deployment.manifest);
    ponder = await startPonder({ rpcUrl: devnet.rpcUrl, manifestFile, database: database.forPonder() });
    await ponder.waitForBlock(await headBlock(devnet), 120_000);
    idx = await ponder.openDb();
    const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: manifestFile, RPC_URL: devnet.rpcUrl });
    app = createApp({
      config: { ...config, rateLimit: { max: 1_000_000, windowSec: 60 } },
      rpc: createRpcClient({ url: devnet.rpcUrl, timeoutMs: 10_000 }),
      lockIndex: createLockIndex({ db: idx.db, schema: ponder.schema }),
      logger: silentLogger,
    });
  }, 180_000);

  afterAll(async () => {
    await idx?.close();
    await ponder?.stop();
    await devnet?.stop();
    await database?.drop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });

  async function gql(query: string, variables?: Record<string, unknown>): Promise<Record<string, any>> {
    const res = await app.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as Gql;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data!;
  }

  const veOfToken = (tokenId: bigint, blockNumber: bigint) =>
    devnet.clients.publicClient.readContract({
      address: devnet.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "veOfToken",
      args: [tokenId],
      blockNumber,
    });

  /** Every lock (25 aliases a request, all pinned to the first request's block) against the chain at that block. */
  async function expectLocksMatchChain(): Promise<bigint> {
    const first = await gql("{ _meta { block } }");
    const B = BigInt(first._meta.block);
    const chain = await readChainLocks(devnet, B);
    expect(chain.locks.length).toBeGreaterThan(5);
    for (let i = 0; i < chain.locks.length; i += 25) {
      const batch = chain.locks.slice(i, i + 25);
      const fields = batch
        .map(
          (l) =>
            `t${l.tokenId}: lock(tokenId: "${l.tokenId}", block: $b) { owner amountWei lockEnd autoMax listed burned veWei }`,
        )
        .join(" ");
      const data = await gql(`query($b: BigInt) { _meta(block: $b) { block } ${fields} }`, { b: String(B) });
      expect(data._meta.block).toBe(String(B));
      for (const l of batch) {
        const got = data[`t${l.tokenId}`];
        const burned = l.owner === null;
        expect(got, `lock ${l.tokenId} at ${B}`).toMatchObject({
          owner: l.owner,
          amountWei: String(l.amount),
          autoMax: burned ? false : l.autoMax,
          listed: chain.listed.has(l.tokenId),
          burned,
        });
        if (!burned) {
          expect(got.lockEnd, `lockEnd of ${l.tokenId}`).toBe(String(chain.effectiveEnds.get(l.tokenId)));
          expect(got.veWei, `ve of ${l.tokenId}`).toBe(String(await veOfToken(l.tokenId, B)));
        }
      }
    }
    // Each owner's live locks, by token id, as ownerOf says at B.
    const owners = [...new Set(chain.locks.flatMap((l) => (l.owner ? [l.owner] : [])))];
    for (const owner of [...owners, DEVNET_ACCOUNTS.idle.address]) {
      const data = await gql(
        `query($b: BigInt) { locks(where: { owner: "${owner}" }, block: $b, limit: 1000) { items { tokenId } } }`,
        { b: String(B) },
      );
      const expected = chain.locks.filter((l) => l.owner === getAddress(owner)).map((l) => String(l.tokenId));
      expect(
        data.locks.items.map((l: { tokenId: string }) => l.tokenId),
        `locks of ${owner}`,
      ).toEqual(expected);
    }
    return B;
  }

  it("after the seed (merges, unlocks, a sell-back, listings, AutoMax): every lock as the chain has it", async () => {
    await expectLocksMatchChain();
  });

  it("an account's events page by page hold their block while blocks are mined and indexed between pages", async () => {
    const who: Address = DEVNET_ACCOUNTS.alice.address;
    const q = `query($after: String) { _meta { block head } lockEvents(where: { account: "${who}" }, limit: 2, after: $after) {
      items { txHash logIndex blockNumber } pageInfo { hasNextPage endCursor } } }`;
    let data = await gql(q);
    const block = data._meta.block as string;
    const rows: string[] = [];
    for (let page = 0; page < 100; page++) {
      expect(data._meta.block).toBe(block);
      rows.push(...data.lockEvents.items.map((e: { txHash: string; logIndex: number }) => `${e.txHash}-${e.logIndex}`));
      for (const e of data.lockEvents.items) expect(BigInt(e.blockNumber) <= BigInt(block)).toBe(true);
      if (!data.lockEvents.pageInfo.hasNextPage) break;
      // New blocks with new lock activity, indexed before the next page is asked for.
      if (page < 3) {
        await applyLockOps(devnet, fc.sample(lockOpArb, { numRuns: 4, seed: page }));
        await ponder.waitForBlock(await headBlock(devnet));
      }
      data = await gql(q, { after: data.lockEvents.pageInfo.endCursor });
    }
    expect(new Set(rows).size).toBe(rows.length);
    const all = await gql(
      `query($b: BigInt) { lockEvents(where: { account: "${who}" }, block: $b, limit: 1000) { items { txHash logIndex } } }`,
      { b: block },
    );
    expect(rows).toEqual(
      all.lockEvents.items.map((e: { txHash: string; logIndex: number }) => `${e.txHash}-${e.logIndex}`),
    );
    expect(rows.length).toBeGreaterThan(2);
    const fresh = await gql("{ _meta { block head } }");
    expect(BigInt(fresh._meta.block) > BigInt(block)).toBe(true);
  });

  it("after random activity by every actor: still every lock as the chain has it at the answer's block", async () => {
    expect(ACTORS.length).toBeGreaterThan(1);
    await applyLockOps(devnet, fc.sample(lockOpArb, { numRuns: 10, seed: 42 }));
    await ponder.waitForBlock(await headBlock(devnet));
    await expectLocksMatchChain();
  });
});
