/**
 * A reorg at the head on the production topology with Redis: ONE indexer (`ponder start --views-schema`) on Postgres,
 * TWO API processes (dist/server/main.js) sharing their per-block answers through Redis. The common case on Base — one
 * block replaced at the same height and the same timestamp — used to leave the orphan's stats and ve board in Redis
 * under a key the new branch repeats (chain, block number, time), and both replicas served them for that height, at
 * the head and with `?block=`, until they expired (2 minutes). Now the replaced blocks are computed by each process
 * until every answer shared before the reorg has expired (api/read/replacedBlocks.ts). Checked against the chain.
 * Whether the old code served a stale answer here depended on which path computed the orphan's answers (a whole
 * ranking or a change from the anchor): this run checks the outcome on the served processes; the mechanism itself is
 * checked deterministically in test/read/sharedAnswers.test.ts (fails on the code before).
 */
import { randomUUID } from "node:crypto";
import { getAddress } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { headBlock, readChainLocks } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const BASE = "/api/index/v1";
const WINDOWS = ["24h", "7d", "30d", "lifetime"] as const;

let chain: SeededChain;
let topology: LiveTopology;
let a: ServiceChild;
let b: ServiceChild;

beforeAll(async () => {
  topology = await startLiveTopology({
    apis: 2,
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: `reorg-shared-${randomUUID()}:`,
      LOG_LEVEL: "error",
      INDEXER_POLLING_MS: "200",
    },
  });
  chain = topology.chain;
  [a, b] = topology.apis as [ServiceChild, ServiceChild];
}, 240_000);
afterAll(async () => {
  await topology?.stop();
});

type Stats = { blockNumber: string; totalLockedWei: string; liveLocks: number };
type Board = { blockNumber: string; rows: { address: string; lockedWei: string }[] };

async function get<T>(api: ServiceChild, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${api.url}${BASE}${path}`);
  return { status: res.status, body: (await res.json()) as T };
}

/** Polls until `done` holds (or the time is up), returning the last answer. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await read();
  while (!done(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await read();
  }
  return last;
}

it("a block replaced at the same height and time: both replicas answer the new branch's stats and board, at the head and pinned", async () => {
  const { testClient, publicClient } = chain.devnet.clients;
  const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
  const carol = getAddress(DEVNET_ACCOUNTS.carol.address);
  await testClient.mine({ blocks: 1 });
  const snapshot = await testClient.snapshot();
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
  const orphan = await headBlock(chain.devnet);
  const orphanBlock = await publicClient.getBlock({ blockNumber: orphan });
  // Both replicas answer the orphan's block at the head and pinned: its answers are in Redis (and in each process).
  for (const api of [a, b]) {
    const head = await until(
      () => get<Stats>(api, "/stats"),
      (r) => r.status === 200 && BigInt(r.body.blockNumber) >= orphan,
      30_000,
    );
    expect(BigInt(head.body.blockNumber)).toBe(orphan);
    expect((await get<Stats>(api, `/stats?block=${orphan}`)).status).toBe(200);
    expect((await get<Board>(api, `/leaderboards/ve?limit=100&block=${orphan}`)).status).toBe(200);
    expect((await get<Board>(api, "/leaderboards/ve?limit=100")).status).toBe(200);
    for (const window of WINDOWS) {
      expect((await get<Board>(api, `/leaderboards/furnace-claim?window=${window}`)).status).toBe(200);
      expect((await get<Board>(api, `/leaderboards/furnace-claim?window=${window}&block=${orphan}`)).status).toBe(200);
    }
  }
  const orphanStats = (await get<Stats>(a, `/stats?block=${orphan}`)).body;
  // The block before the fork, the same on both branches: the furnace board's values there.
  type Row = { address: string; value: string };
  const valuesOf = (rows: Row[]) => new Map(rows.map((row) => [getAddress(row.address), BigInt(row.value)]));
  const parents = new Map<string, Map<string, bigint>>();
  for (const window of WINDOWS) {
    const path = `/leaderboards/furnace-claim?window=${window}&limit=1000&block=${orphan - 1n}`;
    parents.set(window, valuesOf((await get<{ rows: Row[] }>(a, path)).body.rows));
  }

  // The reorg: the same height, the same timestamp, another block (carol's lock instead of alice's).
  await testClient.revert({ id: snapshot });
  await testClient.setNextBlockTimestamp({ timestamp: orphanBlock.timestamp });
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.carol, 1_700n);
  const replaced = await publicClient.getBlock({ blockNumber: orphan });
  expect(replaced.hash).not.toBe(orphanBlock.hash);
  expect(replaced.timestamp).toBe(orphanBlock.timestamp);
  expect(await headBlock(chain.devnet)).toBe(orphan);
  const onChain = await readChainLocks(chain.devnet, orphan);
  expect(String(onChain.totalLocked)).not.toBe(orphanStats.totalLockedWei);

  for (const api of [a, b]) {
    // The index has the new branch once carol's lock is there (an SQL read, kept by no memo).
    const locks = await until(
      () => get<{ locks: unknown[] }>(api, `/accounts/${carol}/locks?block=${orphan}`),
      (r) => r.status === 200 && r.body.locks.length > 0,
      30_000,
    );
    expect(locks.body.locks.length).toBeGreaterThan(0);
    // Within a few seconds (the old code served the orphan's answers from Redis for its 2-minute TTL).
    const truth = String(onChain.totalLocked);
    for (const path of ["/stats", `/stats?block=${orphan}`]) {
      const stats = await until(
        () => get<Stats>(api, path),
        (r) => r.status === 200 && r.body.totalLockedWei === truth,
        10_000,
      );
      expect(stats.body.blockNumber, path).toBe(String(orphan));
      expect(stats.body.totalLockedWei, path).toBe(truth);
    }
    for (const path of ["/leaderboards/ve?limit=100", `/leaderboards/ve?limit=100&block=${orphan}`]) {
      const holders = (r: { body: Board }) => r.body.rows.map((row) => getAddress(row.address));
      const board = await until(
        () => get<Board>(api, path),
        (r) => r.status === 200 && holders(r).includes(carol),
        10_000,
      );
      expect(holders(board), path).toContain(carol);
      const aliceLocked = onChain.locks
        .filter((l) => l.owner === alice && l.amount > 0n)
        .reduce((sum, l) => sum + l.amount, 0n);
      const aliceRow = board.body.rows.find((row) => getAddress(row.address) === alice);
      expect(aliceRow?.lockedWei ?? "0", path).toBe(String(aliceLocked));
    }
    // A duration board (no notified events to derive it from): carol's entry of the new branch is counted, alice's of
    // the orphan is not (alice's value is the parent block's).
    for (const [window, path] of WINDOWS.flatMap((window) => [
      [window, `/leaderboards/furnace-claim?window=${window}&limit=1000`] as const,
      [window, `/leaderboards/furnace-claim?window=${window}&limit=1000&block=${orphan}`] as const,
    ])) {
      const parent = parents.get(window)!;
      const board = await until(
        () => get<{ blockNumber: string; rows: Row[] }>(api, path),
        (r) => r.status === 200 && (valuesOf(r.body.rows).get(carol) ?? 0n) > (parent.get(carol) ?? 0n),
        10_000,
      );
      const values = valuesOf(board.body.rows);
      expect(board.body.blockNumber, path).toBe(String(orphan));
      expect(values.get(carol) ?? 0n, path).toBeGreaterThan(parent.get(carol) ?? 0n);
      expect(values.get(alice), path).toBe(parent.get(alice));
    }
  }
}, 180_000);
