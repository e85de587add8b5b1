/**
 * Replicas share each block's ve ranking and stats through Redis (api/read/sharedAnswers.ts): two apps, each with
 * its own process-local memo and its own Redis client (as two processes), over one synthetic index — the block's
 * ranking is computed once between them, and both answer the same. Real Redis at 127.0.0.1:6379.
 */
import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import type { TtlCache } from "../../api/cache/ttlCache";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import type { BoardIndex, LockIndex } from "../../api/read/contract";
import { NOT_RANKED } from "../../api/read/contract";
import type { IndexSignalListener, IndexSignalSource, Reverted } from "../../api/read/indexSignal";
import { boardCodec, createSharedAnswers, statsCodec, veDeltaCodec, veLocksCodec } from "../../api/read/sharedAnswers";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { startTcpProxy } from "../support/tcpProxy";

const START = 46_183_959n;
const config = { ...loadConfig({ NETWORK: "base" }), redisUrl: "redis://127.0.0.1:6379" };
let index: SyntheticIndex;
let reader: LockIndex & BoardIndex;
const calls = { holders: 0, stats: 0, veLocks: 0, veLockDelta: 0 };
const caches: TtlCache[] = [];
const warnings: string[] = [];

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 1_500, owners: 50, seed: 5, startBlock: START });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "synthetic", index);
  const inner = createLockIndex({ db: drizzle(client), schema: "synthetic" });
  reader = {
    ...inner,
    veLocks: (at) => {
      calls.veLocks++;
      return inner.veLocks(at);
    },
    veLockDelta: (from, at) => {
      calls.veLockDelta++;
      return inner.veLockDelta(from, at);
    },
    holders: (at) => {
      calls.holders++;
      return inner.holders(at);
    },
    stats: (at) => {
      calls.stats++;
      return inner.stats(at);
    },
  };
}, 60_000);

afterAll(async () => {
  for (const c of caches) await c.close();
});

/** An index signal the test speaks for (api/read/indexSignal.ts's NOTIFY): heads, and a reorg's revert with one. */
function toldSignal() {
  const listeners = new Set<IndexSignalListener>();
  return {
    head: null,
    listening: true,
    subscribe(listener: IndexSignalListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    tell(block: bigint, reverted?: Reverted) {
      for (const listener of listeners) listener(block, undefined, reverted);
    },
  };
}

async function replica(
  prefix: string,
  signal?: IndexSignalSource,
  redisUrl = config.redisUrl,
  o: { atBlock?: LockIndex & BoardIndex; rpcTimeoutMs?: number } = {},
) {
  const rpcTimeoutMs = o.rpcTimeoutMs ?? config.rpcTimeoutMs;
  const shared = await createSharedAnswers(
    { ...config, redisUrl, rpcTimeoutMs },
    {
      keyPrefix: prefix,
      logger: { ...silentLogger, warn: (m: string, f?: unknown) => warnings.push(`${m} ${JSON.stringify(f)}`) },
    },
  );
  if (!shared) throw new Error("no Redis cache");
  caches.push(shared);
  const metrics = createMetrics();
  const app = createApp({
    config: { ...config, rpcTimeoutMs, rateLimit: { max: 1e6, windowSec: 60 } },
    rpc: null,
    index: { atBlock: o.atBlock ?? reader, shared: shared, ...(signal ? { signal } : {}) },
    logger: silentLogger,
    metrics,
  });
  return Object.assign(app, { metrics });
}

describe("per-block answers shared by replicas", () => {
  it("two replicas, 60 concurrent board, rank and stats requests in one block: one ranking, one stats", async () => {
    const prefix = `test-index-${randomUUID()}:`;
    const [a, b] = [await replica(prefix), await replica(prefix)];
    const before = { ...calls };
    const owner = index.events[10]!.account;
    const paths = [
      "/api/index/v1/leaderboards/ve?limit=5",
      `/api/index/v1/leaderboards/ve/${owner}`,
      "/api/index/v1/stats",
    ];
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        Promise.resolve((i % 2 ? a : b).request(paths[i % 3] as string)).then((r) => r.json() as Promise<unknown>),
      ),
    );
    expect(warnings).toEqual([]);
    // The block's ranking: derived from the finalized block's live locks and the locks changed since, each read once
    // between the two replicas (the statement over every lock not at all).
    expect(calls.holders - before.holders).toBe(0);
    expect(calls.veLocks - before.veLocks).toBe(1);
    expect(calls.veLockDelta - before.veLockDelta).toBe(1);
    expect(calls.stats - before.stats).toBe(1);
    // Both replicas answer the same, whichever computed — but the index's lag, computed when each answer is sent
    // (api/index/answer.ts): 60 answers can straddle a second of the wall clock.
    const byPath = new Map<string, string>();
    answers.forEach((body: unknown, i: number) => {
      const path = paths[i % 3] as string;
      const { indexLagSeconds: _, stale: __, ...ofBlock } = body as Record<string, unknown>;
      const text = JSON.stringify(ofBlock);
      expect(byPath.get(path) ?? text, path).toBe(text);
      byPath.set(path, text);
    });
    expect(JSON.parse(byPath.get(paths[0] as string)!).ok).toBe(true);
  });

  it("a replica with another prefix (another deployment) does not see them", async () => {
    const c = await replica(`test-index-${randomUUID()}:`);
    const before = { ...calls };
    expect((await c.request("/api/index/v1/leaderboards/ve")).status).toBe(200);
    expect([calls.veLocks - before.veLocks, calls.veLockDelta - before.veLockDelta]).toEqual([1, 1]);
  });

  it("a block a reorg replaced is computed by each replica, never taken from Redis (its key repeats on the new branch)", async () => {
    const prefix = `test-index-${randomUUID()}:`;
    const [sa, sb] = [toldSignal(), toldSignal()];
    const [a, b] = [await replica(prefix, sa), await replica(prefix, sb)];
    const head = index.head.block;
    for (const s of [sa, sb]) s.tell(head);
    const computed = () => calls.holders + calls.stats + calls.veLocks + calls.veLockDelta;
    const paths = [`/api/index/v1/stats?block=${head}`, `/api/index/v1/leaderboards/ve?limit=5&block=${head}`];
    const read = async (app: typeof a) => {
      for (const path of paths) expect((await app.request(path)).status, path).toBe(200);
    };
    await read(a);
    // Shared: the other replica takes the block's answers from Redis.
    let before = computed();
    await read(b);
    expect(computed() - before).toBe(0);
    // A reorg replaced the head (the same number and time on the new branch): both replicas hear it.
    for (const s of [sa, sb]) s.tell(head, { from: head, finalized: head - 1n });
    before = computed();
    await read(b);
    expect(computed() - before).toBeGreaterThan(0);
    before = computed();
    await read(a);
    expect(computed() - before).toBeGreaterThan(0);
    // Blocks below the fork are shared as before.
    const older = `/api/index/v1/stats?block=${head - 5n}`;
    expect((await a.request(older)).status).toBe(200);
    before = computed();
    expect((await b.request(older)).status).toBe(200);
    expect(computed() - before).toBe(0);
    expect(warnings).toEqual([]);
  });

  it("an answer of the previous format (version 2: a board change of 0 meant 'off the board') is not read", async () => {
    const prefix = `test-index-${randomUUID()}:`;
    const shared = await createSharedAnswers(config, { keyPrefix: prefix });
    if (!shared) throw new Error("no Redis cache");
    caches.push(shared);
    const redis = new Redis(config.redisUrl);
    try {
      const head = { block: 9n, time: 90n, finalized: 8n };
      const change = (value: bigint) => ({
        head,
        block: 9n,
        time: 90n,
        inRange: true,
        finalizedTime: 80n,
        value: [{ address: "0x00000000000000000000000000000000000000aa" as const, value }],
      });
      // Ranked at 0 and off the board are two answers on the wire.
      for (const v of [0n, NOT_RANKED]) expect(boardCodec.decode(boardCodec.encode(change(v)))).toEqual(change(v));
      const v3 = boardCodec.encode(change(0n));
      expect(v3.startsWith('{"v":3,')).toBe(true);
      await redis.set(`${prefix}k`, v3.replace('{"v":3,', '{"v":2,'), "PX", 60_000);
      let loads = 0;
      const got = await shared.getOrLoad("k", 60_000, async () => {
        loads++;
        return v3;
      });
      expect([loads, got]).toEqual([1, v3]);
    } finally {
      redis.disconnect();
    }
  });

  it("the wire forms round-trip exactly", async () => {
    const at = { block: index.head.block, time: index.head.time };
    const stats = await reader.stats(at);
    expect(statsCodec.decode(statsCodec.encode(stats))).toEqual(stats);
    const locks = await reader.veLocks(at);
    expect(locks.value.length).toBeGreaterThan(50);
    expect(veLocksCodec.decode(veLocksCodec.encode(locks))).toEqual(locks);
    const delta = await reader.veLockDelta({ block: START + 10n, time: index.blockTimes.get(START + 10n) ?? 0n }, at);
    expect(delta.value.some((c) => c.lock === null) && delta.value.some((c) => c.lock !== null)).toBe(true);
    expect(veDeltaCodec.decode(veDeltaCodec.encode(delta))).toEqual(delta);
  });
});

describe("a Redis that hangs (the connection alive, no replies)", () => {
  /** createSharedAnswers' command timeout: a load's whole budget of Redis time. */
  const COMMAND_TIMEOUT_MS = 2_000;
  const computed = () => calls.holders + calls.stats + calls.veLocks + calls.veLockDelta;
  const timed = async (app: { request(path: string): Response | Promise<Response> }, path: string) => {
    const started = performance.now();
    const response = await app.request(path);
    const ms = performance.now() - started;
    return { status: response.status, ms, body: await response.text() };
  };
  const breakerGauge = async (app: Awaited<ReturnType<typeof replica>>) =>
    (await app.metrics.render())
      .split("\n")
      .find((line) => line.startsWith('api_cache_redis_breaker_open{cache="index_shared"}'));

  it("costs one load's budget, then new blocks are computed at once; sharing resumes once Redis answers again", async () => {
    const prefix = `test-index-${randomUUID()}:`;
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: 6379 });
    try {
      const a = await replica(prefix, undefined, proxy.url);
      // Six blocks the index holds a time for (an event in each), so no node is asked.
      const blocks = [...new Set(index.events.map((e) => e.blockNumber))].slice(-6);
      const [warm, hung, ...rest] = blocks as [bigint, bigint, ...bigint[]];
      const recovered = rest.pop()!;
      const stats = (block: bigint) => `/api/index/v1/stats?block=${block}`;
      expect((await timed(a, stats(warm))).status).toBe(200);
      expect(await breakerGauge(a)).toBe('api_cache_redis_breaker_open{cache="index_shared"} 0');
      warnings.length = 0;

      proxy.setMode("hold");
      // The first block's loads wait out one budget on the hung Redis, then are computed here.
      const first = await timed(a, stats(hung));
      expect(first.status).toBe(200);
      expect(first.ms).toBeGreaterThan(COMMAND_TIMEOUT_MS - 200);
      // Each new block after it skips Redis: no wait (before the breaker, each waited another ~2 s).
      for (const block of rest) {
        const later = await timed(a, stats(block));
        expect(later.status, later.body).toBe(200);
        // Its own computation only (PGlite here, on a shared machine: ~0.2–0.8 s); before, ~2 s more each.
        expect(later.ms).toBeLessThan(COMMAND_TIMEOUT_MS / 2);
      }
      expect(await breakerGauge(a)).toBe('api_cache_redis_breaker_open{cache="index_shared"} 1');
      // One warning for the outage, not one per load.
      expect(warnings.filter((w) => w.includes("Redis skipped"))).toHaveLength(1);

      // Redis recovers; after the cool-down the next load probes it and sharing resumes: another replica takes the
      // block's answers from Redis without computing them.
      proxy.setMode("pass");
      await new Promise((r) => setTimeout(r, 5_100));
      expect((await timed(a, stats(recovered))).status).toBe(200);
      expect(await breakerGauge(a)).toBe('api_cache_redis_breaker_open{cache="index_shared"} 0');
      const b = await replica(prefix);
      const before = computed();
      expect((await timed(b, stats(recovered))).status).toBe(200);
      expect(computed() - before).toBe(0);
      const admin = new Redis(config.redisUrl!);
      expect((await admin.keys(`${prefix}*:${recovered}:*`)).length).toBeGreaterThan(0);
      admin.disconnect();
    } finally {
      await proxy.stop();
    }
  }, 30_000);
});

describe("a replica stuck mid-computation (its lock renewed, no value ever written)", () => {
  it("the others wait half the route's deadline, then compute the answer themselves: 200, never a 502", async () => {
    const prefix = `test-index-${randomUUID()}:`;
    // A 3 s deadline for the index routes (min(RPC_TIMEOUT_MS, 10 s)): the wait is 1.5 s.
    const rpcTimeoutMs = 3_000;
    const never = () => new Promise<never>(() => {});
    const stuck = await replica(prefix, undefined, config.redisUrl, {
      atBlock: { ...reader, holders: never, stats: never, veLocks: never, veLockDelta: never },
      rpcTimeoutMs,
    });
    const other = await replica(prefix, undefined, config.redisUrl, { rpcTimeoutMs });
    const block = [...new Set(index.events.map((e) => e.blockNumber))].at(-12)!;
    const path = `/api/index/v1/stats?block=${block}`;
    // The stuck replica takes the block's lock and renews it while its computation never ends.
    void Promise.resolve(stuck.request(path)).catch(() => {});
    await new Promise((r) => setTimeout(r, 300));
    const started = performance.now();
    const response = await other.request(path);
    const body = await response.text();
    // Before: the wait (15 s) outlived the deadline, which answered 502 STATE_READ_FAILED, a chain read's code.
    expect(response.status, body).toBe(200);
    expect(performance.now() - started).toBeLessThan(rpcTimeoutMs);
    expect(warnings.some((w) => w.includes("a lock held past the wait"))).toBe(true);
  }, 30_000);
});
