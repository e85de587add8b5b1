/**
 * F9: the Redis breaker's gauge (api_cache_redis_breaker_open) said 1 after Redis came back, until the next load that
 * touched Redis; with few new keys (a quiet replica, the supply cache between windows) that was minutes. The breaker
 * now probes Redis in the background (api/cache/redisBreaker.ts): a write at the end of the cool-down, then backing off,
 * and at once on a reconnect. Real Redis (TEST_REDIS_URL, default database 4) behind a TCP proxy that refuses, holds or
 * passes; and Redis servers of the file's own, full or refusing writes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBreaker } from "../../api/cache/redisBreaker";
import { RedisTtlCache } from "../../api/cache/redisTtlCache";
import { CacheMetrics } from "../../api/observability/cacheMetrics";
import { silentLogger } from "../../api/observability/logger";
import { freePort } from "../../devnet/anvil";
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy";

// TEST_REDIS_URL picks the shared Redis and its database (default db 4 on 127.0.0.1:6379), as the other tests'.
const SHARED_REDIS = new URL(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/4");
const REDIS = { host: SHARED_REDIS.hostname, port: Number(SHARED_REDIS.port || 6379) };
const DB = Number(SHARED_REDIS.pathname.slice(1) || 0);
const PREFIX = `configcheck-breaker-${process.pid}-${randomUUID().slice(0, 8)}:`;
const COOL_DOWN_MS = 300;
const BUDGET_MS = 300;
const caches: RedisTtlCache[] = [];
const proxies: TcpProxy[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(async () => {
  for (const c of caches) await c.close();
  for (const p of proxies) await p.stop();
  const admin = new Redis({ ...REDIS, db: DB });
  const keys = await admin.keys(`${PREFIX}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

/** A cache through its own proxy, and its breaker gauge as /api/metrics renders it. */
async function cacheBehindProxy() {
  const proxy = await startTcpProxy(REDIS);
  proxies.push(proxy);
  const infos: string[] = [];
  const cache = await RedisTtlCache.create({
    url: `${proxy.url}/${DB}`,
    keyPrefix: PREFIX,
    commandTimeoutMs: BUDGET_MS,
    coolDownMs: COOL_DOWN_MS,
    logger: { ...silentLogger, info: (msg) => infos.push(msg) },
  });
  caches.push(cache);
  const metrics = new CacheMetrics();
  metrics.register("supply_shared", { stats: cache.shared, breaker: cache.breaker });
  const gauge = () =>
    metrics
      .render()
      .split("\n")
      .find((l) => l.startsWith("api_cache_redis_breaker_open{"));
  const load = (value: string) => cache.getOrLoad(`k-${randomUUID()}`, 60_000, async () => value);
  return { proxy, cache, gauge, load, infos };
}

/** Polls until `check` holds or `ms` pass; how long it took, or null. */
async function within(ms: number, check: () => boolean): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < ms) {
    if (check()) return performance.now() - started;
    await sleep(25);
  }
  return check() ? performance.now() - started : null;
}

describe("the Redis breaker's gauge after Redis returns, with no load (F9)", () => {
  it("Redis down, then back: the gauge reads 0 again once the connection is up, no load needed", async () => {
    const { proxy, gauge, load, infos } = await cacheBehindProxy();
    expect(await load("a")).toBe("a");
    expect(gauge()).toBe('api_cache_redis_breaker_open{cache="supply_shared"} 0');

    proxy.setMode("refuse");
    proxy.dropConnections();
    await sleep(200); // the client sees its connection gone and reconnects in the background, refused
    expect(await load("b")).toBe("b"); // served in-process; Redis failed it: open
    expect(gauge()).toBe('api_cache_redis_breaker_open{cache="supply_shared"} 1');
    // Background probes while it is down find nothing: still open after several cool-downs.
    await sleep(4 * COOL_DOWN_MS);
    expect(gauge()).toBe('api_cache_redis_breaker_open{cache="supply_shared"} 1');

    proxy.setMode("pass");
    // No load from here on. ioredis reconnects within its retry (≤ 2 s); the probe follows at once.
    const took = await within(6_000, () => gauge()?.endsWith(" 0") === true);
    console.log(`breaker closed ${took === null ? "never" : `${Math.round(took)} ms`} after Redis came back`);
    expect(took, "still open with Redis answering").not.toBeNull();
    expect(infos).toContain("redis answers again: sharing resumed");
  }, 30_000);

  it("Redis hung, then answering on the same connection: a background probe closes it within its back-off", async () => {
    const { proxy, gauge, load } = await cacheBehindProxy();
    expect(await load("a")).toBe("a");
    proxy.setMode("hold");
    expect(await load("b")).toBe("b"); // one budget spent on the hung Redis, then in-process: open
    expect(gauge()).toBe('api_cache_redis_breaker_open{cache="supply_shared"} 1');
    await sleep(3 * COOL_DOWN_MS);
    expect(gauge()).toBe('api_cache_redis_breaker_open{cache="supply_shared"} 1');

    proxy.setMode("pass");
    // Probes so far: at 300 ms, then 600 ms, 1,200 ms … later: the next one after the return is within ~2.4 s.
    const took = await within(5_000, () => gauge()?.endsWith(" 0") === true);
    console.log(`breaker closed ${took === null ? "never" : `${Math.round(took)} ms`} after Redis answered again`);
    expect(took, "still open with Redis answering").not.toBeNull();
    // And sharing resumed: a value another replica wrote is read through Redis.
    const admin = new Redis({ ...REDIS, db: DB });
    await admin.set(`${PREFIX}shared`, "theirs", "PX", 60_000);
    admin.disconnect();
    expect(await (caches.at(-1) as RedisTtlCache).getOrLoad("shared", 60_000, async () => "mine")).toBe("theirs");
  }, 30_000);
});

describe("RedisBreaker's background probe", () => {
  it("backs off while Redis stays away: one probe at a time, each wait twice the last, up to its cap", async () => {
    const at: number[] = [];
    const started = performance.now();
    const breaker = new RedisBreaker({
      coolDownMs: 100,
      maxProbeIntervalMs: 400,
      probe: async () => {
        at.push(Math.round(performance.now() - started));
        await sleep(20);
        throw new Error("no reply");
      },
    });
    breaker.failed("shared", "down");
    await sleep(2_100);
    breaker.stop();
    const count = at.length;
    await sleep(500);
    // At ~100, ~320, ~740, ~1160, ~1580, ~2000 ms: six, not one per cool-down (twenty).
    expect(count).toBeGreaterThanOrEqual(4);
    expect(count).toBeLessThanOrEqual(7);
    expect(at.length, "a probe after stop()").toBe(count);
    expect(breaker.open).toBe(true);
  });

  it("a probe that answers closes it, told once; the loads' own probe still works beside it", async () => {
    let answer = false;
    let closes = 0;
    const breaker = new RedisBreaker({
      coolDownMs: 50,
      onClose: () => closes++,
      probe: async () => {
        if (!answer) throw new Error("no reply");
      },
    });
    breaker.failed("shared", "down");
    expect(breaker.admit()).toBe("skip");
    await sleep(120);
    expect(breaker.open).toBe(true);
    // A load probes after the cool-down; Redis answers the background probe first.
    const admission = breaker.admit();
    expect(admission).toBe("probe");
    answer = true;
    breaker.poke();
    expect(await within(500, () => !breaker.open)).not.toBeNull();
    breaker.succeeded(admission);
    expect(closes).toBe(1);
    expect(breaker.admit()).toBe("shared");
    breaker.stop();
  });
});

/** A Redis of this test's own (no persistence), until the file ends; its URL and an admin client. */
async function ownRedis(): Promise<{ url: string; admin: Redis }> {
  const port = await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", ""], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  ownServers.push(child);
  let out = "";
  child.stdout!.on("data", (chunk) => {
    out += chunk;
  });
  const ready = await within(10_000, () => out.includes("Ready to accept connections"));
  if (ready === null) throw new Error(`redis-server on ${port} did not start: ${out}`);
  const admin = new Redis({ host: "127.0.0.1", port });
  ownAdmins.push(admin);
  return { url: `redis://127.0.0.1:${port}`, admin };
}
const ownServers: ChildProcess[] = [];
const ownAdmins: Redis[] = [];
afterAll(() => {
  for (const a of ownAdmins) a.disconnect();
  for (const c of ownServers) c.kill("SIGKILL");
});

/**
 * Red team rtredis F1: a Redis at maxmemory under noeviction refuses writes (and MULTI) but answers PING and reads.
 * The background probe was a PING, so it closed the breaker every cool-down, the next load failed and reopened it: a
 * warning and an info line per cool-down per cache, and the gauge back at 0 between them, for the whole outage. The
 * probe now writes (a SET with a short PX), which such a Redis refuses; a load that probes by reading alone (a value
 * found) leaves the verdict to it. One outage: one warning, the gauge 1 throughout, one "sharing resumed".
 */
describe("the Redis breaker with Redis answering reads but refusing writes", () => {
  async function watched(url: string) {
    const warns: string[] = [];
    const infos: string[] = [];
    const cache = await RedisTtlCache.create({
      url,
      keyPrefix: PREFIX,
      commandTimeoutMs: BUDGET_MS,
      coolDownMs: COOL_DOWN_MS,
      logger: { ...silentLogger, warn: (msg) => warns.push(msg), info: (msg) => infos.push(msg) },
    });
    caches.push(cache);
    const opened = () => warns.filter((m) => m.includes("Redis skipped for")).length;
    const resumed = () => infos.filter((m) => m === "redis answers again: sharing resumed").length;
    return { cache, opened, resumed };
  }

  /** Loads every 40 ms for `ms` (new keys, and `hits` Redis holds), sampling the breaker; what it read. */
  async function underLoad(cache: RedisTtlCache, ms: number, hits: string[] = []) {
    const samples: boolean[] = [];
    const started = performance.now();
    for (let i = 0; performance.now() - started < ms; i++) {
      const key = i % 2 === 1 && hits.length > 0 ? hits[(i >> 1) % hits.length]! : `k-${randomUUID()}`;
      const value = await cache.getOrLoad(key, 60_000, async () => "here");
      expect(value === "here" || value === "there").toBe(true);
      samples.push(cache.breaker.open);
      await sleep(40);
    }
    return samples;
  }

  it("maxmemory reached under noeviction (OOM on writes): opened once, open throughout, closed once after", async () => {
    const { url, admin } = await ownRedis();
    const { cache, opened, resumed } = await watched(url);
    expect(await cache.getOrLoad("before", 60_000, async () => "a")).toBe("a");
    expect(cache.breaker.open).toBe(false);

    // Full: 1 MB held, then maxmemory well below what is used (noeviction evicts nothing; the margin outlasts the
    // query buffers the server frees meanwhile).
    for (let i = 0; i < 32; i++) await admin.set(`fill:${i}`, "x".repeat(32 * 1024));
    const used = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1]);
    await admin.config("SET", "maxmemory-policy", "noeviction");
    await admin.config("SET", "maxmemory", String(used - 512 * 1024));
    expect(await admin.set("one-more", "x").catch((e: Error) => e.message)).toMatch(/OOM/);
    expect(await admin.ping()).toBe("PONG");

    // Twelve cool-downs of loads: before, the breaker closed and reopened at each.
    const samples = await underLoad(cache, 12 * COOL_DOWN_MS);
    const firstOpen = samples.indexOf(true);
    expect(firstOpen).toBe(0);
    expect(samples.slice(firstOpen).every(Boolean), `breaker samples ${samples.map(Number).join("")}`).toBe(true);
    expect(opened(), "warnings 'Redis skipped'").toBe(1);
    expect(resumed(), "info lines 'sharing resumed' during the outage").toBe(0);

    // Memory freed: the write probe closes it (within its back-off), told once; loads share again.
    await admin.config("SET", "maxmemory", "0");
    expect(await within(6_000, () => !cache.breaker.open)).not.toBeNull();
    await underLoad(cache, 4 * COOL_DOWN_MS);
    expect(cache.breaker.open).toBe(false);
    expect(opened()).toBe(1);
    expect(resumed()).toBe(1);
  }, 30_000);

  it("writes refused with reads answered (min-replicas-to-write): a load that only read does not close it", async () => {
    const { url, admin } = await ownRedis();
    const { cache, opened, resumed } = await watched(url);
    const hits = Array.from({ length: 200 }, (_, i) => `held-${i}`);
    for (const key of hits) await admin.set(`${PREFIX}${key}`, "there", "PX", 60_000);
    expect(await cache.getOrLoad("before", 60_000, async () => "a")).toBe("a");
    // NOREPLICAS on every write; reads, MULTI of reads and PING answered.
    await admin.config("SET", "min-replicas-to-write", "1");

    const samples = await underLoad(cache, 12 * COOL_DOWN_MS, hits);
    expect(samples.indexOf(true)).toBe(0);
    expect(samples.every(Boolean), `breaker samples ${samples.map(Number).join("")}`).toBe(true);
    expect(opened()).toBe(1);
    expect(resumed()).toBe(0);

    await admin.config("SET", "min-replicas-to-write", "0");
    expect(await within(6_000, () => !cache.breaker.open)).not.toBeNull();
    expect(resumed()).toBe(1);
  }, 30_000);
});
