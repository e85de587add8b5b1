/**
 * A reorg at the head on the production topology with Redis: ONE indexer (`ponder start --views-schema`) on Postgres,
 * THREE API processes (dist/server/main.js) sharing their per-block answers through Redis. The common case on Base — one
 * block replaced at the same height and the same timestamp — used to leave the orphan's stats and ve board in Redis
 * under a key the new branch repeats (chain, block number, time), and every replica served them for that height, at
 * the head and with `?block=`, until they expired (2 minutes). Now the replaced blocks are computed by each process
 * until every answer shared before the reorg has expired (api/read/replacedBlocks.ts). Checked against the chain.
 *
 * A block's stats take one of two paths (api/read/runtime.ts), and each shares through Redis under its own key: near
 * the ve board's anchor they are derived with the block's ve ranking, from the locks changed since the anchor (key
 * `ve-delta-…`); a process with no anchor (it never ranked the ve board) reads them by the statement (key `stats`).
 * Which path served a block used to depend on what the process had read by then, so a run proved one key or the other.
 * Here both are taken on purpose, each witnessed by the processes' metrics: `a` and `b` rank the ve board before the
 * reorg (the anchor is set by that first ranking, in the reader's path: a finalized block within reach), so the new
 * branch's stats and board are derived; `c` only ever reads the stats, so its are the statement's. The orphan's answers
 * of both keys are in Redis (`b` and `c` took theirs from there). Each answer after the reorg must equal what the chain
 * says at the block it names (totalLockedClaim, veBalanceOf). With the hold disabled, `a`, `b` and `c` all serve the
 * orphan's answers and this fails; the mechanism itself is also checked in test/read/sharedAnswers.test.ts.
 */
import { randomUUID } from "node:crypto";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { headBlock } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const BASE = "/api/index/v1";
const WINDOWS = ["24h", "7d", "30d", "lifetime"] as const;

let chain: SeededChain;
let topology: LiveTopology;
let a: ServiceChild;
let b: ServiceChild;
/** The third replica: never asked for the ve board, so it has no anchor and its stats are the statement's. */
let c: ServiceChild;

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
  c = await topology.spawnApi();
  await c.waitFor200("/ready", 60_000);
}, 240_000);
afterAll(async () => {
  await topology?.stop();
});

type Stats = { blockNumber: string; totalLockedWei: string; liveLocks: number };
type Board = { blockNumber: string; rows: { address: string; lockedWei: string; veWei: string }[] };

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

/** A counter of `api`'s metrics (the sum of its series), 0 when it has none yet. */
async function metric(api: ServiceChild, name: string): Promise<number> {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, "gm"))) sum += Number(m[1]);
  return sum;
}
/** Answers `api` took from Redis (`hits`) or computed and wrote there (`misses`). */
const shared = async (api: ServiceChild, what: "hits" | "misses") => {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  const name = `api_cache_${what}_total\\{cache="index_shared"\\}`;
  return Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
};
const sharedHits = (api: ServiceChild) => shared(api, "hits");
/** The ve board's work in `api`: rankings computed whole or derived from the anchor, the anchor's reads (0: never). */
const veWork = async (api: ServiceChild) =>
  (await metric(api, "api_index_ve_board_computations_total")) +
  (await metric(api, "api_index_ve_board_derivations_total")) +
  (await metric(api, "api_index_ve_board_anchor_moves_total"));

/** What the chain says at `block`: the locked total, and the ve of each of `who`. */
async function truthAt(block: bigint, who: Address[]) {
  const { publicClient } = chain.devnet.clients;
  const address = chain.devnet.addresses.VeLockNFT;
  const abi = DEVNET_ABIS.VeLockNFT;
  const totalLockedWei = String(
    await publicClient.readContract({ address, abi, functionName: "totalLockedClaim", blockNumber: block }),
  );
  const ve = new Map<Address, string>();
  for (const account of who) {
    const wei = await publicClient.readContract({
      address,
      abi,
      functionName: "veBalanceOf",
      args: [account],
      blockNumber: block,
    });
    ve.set(account, String(wei));
  }
  return { totalLockedWei, ve };
}

it("a block replaced at the same height and time: every replica answers the new branch's stats and board, at the head and pinned, by either path", async () => {
  const { testClient, publicClient } = chain.devnet.clients;
  const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
  const carol = getAddress(DEVNET_ACCOUNTS.carol.address);
  await testClient.mine({ blocks: 1 });
  const snapshot = await testClient.snapshot();
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
  const orphan = await headBlock(chain.devnet);
  const orphanBlock = await publicClient.getBlock({ blockNumber: orphan });
  const atOrphan = await truthAt(orphan, [alice, carol]);
  // A process shares once it knows the index's source (read at its start, and with each branch check:
  // api/read/indexSource.ts); until then it computes alone, which on a loaded machine can outlast /ready. Each
  // replica is asked for the stats of blocks below the fork (a new one each time) until it shares.
  for (const api of [a, b, c]) {
    for (let k = 2n; (await shared(api, "hits")) + (await shared(api, "misses")) === 0; k++) {
      expect(k, "a replica that never shares through Redis").toBeLessThan(40n);
      expect((await get<Stats>(api, `/stats?block=${orphan - k}`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const [bHits, cHits] = [await sharedHits(b), await sharedHits(c)];
  // Every replica answers the orphan's block at the head and pinned. `a` first: its stats before any ranking of the
  // ve board (no anchor), so by the statement, shared in Redis under the `stats` key.
  for (const api of [a, b, c]) {
    const head = await until(
      () => get<Stats>(api, "/stats"),
      (r) => r.status === 200 && BigInt(r.body.blockNumber) >= orphan,
      30_000,
    );
    expect(BigInt(head.body.blockNumber)).toBe(orphan);
    const pinned = await get<Stats>(api, `/stats?block=${orphan}`);
    expect(pinned.status).toBe(200);
    expect(pinned.body.totalLockedWei).toBe(atOrphan.totalLockedWei);
    if (api === c) continue;
    // The ve board: its first ranking sets the anchor (the finalized block's live locks, read in the reader's path;
    // the metric api_index_ve_board_anchor_moves_total counts only the anchor's moves up in the background, which
    // need the finalized block 64 blocks on: none here). From then on this process's stats are derived.
    expect((await get<Board>(api, `/leaderboards/ve?limit=100&block=${orphan}`)).status).toBe(200);
    expect((await get<Board>(api, "/leaderboards/ve?limit=100")).status).toBe(200);
    for (const window of WINDOWS) {
      expect((await get<Board>(api, `/leaderboards/furnace-claim?window=${window}`)).status).toBe(200);
      expect((await get<Board>(api, `/leaderboards/furnace-claim?window=${window}&block=${orphan}`)).status).toBe(200);
    }
  }
  // The paths, as the metrics witness them: `b` and `c` took the orphan's answers from Redis (the keys the new branch
  // repeats); `a` and `b` ranked the ve board, `c` never did (no anchor: its stats are the statement's, `stats` key).
  expect(await veWork(a), "a ranked the ve board").toBeGreaterThan(0);
  expect(await sharedHits(b), "b took the orphan's answers from Redis").toBeGreaterThan(bHits);
  expect(await sharedHits(c), "c took the orphan's stats from Redis").toBeGreaterThan(cHits);
  expect(await veWork(c), "c never ranked the ve board").toBe(0);
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
  const truth = await truthAt(orphan, [alice, carol]);
  expect(truth.totalLockedWei).not.toBe(atOrphan.totalLockedWei);
  expect(truth.ve.get(carol)).not.toBe(atOrphan.ve.get(carol));

  for (const api of [a, b, c]) {
    const name = api === a ? "a" : api === b ? "b" : "c";
    // The index has the new branch once carol's lock is there (an SQL read, kept by no memo).
    const locks = await until(
      () => get<{ locks: unknown[] }>(api, `/accounts/${carol}/locks?block=${orphan}`),
      (r) => r.status === 200 && r.body.locks.length > 0,
      30_000,
    );
    expect(locks.body.locks.length).toBeGreaterThan(0);
    // Within a few seconds (the old code served the orphan's answers from Redis for its 2-minute TTL): the answer
    // names the block, and is what the chain says there.
    for (const path of ["/stats", `/stats?block=${orphan}`]) {
      const stats = await until(
        () => get<Stats>(api, path),
        (r) => r.status === 200 && r.body.totalLockedWei === truth.totalLockedWei,
        10_000,
      );
      expect(stats.body.blockNumber, `${name} ${path}`).toBe(String(orphan));
      expect(stats.body.totalLockedWei, `${name} ${path}`).toBe(truth.totalLockedWei);
    }
    if (api === c) {
      // Still the statement's: c never ranked the ve board, the reorg did not make it.
      expect(await veWork(c), "c never ranked the ve board").toBe(0);
      continue;
    }
    for (const path of ["/leaderboards/ve?limit=100", `/leaderboards/ve?limit=100&block=${orphan}`]) {
      const holders = (r: { body: Board }) => r.body.rows.map((row) => getAddress(row.address));
      const board = await until(
        () => get<Board>(api, path),
        (r) => r.status === 200 && holders(r).includes(carol),
        10_000,
      );
      expect(board.body.blockNumber, `${name} ${path}`).toBe(String(orphan));
      const veOf = (who: Address) => board.body.rows.find((row) => getAddress(row.address) === who)?.veWei ?? "0";
      expect(veOf(carol), `${name} ${path} carol`).toBe(truth.ve.get(carol));
      expect(veOf(alice), `${name} ${path} alice`).toBe(truth.ve.get(alice));
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
      expect(board.body.blockNumber, `${name} ${path}`).toBe(String(orphan));
      expect(values.get(carol) ?? 0n, `${name} ${path}`).toBeGreaterThan(parent.get(carol) ?? 0n);
      expect(values.get(alice), `${name} ${path}`).toBe(parent.get(alice));
    }
  }
}, 180_000);
