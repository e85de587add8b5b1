import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMetrics } from "../../api/observability/metrics";
import { createRateLimiter } from "../../api/ratelimit/createRateLimiter";
import { RedisRateLimiter } from "../../api/ratelimit/redisLimiter";
import { createRedisClient } from "../../api/redis";
import { freePort } from "../../devnet/anvil";
import { burst, platformApp, platformConfig, REDIS_URL } from "../support/platformApp";
import { startTcpProxy } from "../support/tcpProxy";

// The shared limiter against the real Redis (design.md: "Redis when REDIS_URL is set, so the limit
// holds across replicas"), and what a replica does when Redis fails: it falls back to its own
// in-process limiter, logs one warning per outage, counts every fallback, and never answers 500 or hangs.

const RUN = `test:rl:${process.pid}:${Date.now()}:`;
const PREFLIGHT = "/api/mcp/v1/preflight";
const PATHS = [
  "/api/mcp/v1/state/0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  PREFLIGHT,
  "/api/mcp/v1/quote/lock-via-furnace",
  "/api/mcp/v1/prepare/collect-all",
];

let admin: Redis;
const cleanups: (() => Promise<unknown>)[] = [];
let runs = 0;

beforeAll(async () => {
  admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  await admin.ping();
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
afterAll(async () => {
  const keys = await admin.keys(`${RUN}*`);
  if (keys.length) await admin.del(...keys);
  admin.disconnect();
});

async function ready(redis: Redis) {
  if (redis.status !== "ready") await new Promise((r) => redis.once("ready", r));
}

/** A limiter on its own client with a key prefix unique to this test. */
async function redisLimiter(opts: { url?: string; keyPrefix?: string; max?: number; wait?: boolean } = {}) {
  const redis = createRedisClient(opts.url ?? REDIS_URL);
  cleanups.push(async () => redis.disconnect());
  if (opts.wait !== false) await ready(redis);
  const metrics = createMetrics();
  const limiter = new RedisRateLimiter({
    max: opts.max ?? 300,
    windowSec: 60,
    redis,
    keyPrefix: opts.keyPrefix ?? `${RUN}${++runs}:`,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    metrics,
  });
  return { redis, limiter, metrics };
}

/** The real app over a given limiter (its logs and metrics are the app's). */
function appWith(limiter: RedisRateLimiter, metrics = createMetrics(), max = 300) {
  return platformApp({ env: { RATE_LIMIT_MAX: String(max) }, limiter, metrics });
}

describe("rate limit on Redis", () => {
  it("admits exactly 300 of 1,000 concurrent requests per prefix, counted in Redis", async () => {
    const keyPrefix = `${RUN}exact:`;
    const { limiter, metrics } = await redisLimiter({ keyPrefix });
    const { request } = appWith(limiter, metrics);
    const results = await Promise.all(PATHS.map((p) => burst(1000, () => request(p))));
    for (const [i, r] of results.entries()) {
      expect(r.admitted, PATHS[i]).toBe(300);
      expect(r.limited[0]!.headers.get("retry-after")).toMatch(/^(60|5\d)$/);
    }
    expect(metrics.rateLimitStoreFallbacks.render()).not.toMatch(/\} \d+/);
    // The counts live in Redis, one key per prefix and client, with the window as TTL.
    const keys = (await admin.keys(`${keyPrefix}*`)).sort();
    expect(keys).toEqual(["prepare", "preflight", "quote", "state"].map((p) => `${keyPrefix}${p}:203.0.113.10`).sort());
    for (const k of keys) {
      expect(await admin.get(k)).toBe("1000");
      const ttl = await admin.pttl(k);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it("holds the limit across two app instances (replicas) sharing Redis: 300 in total", async () => {
    const keyPrefix = `${RUN}replicas:`;
    const one = await redisLimiter({ keyPrefix });
    const two = await redisLimiter({ keyPrefix });
    const a = appWith(one.limiter);
    const b = appWith(two.limiter);
    const { admitted, responses } = await burst(1000, (i) => (i % 2 ? a : b).request(PREFLIGHT));
    expect(admitted).toBe(300);
    const perReplica = [0, 1].map((side) => responses.filter((r, i) => i % 2 === side && r.status !== 429).length);
    expect(perReplica[0]! + perReplica[1]!).toBe(300);
    expect(perReplica[0]).toBeGreaterThan(0);
    expect(perReplica[1]).toBeGreaterThan(0);
  });

  it("is what createRateLimiter builds when REDIS_URL is set (and in-memory otherwise)", async () => {
    const metrics = createMetrics();
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const memory = createRateLimiter({ config: platformConfig(), logger, metrics });
    expect(memory.constructor.name).toBe("MemoryRateLimiter");
    const config = platformConfig({ REDIS_URL, RATE_LIMIT_MAX: "7" });
    const limiter = createRateLimiter({ config, logger, metrics, keyPrefix: `${RUN}config:` });
    cleanups.push(() => limiter.close());
    expect(limiter).toBeInstanceOf(RedisRateLimiter);
    // The client connects in the background; the first decisions may be local until it is ready.
    await new Promise((r) => setTimeout(r, 300));
    const d = await limiter.hit("preflight:198.18.0.1");
    expect(d).toMatchObject({ store: "redis", limit: 7, remaining: 6, allowed: true });
    expect(await admin.get(`${RUN}config:preflight:198.18.0.1`)).toBe("1");
  });
});

describe("rate limit when Redis fails", () => {
  it("Redis refusing connections: falls back to the in-process limit at once, no 500, one warning", async () => {
    const port = await freePort(); // nothing listens there
    const warnings: unknown[] = [];
    const redis = createRedisClient(`redis://127.0.0.1:${port}`);
    cleanups.push(async () => redis.disconnect());
    const metrics = createMetrics();
    const limiter = new RedisRateLimiter({
      max: 300,
      windowSec: 60,
      redis,
      keyPrefix: `${RUN}down:`,
      logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      metrics,
      bootGraceMs: 0, // an outage, not a replica still dialling at start-up
    });
    const { request, logs } = appWith(limiter, metrics);
    const started = performance.now();
    const { admitted, byStatus } = await burst(1000, () => request(PREFLIGHT));
    const elapsed = performance.now() - started;
    expect(admitted).toBe(300);
    expect(byStatus.get(500) ?? 0).toBe(0);
    expect(elapsed).toBeLessThan(5_000);
    expect(warnings).toEqual(["rate-limit store unavailable; this replica falls back to in-process limits"]);
    const fallbacks = metrics.rateLimitStoreFallbacks;
    expect(fallbacks.get({ reason: "error" }) + fallbacks.get({ reason: "skipped" })).toBe(1000);
    expect(fallbacks.get({ reason: "error" })).toBeGreaterThanOrEqual(1);
    expect(logs.lines.filter((l) => l.level === "error")).toEqual([]);
  });

  it("at start-up, before Redis first answers, decides locally without calling it an outage", async () => {
    const port = await freePort();
    const warnings: unknown[] = [];
    const redis = createRedisClient(`redis://127.0.0.1:${port}`);
    cleanups.push(async () => redis.disconnect());
    const metrics = createMetrics();
    const limiter = new RedisRateLimiter({
      max: 300,
      windowSec: 60,
      redis,
      logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} },
      metrics,
      bootGraceMs: 300,
    });
    expect(await limiter.hit("preflight:198.18.0.2")).toMatchObject({ store: "memory", remaining: 299 });
    expect(metrics.rateLimitStoreFallbacks.get({ reason: "connecting" })).toBe(1);
    expect(warnings).toEqual([]);
    await new Promise((r) => setTimeout(r, 350));
    expect(await limiter.hit("preflight:198.18.0.2")).toMatchObject({ store: "memory", remaining: 298 });
    expect(warnings).toHaveLength(1);
  });

  it("a busy event loop is not mistaken for a stuck Redis", async () => {
    const { limiter, metrics } = await redisLimiter();
    const pending = Array.from({ length: 50 }, () => limiter.hit("preflight:198.18.0.3"));
    const until = performance.now() + 600; // three stall periods without yielding
    while (performance.now() < until) {}
    const decisions = await Promise.all(pending);
    expect(decisions.every((d) => d.store === "redis")).toBe(true);
    expect(decisions.map((d) => d.remaining).sort((a, b) => b - a)[0]).toBe(299);
    expect(metrics.rateLimitStoreFallbacks.get({ reason: "timeout" })).toBe(0);
  });

  it("Redis hanging: each decision waits at most the command timeout, then the replica decides locally", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(REDIS_URL).port || 6379) });
    cleanups.push(() => proxy.stop());
    const { limiter, metrics, redis } = await redisLimiter({ url: proxy.url, max: 5 });
    const { request } = appWith(limiter, metrics, 5);
    expect((await burst(3, () => request(PREFLIGHT))).admitted).toBe(3); // via Redis
    proxy.setMode("blackhole");
    const started = performance.now();
    const { admitted, byStatus } = await burst(20, () => request(PREFLIGHT));
    const elapsed = performance.now() - started;
    // Local budget is a fresh window of 5 in this replica.
    expect(admitted).toBe(5);
    expect(byStatus.get(500) ?? 0).toBe(0);
    expect(elapsed).toBeLessThan(1_000);
    expect(metrics.rateLimitStoreFallbacks.get({ reason: "timeout" })).toBeGreaterThanOrEqual(1);
    // The stuck connection was dropped; once the path works again a fresh one carries the counts.
    proxy.setMode("pass");
    await ready(redis);
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await limiter.hit("preflight:198.18.0.4")).toMatchObject({ store: "redis", remaining: 4 });
  });

  it("Redis answering but too slowly: no decision waits longer than maxWaitMs", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(REDIS_URL).port || 6379) });
    cleanups.push(() => proxy.stop());
    const redis = createRedisClient(proxy.url);
    cleanups.push(async () => redis.disconnect());
    await ready(redis);
    const metrics = createMetrics();
    const limiter = new RedisRateLimiter({
      max: 5,
      windowSec: 60,
      redis,
      keyPrefix: `${RUN}slow:`,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      metrics,
      stallMs: 60_000, // silence alone would never trip it
      maxWaitMs: 150,
    });
    expect((await limiter.hit("k")).store).toBe("redis");
    proxy.setMode("blackhole");
    const started = performance.now();
    expect(await limiter.hit("k")).toMatchObject({ store: "memory" });
    expect(performance.now() - started).toBeLessThan(600);
    expect(metrics.rateLimitStoreFallbacks.get({ reason: "timeout" })).toBe(1);
  });

  it("a flapping Redis: one warning when it first fails, then one line with a count per window, not one per flap", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(REDIS_URL).port || 6379) });
    cleanups.push(() => proxy.stop());
    const redis = createRedisClient(proxy.url);
    cleanups.push(async () => redis.disconnect());
    await ready(redis);
    const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
    const infos: string[] = [];
    const limiter = new RedisRateLimiter({
      max: 300,
      windowSec: 60,
      redis,
      keyPrefix: `${RUN}flap:`,
      logger: {
        debug() {},
        info: (m) => infos.push(m),
        warn: (msg, fields) => warnings.push({ msg, fields }),
        error() {},
      },
      metrics: createMetrics(),
      bootGraceMs: 0,
      retryAfterMs: 20,
      warningWindowMs: 1_500,
    });
    const started = performance.now();
    for (let flap = 0; flap < 5; flap++) {
      proxy.setMode("refuse");
      proxy.dropConnections();
      expect((await limiter.hit("k")).store).toBe("memory");
      proxy.setMode("pass");
      await ready(redis);
      await new Promise((r) => setTimeout(r, 30)); // past retryAfterMs
      expect((await limiter.hit("k")).store).toBe("redis");
    }
    // Five outages inside the window: the first warned at once, the other four held for one line; recovered once.
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(warnings.map((w) => w.msg)).toEqual([
      "rate-limit store unavailable; this replica falls back to in-process limits",
    ]);
    expect(infos.filter((m) => m.includes("recovered"))).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_600));
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.fields).toMatchObject({ repeated: 4, windowSec: 2 });
  });

  it("connection killed mid-run: local limits during the outage, shared counts again after reconnecting", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(REDIS_URL).port || 6379) });
    cleanups.push(() => proxy.stop());
    const keyPrefix = `${RUN}killed:`;
    const { limiter, metrics, redis } = await redisLimiter({ url: proxy.url, keyPrefix });
    const { request } = appWith(limiter, metrics);
    expect((await burst(100, () => request(PREFLIGHT))).admitted).toBe(100);
    expect(await admin.get(`${keyPrefix}preflight:203.0.113.10`)).toBe("100");

    proxy.setMode("refuse");
    proxy.dropConnections();
    const during = await burst(50, () => request(PREFLIGHT));
    expect(during.admitted).toBe(50);
    expect(during.byStatus.get(500) ?? 0).toBe(0);
    // Decided locally: Redis did not see these.
    expect(await admin.get(`${keyPrefix}preflight:203.0.113.10`)).toBe("100");
    const local = during.responses.map((r) => r.headers.get("ratelimit"));
    expect(local).toContain('"preflight";r=250;t=60');

    proxy.setMode("pass");
    await ready(redis);
    await new Promise((r) => setTimeout(r, 1_050)); // the limiter's retry interval after a failure
    const after = await request(PREFLIGHT);
    expect(after.headers.get("ratelimit")).toMatch(/^"preflight";r=199;t=\d+$/);
    expect(await admin.get(`${keyPrefix}preflight:203.0.113.10`)).toBe("101");
  });
});
