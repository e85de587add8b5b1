/**
 * An indexer restarted on its own schema (a deploy of the same build, a process manager's restart, a host reboot),
 * in the production topology: `ponder start` on Postgres with its views schema, the API process reading it. Ponder's
 * crash recovery deletes every row above its safe checkpoint in the transaction that clears `is_ready`, and moves
 * `_ponder_checkpoint` back only later, from its runtime: for that window the rows are not the checkpoint's block's.
 * Every answer polled through the restart is either the documented 503 `INDEX_UNAVAILABLE` or true of the block it
 * names — never "no lock N was minted by block B" for a lock minted at or before B (red-team report, 4 of 4 runs).
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type SeededChain, startSeededChain } from "../support/indexChain";
import { applyLockOps, headBlock, readChainLocks } from "../support/lockChain";
import { createTestDatabase, type TestDatabase } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const ENV = { REDIS_URL: "", LOG_LEVEL: "warn", RATE_LIMIT_MAX: "1000000" };
const BASE = "/api/index/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let chain: SeededChain;
let database: TestDatabase;
let indexer: ServiceChild;
let api: ServiceChild;
const children: ServiceChild[] = [];
let common: Parameters<typeof spawnService>[0];

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${path}`);
  return { status: res.status, body: (await res.json()) as Json };
}

beforeAll(async () => {
  chain = await startSeededChain();
  database = await createTestDatabase(PG_URL);
  common = {
    command: "start",
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    databaseUrl: (database.forPonder("asset_v1") as { url: string }).url,
    schema: "asset_v1",
    viewsSchema: "asset",
    env: { ...ENV, INDEXER_POLLING_MS: "200" },
    // Ponder's "Detected crash recovery" is an info line.
    logLevel: "info" as const,
  };
  indexer = await spawnService(common);
  children.push(indexer);
  api = await spawnService({ ...common, command: "api", env: ENV, logLevel: "warn" });
  children.push(api);
  await api.waitFor200("/health", 30_000);
}, 180_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await database?.drop();
  await chain?.stop();
});

describe("an indexer restarted on its schema (crash recovery)", () => {
  it("every answer through the restart is 503 INDEX_UNAVAILABLE or true of its block; then the index is whole again", async () => {
    const fresh = getAddress(DEVNET_ACCOUNTS.fresh.address);
    // New locks in the newest blocks: above Ponder's safe checkpoint, so its recovery deletes and re-indexes them.
    await applyLockOps(chain.devnet, [
      { kind: "create", actor: "fresh", amount: 1_500n, days: 60n, autoMax: false },
      { kind: "create", actor: "fresh", amount: 2_000n, days: 90n, autoMax: false },
    ]);
    const mintedBy = await headBlock(chain.devnet);
    const ours = (await readChainLocks(chain.devnet)).locks.filter((l) => l.owner === fresh).map((l) => l.tokenId);
    const newest = ours.reduce((a, b) => (a > b ? a : b));
    const by = performance.now() + 120_000;
    while ((await get(`${BASE}/locks/${newest}`)).status !== 200) {
      if (performance.now() > by) throw new Error("the new lock was never indexed");
      await sleep(200);
    }

    await indexer.stop("SIGTERM");
    indexer = await spawnService(common);
    children.push(indexer);

    const seen = { refused: 0, answered: 0 };
    const until = performance.now() + 120_000;
    for (;;) {
      const [one, list] = await Promise.all([get(`${BASE}/locks/${newest}`), get(`${BASE}/accounts/${fresh}/locks`)]);
      for (const r of [one, list]) {
        if (r.status === 503) {
          expect(r.body.error).toBe("INDEX_UNAVAILABLE");
          seen.refused++;
          continue;
        }
        seen.answered++;
        if (r.status === 404) {
          // Only true below the mint: "No lock N was minted by block B".
          const block = BigInt(/by block (\d+)/.exec(r.body.message)?.[1] ?? "0");
          expect(block, JSON.stringify(r.body)).toBeLessThan(mintedBy);
          continue;
        }
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
      if (one.status === 200) expect(one.body.lock.tokenId, JSON.stringify(one.body)).toBe(String(newest));
      if (list.status === 200) {
        const ids = (list.body.locks as Json[]).map((l) => BigInt(l.tokenId));
        const at = BigInt(list.body.blockNumber);
        const truth = (await readChainLocks(chain.devnet, at)).locks
          .filter((l) => l.owner === fresh)
          .map((l) => l.tokenId);
        expect(ids.sort(), `the account's locks at block ${at}`).toEqual(truth.sort());
      }
      // Done once the restarted indexer says it has caught up (Ponder's /ready: is_ready 1, past its recovery) and the
      // lock is answered again at or above its mint.
      if (one.status === 200 && BigInt(one.body.blockNumber) >= mintedBy) {
        const ready = await fetch(`${indexer.url}/ready`).catch(() => null);
        if (ready?.status === 200) break;
      }
      if (performance.now() > until) throw new Error(`the index never came back: ${JSON.stringify(seen)}`);
      await sleep(50);
    }
    expect(indexer.log()).toMatch(/crash recovery/i);
    console.log(`through the restart: ${seen.refused} refused (503), ${seen.answered} answered`);
  }, 300_000);
});
