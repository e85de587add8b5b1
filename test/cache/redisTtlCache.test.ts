/**
 * The in-process mirror in front of Redis (api/cache/redisTtlCache.ts) is bounded: a request may choose the key (the
 * shared index answers are keyed by any past block), so distinct keys cannot grow the process — at most its entries
 * and bytes are held, and what expired is dropped. Real Redis at 127.0.0.1:6379.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisTtlCache } from "../../api/cache/redisTtlCache";
import { silentLogger } from "../../api/observability/logger";
import { startTcpProxy } from "../support/tcpProxy";

const REDIS_URL = "redis://127.0.0.1:6379";
const PREFIX = `test-mirror-${process.pid}-${randomUUID().slice(0, 8)}:`;
const caches: RedisTtlCache[] = [];

async function cache(mirror: { maxEntries: number; maxChars: number }) {
  const c = await RedisTtlCache.create({ url: REDIS_URL, keyPrefix: PREFIX, logger: silentLogger, mirror });
  caches.push(c);
  return c;
}

afterAll(async () => {
  for (const c of caches) await c.close();
  const admin = new Redis(REDIS_URL);
  const keys = await admin.keys(`${PREFIX}*`);
  if (keys.length > 0) await admin.del(...keys);
  admin.disconnect();
});

describe("RedisTtlCache's in-process mirror", () => {
  it("holds at most its entries and bytes however many distinct keys pass through it", async () => {
    const c = await cache({ maxEntries: 20, maxChars: 4_000 });
    const value = (i: number) => `${i}:`.padEnd(100, "x");
    for (let i = 0; i < 500; i++) {
      expect(await c.getOrLoad(`block-${i}`, 60_000, async () => value(i))).toBe(value(i));
      expect(c.mirror.size).toBeLessThanOrEqual(20);
    }
    expect(c.mirror.size).toBe(20);
    expect(c.mirror.chars).toBe(20 * 100);
    // The newest are the ones kept; an older one is read back from Redis, not lost.
    expect(c.peek("block-499")).toBe(value(499));
    expect(c.peek("block-0")).toBeUndefined();
    expect(await c.getOrLoad("block-0", 60_000, async () => "not read")).toBe(value(0));

    // Large values: the byte bound holds before the entry bound does.
    const big = (i: number) => `${i}:`.padEnd(1_000, "y");
    for (let i = 0; i < 50; i++) await c.getOrLoad(`big-${i}`, 60_000, async () => big(i));
    expect(c.mirror.chars).toBeLessThanOrEqual(4_000);
    expect(c.mirror.size).toBeLessThanOrEqual(20);
    expect(c.peek("big-49")).toBe(big(49));
  });

  it("drops expired entries rather than keeping them until they are looked at", async () => {
    const c = await cache({ maxEntries: 1_000, maxChars: 1_000_000 });
    await Promise.all(Array.from({ length: 200 }, (_, i) => c.getOrLoad(`short-${i}`, 1_000, async () => `v${i}`)));
    expect(c.mirror.size).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(c.entries()).toBe(0);
    // The next value stored sweeps what expired: only it is left.
    await c.getOrLoad("fresh", 60_000, async () => "v");
    expect(c.mirror.size).toBe(1);
    expect(c.mirror.chars).toBe(1);
    // An expired entry looked at is dropped too.
    await c.getOrLoad("short-again", 100, async () => "w");
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(c.peek("short-again")).toBeUndefined();
    expect(c.mirror.size).toBe(1);
  });
});

describe("RedisTtlCache's lock lease", () => {
  const leased = async (leaseMs: number, waitMs: number) => {
    const c = await RedisTtlCache.create({ url: REDIS_URL, keyPrefix: PREFIX, logger: silentLogger, leaseMs, waitMs });
    caches.push(c);
    return c;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a holder that dies mid-load is taken over after one lease: the waiter loads itself and answers", async () => {
    const key = `dies-${randomUUID()}`;
    const holder = await leased(300, 5_000);
    const waiter = await leased(300, 5_000);
    // The holder takes the lock and never finishes; then its process "dies": its Redis connection goes, renewals stop.
    void holder.getOrLoad(key, 60_000, () => new Promise<string>(() => {})).catch(() => {});
    await sleep(100);
    const admin = new Redis(REDIS_URL);
    expect(await admin.exists(`${PREFIX}${key}:lock`)).toBe(1);
    await holder.close();
    const started = performance.now();
    let loads = 0;
    const value = await waiter.getOrLoad(key, 60_000, async () => {
      loads++;
      return "taken over";
    });
    const waited = performance.now() - started;
    expect([value, loads]).toEqual(["taken over", 1]);
    // At most one lease (plus polls) of waiting, not the whole wait.
    expect(waited).toBeLessThan(1_500);
    expect(await admin.get(`${PREFIX}${key}`)).toBe("taken over");
    admin.disconnect();
  });

  it("a live holder renews its lease through a load several leases long: the others wait for its value", async () => {
    const key = `renews-${randomUUID()}`;
    const holder = await leased(200, 5_000);
    const waiter = await leased(200, 5_000);
    let loads = 0;
    const slow = holder.getOrLoad(key, 60_000, async () => {
      loads++;
      await sleep(1_000);
      return "the holder's";
    });
    await sleep(50);
    const waited = await waiter.getOrLoad(key, 60_000, async () => {
      loads++;
      return "a second read";
    });
    expect([await slow, waited, loads]).toEqual(["the holder's", "the holder's", 1]);
  });

  it("a waiter polling through a read far longer than its Redis budget waits for it: one read, no breaker opened", async () => {
    // A slow node (the red-team's 1.5-4.5 s per call): the waiter's polls add up past its budget of Redis time, though
    // each is quick. They charged that one budget, so it gave up on Redis, read itself and opened its breaker.
    const key = `slow-read-${randomUUID()}`;
    const options = { url: REDIS_URL, keyPrefix: PREFIX, logger: silentLogger, leaseMs: 1_500, waitMs: 6_000 };
    const holder = await RedisTtlCache.create(options);
    const waiter = await RedisTtlCache.create({ ...options, budgetMs: 200, pollMs: 1 });
    caches.push(holder, waiter);
    let loads = 0;
    const slow = holder.getOrLoad(key, 60_000, async () => {
      loads++;
      await sleep(2_500);
      return "the holder's";
    });
    await sleep(50);
    const waited = await waiter.getOrLoad(key, 60_000, async () => {
      loads++;
      return "a second read";
    });
    expect([await slow, waited, loads, waiter.breaker.open]).toEqual(["the holder's", "the holder's", 1, false]);
  });

  it("a lock left by a dead replica in Redis (never renewed) lapses and is taken, not answered as a failure", async () => {
    const key = `planted-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    await admin.set(`${PREFIX}${key}:lock`, "a dead replica's token", "PX", 400);
    const waiter = await leased(300, 3_000);
    expect(await waiter.getOrLoad(key, 60_000, async () => "read after the lapse")).toBe("read after the lapse");
    admin.disconnect();
  });
});

describe("RedisTtlCache with a slow Redis (every reply late, under the command timeout)", () => {
  const COMMAND_TIMEOUT_MS = 1_000;
  const ONE_WAY_MS = 450;
  const LOAD_MS = 100;
  const COOL_DOWN_MS = 300;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a load spends about one command timeout on Redis in all, not one per command, and answers right", async () => {
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: 6379 });
    const warnings: string[] = [];
    const c = await RedisTtlCache.create({
      url: proxy.url,
      keyPrefix: PREFIX,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      coolDownMs: COOL_DOWN_MS,
      logger: { ...silentLogger, warn: (_msg, fields) => warnings.push(String(fields?.reason)) },
    });
    caches.push(c);
    // Each command now takes ~900 ms: under the command timeout, so no single command fails.
    proxy.setDelay(ONE_WAY_MS);
    try {
      const started = performance.now();
      const value = await c.getOrLoad(`slow-${randomUUID()}`, 60_000, async () => {
        await sleep(LOAD_MS);
        return "computed";
      });
      const took = performance.now() - started;
      expect(value).toBe("computed");
      // The old cache made five sequential commands (read, lock, re-read, write, release): ~4.6 s here.
      expect(took).toBeLessThan(COMMAND_TIMEOUT_MS + LOAD_MS + 600);
      expect(warnings.join(" ")).toMatch(/Redis time/);

      // The load Redis failed opened the breaker: for the cool-down the next one skips Redis, answered at once.
      const skipped = performance.now();
      expect(await c.getOrLoad(`skipped-${randomUUID()}`, 60_000, async () => "computed")).toBe("computed");
      expect(performance.now() - skipped).toBeLessThan(100);
      expect(c.breaker.open).toBe(true);
      await sleep(COOL_DOWN_MS);

      // After it, a value another replica wrote is still found through the slow Redis within the same bound.
      const key = `slow-hit-${randomUUID()}`;
      const admin = new Redis(REDIS_URL);
      await admin.set(`${PREFIX}${key}`, "shared", "PX", 60_000);
      admin.disconnect();
      const t0 = performance.now();
      expect(await c.getOrLoad(key, 60_000, async () => "not read")).toBe("shared");
      expect(performance.now() - t0).toBeLessThan(COMMAND_TIMEOUT_MS + 300);
    } finally {
      proxy.setDelay(0);
      await proxy.stop();
    }
  });
});

describe("RedisTtlCache's Redis budget and a busy process", () => {
  it("an event loop held past the budget while a reply is in flight is not taken for a slow Redis", async () => {
    const key = `busy-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    await admin.set(`${PREFIX}${key}`, "shared", "PX", 60_000);
    admin.disconnect();
    const c = await RedisTtlCache.create({
      url: REDIS_URL,
      keyPrefix: PREFIX,
      commandTimeoutMs: 1_000,
      budgetMs: 200,
      logger: silentLogger,
    });
    caches.push(c);
    let loads = 0;
    const pending = c.getOrLoad(key, 60_000, async () => {
      loads++;
      return "computed here";
    });
    // A large ranking's JavaScript holds the loop longer than the budget while the read's reply arrives.
    const until = performance.now() + 400;
    while (performance.now() < until) {}
    expect([await pending, loads]).toEqual(["shared", 0]);
  });
});

describe("RedisTtlCache trusts no lifetime in Redis beyond its own", () => {
  const plain = async () => {
    const c = await RedisTtlCache.create({ url: REDIS_URL, keyPrefix: PREFIX, logger: silentLogger });
    caches.push(c);
    return c;
  };
  const backoff = { ms: 300, codeOf: () => "READ_FAILED" };

  it("a value whose PTTL is longer than the window asked for is read again and replaced", async () => {
    const key = `planted-value-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    await admin.set(`${PREFIX}${key}`, "planted", "PX", 31_536_000_000);
    const c = await plain();
    expect(await c.getOrLoad(key, 60_000, async () => "ours")).toBe("ours");
    expect(await admin.get(`${PREFIX}${key}`)).toBe("ours");
    expect(await admin.pttl(`${PREFIX}${key}`)).toBeLessThanOrEqual(60_000);
    admin.disconnect();
  });

  it("a value within the window is mirrored only for its PTTL: deleted from Redis, it is gone once that lapses", async () => {
    const key = `short-value-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    await admin.set(`${PREFIX}${key}`, "planted", "PX", 300);
    const c = await plain();
    expect(await c.getOrLoad(key, 60_000, async () => "ours")).toBe("planted");
    await admin.del(`${PREFIX}${key}`);
    await new Promise((r) => setTimeout(r, 350));
    expect(await c.getOrLoad(key, 60_000, async () => "ours")).toBe("ours");
    admin.disconnect();
  });

  it("a failure marker longer than the backoff is ignored; one within it is answered for its PTTL only", async () => {
    const key = `planted-fail-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    await admin.set(`${PREFIX}${key}:fail`, "PLANTED", "PX", 600_000);
    const c = await plain();
    expect(await c.getOrLoad(key, 60_000, async () => "read", backoff)).toBe("read");
    // Without a backoff the caller never shares failures, so a marker means nothing to it.
    const other = `no-backoff-${randomUUID()}`;
    await admin.set(`${PREFIX}${other}:fail`, "PLANTED", "PX", 100);
    expect(await c.getOrLoad(other, 60_000, async () => "read")).toBe("read");

    const short = `short-fail-${randomUUID()}`;
    await admin.set(`${PREFIX}${short}:fail`, "PLANTED", "PX", 200);
    await expect(c.getOrLoad(short, 60_000, async () => "read", backoff)).rejects.toThrow(/PLANTED/);
    await admin.del(`${PREFIX}${short}:fail`);
    await new Promise((r) => setTimeout(r, 250));
    expect(await c.getOrLoad(short, 60_000, async () => "read", backoff)).toBe("read");
    admin.disconnect();
  });
});

describe("RedisTtlCache waiting on a lock that never yields", () => {
  it("a lock kept alive by someone else for the whole wait is answered as a wait timeout, with a warning", async () => {
    const key = `kept-${randomUUID()}`;
    const admin = new Redis(REDIS_URL);
    const lockKey = `${PREFIX}${key}:lock`;
    await admin.set(lockKey, "someone else's token", "PX", 300);
    const renew = setInterval(() => void admin.pexpire(lockKey, 300), 100);
    const warnings: { msg: string; reason: string }[] = [];
    const c = await RedisTtlCache.create({
      url: REDIS_URL,
      keyPrefix: PREFIX,
      waitMs: 600,
      warning: "supply cache degraded",
      logger: { ...silentLogger, warn: (msg, fields) => warnings.push({ msg, reason: String(fields?.reason) }) },
    });
    caches.push(c);
    try {
      await expect(c.getOrLoad(key, 60_000, async () => "never read")).rejects.toThrow(/no shared value/);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toBe("supply cache degraded: a lock held past the wait");
      expect(warnings[0]!.reason).toContain(lockKey);
    } finally {
      clearInterval(renew);
      admin.disconnect();
    }
  });
});
