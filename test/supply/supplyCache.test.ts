/**
 * The Redis-backed supply cache: two apps (two "replicas", each with its own Redis connection) over
 * one devnet make ONE upstream read per cache window between them, for both figures (one entry: api/supply/figures.ts);
 * failures never reach Redis as figures; a Redis that is down degrades to in-process caching without failing a request.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RedisTtlCache } from "../../api/cache/redisTtlCache";
import type { TtlCache } from "../../api/cache/ttlCache";
import { silentLogger } from "../../api/observability/logger";
import { TOTAL_LOCKED_CLAIM_CALLDATA, TOTAL_SUPPLY_CALLDATA } from "../../api/supply/reads";
import { supplyFiguresKey } from "../../api/supply/router";
import { createSupplyCache } from "../../api/supply/supplyCache";
import { formatWei2 } from "../../api/supply/wei";
import { chainSupplyAt } from "../support/chainTruth";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";
import { ethCallSelector } from "../support/rpcProxy";

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `test-supply-${process.pid}-${randomUUID().slice(0, 8)}:`;
const TTL_MS = 600;
const DEADLINE_MS = 1_000;
const BACKOFF_MS = 300;

let d: ReadsDevnet;
let admin: Redis;
const caches: TtlCache[] = [];

async function replica(prefix = PREFIX) {
  const cache = await createSupplyCache(
    { ...d.config, redisUrl: REDIS_URL },
    { keyPrefix: prefix, rpcTimeoutMs: DEADLINE_MS, failureBackoffMs: BACKOFF_MS, logger: silentLogger },
  );
  caches.push(cache);
  return d.app({
    logger: silentLogger,
    supply: {
      cache,
      ttlMs: TTL_MS,
      rpcTimeoutMs: DEADLINE_MS,
      failureBackoffMs: BACKOFF_MS,
    },
  });
}

async function get(a: Awaited<ReturnType<typeof replica>>, path: string) {
  const res = await a.request(path);
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const reads = () => ({
  blockNumber: d.proxy.count("eth_blockNumber"),
  totalSupply: d.proxy.calls.filter((c) => ethCallSelector(c.method, c.params) === TOTAL_SUPPLY_CALLDATA).length,
  totalLockedClaim: d.proxy.calls.filter((c) => ethCallSelector(c.method, c.params) === TOTAL_LOCKED_CLAIM_CALLDATA)
    .length,
});

const truth = async () => {
  const { total, circulating } = await chainSupplyAt(d);
  return { total: formatWei2(total), circulating: formatWei2(circulating) };
};

/** The one entry both routes answer from, as Redis names it. */
const figuresKey = () =>
  `${PREFIX}${supplyFiguresKey(d.config.chainId, d.deployment.addresses.AssetToken, d.deployment.addresses.VeLockNFT)}`;

/** The entry of one read of these figures: its block's hash, and its read time (Unix ms, when the read began). */
const entryOf = (block: bigint, total: string, circulating: string) =>
  new RegExp(
    `^${block} 0x[0-9a-f]{64} ${total.replace(".", "\\.")} ${circulating.replace(".", "\\.")} [1-9][0-9]* [1-9][0-9]*$`,
  );
const readAtOf = (entry: string | null) => Number(entry?.split(" ")[4]);
/** A block hash for entries planted by hand (well-formed; no block of the devnet has it), and a block timestamp. */
const H = `0x${"ab".repeat(32)}`;
const T = Math.floor(Date.now() / 1000);

async function ourKeys(): Promise<string[]> {
  return admin.keys(`${PREFIX}*`);
}

beforeAll(async () => {
  admin = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  d = await startReadsDevnet();
});
afterAll(async () => {
  for (const c of caches) await c.close();
  if (admin) {
    const keys = await admin.keys(`${PREFIX}*`);
    if (keys.length) await admin.del(...keys);
    admin.disconnect();
  }
  await d?.stop();
});
beforeEach(async () => {
  d.proxy.setFault(null);
  d.proxy.reset();
  const keys = await ourKeys();
  if (keys.length) await admin.del(...keys);
});

describe("Redis-shared supply cache", () => {
  it("two replicas make one upstream read per window between them, for both figures", async () => {
    const [a, b] = [await replica(), await replica()];
    const [cacheA, cacheB] = caches.slice(-2) as [RedisTtlCache, RedisTtlCache];
    const t = await truth();
    const before = Date.now();
    // A slow node makes the replicas' misses overlap for sure: one holds the lock, the other waits on the value.
    d.proxy.setFault({ kind: "delay", ms: 150 });
    const paths = ["/api/supply/total", "/api/supply/circulating", "/api/supply/total?format=bare"];
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => get(i % 2 ? a : b, paths[i % paths.length]!)),
    );
    for (const [i, r] of results.entries()) {
      expect(r.status).toBe(200);
      const path = paths[i % paths.length]!;
      const expected = path.includes("circulating") ? t.circulating : t.total;
      expect(path.includes("bare") ? r.text : JSON.parse(r.text).result).toBe(expected);
    }
    expect(reads()).toEqual({ blockNumber: 1, totalSupply: 1, totalLockedClaim: 1 });
    // The shared layer's counts (api_cache_*{cache="supply_shared"}): one replica read the entry upstream (a miss)
    // and the other took it from Redis (a hit).
    const shared = (x: RedisTtlCache) => [x.shared.hits, x.shared.misses];
    expect([shared(cacheA)[0]! + shared(cacheB)[0]!, shared(cacheA)[1]! + shared(cacheB)[1]!]).toEqual([1, 1]);

    // The shared entry lives in Redis with the window's TTL, both figures at one block; the lock is gone.
    const keys = (await ourKeys()).sort();
    expect(keys).toEqual([figuresKey()]);
    const { blockNumber } = await chainSupplyAt(d);
    const stored = await admin.get(figuresKey());
    expect(stored).toMatch(entryOf(blockNumber, t.total, t.circulating));
    // The read time is when the one read began: after the first request, before its answer.
    expect(readAtOf(stored)).toBeGreaterThanOrEqual(before);
    expect(readAtOf(stored)).toBeLessThanOrEqual(Date.now());
    expect(keys.every((k) => !k.endsWith(":lock"))).toBe(true);
    for (const k of keys) {
      const pttl = await admin.pttl(k);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(TTL_MS);
    }

    // A third replica that starts later in the same window reads Redis, not the node.
    d.proxy.setFault(null);
    const c = await replica();
    expect(JSON.parse((await get(c, "/api/supply/total")).text).result).toBe(t.total);
    expect(JSON.parse((await get(c, "/api/supply/circulating")).text).result).toBe(t.circulating);
    expect(reads().totalSupply).toBe(1);
    expect(shared(caches.at(-1) as RedisTtlCache)).toEqual([1, 0]);
    expect(caches.at(-1)!.entries()).toBe(1);

    // Next window: again exactly one read per value, whoever asks first.
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    d.proxy.reset();
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        get([a, b, c][i % 3]!, i % 2 ? "/api/supply/total" : "/api/supply/circulating"),
      ),
    );
    expect(reads()).toEqual({ blockNumber: 1, totalSupply: 1, totalLockedClaim: 1 });
  });

  it("a failed read is shared as a failure for the backoff only, never as a value; then both recover", async () => {
    const [a, b] = [await replica(), await replica()];
    d.proxy.setFault({ kind: "result", value: "0x", match: (m) => m === "eth_call" });
    for (const app of [a, b]) {
      const res = await get(app, "/api/supply/total?format=bare");
      expect([res.status, res.text, res.headers.get("x-supply-error")]).toEqual([
        502,
        "",
        "SUPPLY_RPC_INVALID_UINT256",
      ]);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    // One read for the cluster: the second replica answered the first one's failure without asking the node.
    expect(reads().totalSupply).toBe(1);
    // Redis holds only the failure marker, with the backoff as its lifetime; no value was written.
    const keys = await ourKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toBe(`${figuresKey()}:fail`);
    expect(await admin.get(keys[0]!)).toBe("SUPPLY_RPC_INVALID_UINT256");
    expect(await admin.pttl(keys[0]!)).toBeLessThanOrEqual(BACKOFF_MS);

    d.proxy.setFault(null);
    await new Promise((r) => setTimeout(r, BACKOFF_MS + 50));
    const t = await truth();
    expect(JSON.parse((await get(b, "/api/supply/total")).text).result).toBe(t.total);
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(t.total);
    expect(reads().totalSupply).toBe(2);
  });

  it("a waiting replica gets the holder's failure, not a hang: each answers within the deadline", async () => {
    const [a, b] = [await replica(), await replica()];
    d.proxy.setFault({ kind: "delay", ms: 5_000 });
    const started = performance.now();
    const [ra, rb] = await Promise.all([get(a, "/api/supply/circulating"), get(b, "/api/supply/circulating")]);
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS + 500);
    for (const r of [ra, rb]) {
      expect(r.status).toBe(502);
      expect(r.headers.get("x-supply-error")).toBe("SUPPLY_RPC_UNREACHABLE");
    }
    // One read between them: the waiter shared the holder's failure instead of starting a late read.
    expect(d.proxy.count("eth_blockNumber")).toBe(1);
    expect(
      (await ourKeys()).map((k) => k.slice(PREFIX.length).replace(/^supply:\d+:0x[0-9a-fA-F]+:0x[0-9a-fA-F]+:/, "")),
    ).toEqual(["figures-v5:fail"]);
    d.proxy.setFault(null);
    await new Promise((r) => setTimeout(r, BACKOFF_MS + 50));
    // The holder released its lock on failure, so recovery waits only for the backoff, not the lock.
    const t0 = performance.now();
    expect(JSON.parse((await get(b, "/api/supply/circulating")).text).result).toBe((await truth()).circulating);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it("a lock left by a replica that died mid-read lapses within its lease: the next replica reads and answers 200", async () => {
    // The dead replica's lock, as it is in Redis after its process went away: a token nobody renews.
    const key = figuresKey();
    await admin.set(`${key}:lock`, "a dead replica's token", "PX", 500);
    const a = await replica();
    const res = await get(a, "/api/supply/total");
    expect([res.status, JSON.parse(res.text).result]).toEqual([200, (await truth()).total]);
    expect(reads().totalSupply).toBe(1);
  });

  it("a malformed shared entry is never served: it is read again from the chain and replaced", async () => {
    const key = figuresKey();
    const t = await truth();
    const entry = entryOf((await chainSupplyAt(d)).blockNumber, t.total, t.circulating);
    const now = Date.now();
    // Each planted within the window's TTL, so only its form (not its lifetime) keeps it from being served.
    const planted = [
      "0x",
      // An older version's lone figure (its keys were named apart; here under ours by hand): not an entry.
      "12345.67",
      // The versions' entries before this one, without a read time, without the block's hash, or without the block's
      // timestamp (their keys were named apart too): no Age to count, no block to check, no reorg to tell from a lag.
      "1 100.00 90.00",
      `1 100.00 90.00 ${now}`,
      `1 ${H} 100.00 90.00 ${now}`,
      `1 0x${"ab".repeat(31)} 100.00 90.00 ${now} ${T}`,
      `1 0x${"AB".repeat(32)} 100.00 90.00 ${now} ${T}`,
      `1 ${H} 12.5 10.00 ${now} ${T}`,
      // A zero figure is never answered, so one in Redis (written by another version, or by hand) is not served either.
      `1 ${H} 0.00 0.00 ${now} ${T}`,
      `1 ${H} 100.00 0.00 ${now} ${T}`,
      // Never true at one block: circulating above total, the very pair this entry exists to rule out.
      `1 ${H} 100.00 100.01 ${now} ${T}`,
      `1 ${H} 100.00 SUPPLY_RPC_UNREACHABLE ${now} ${T}`,
      `1 ${H} 100.00 90.00 extra ${T}`,
      `1 ${H} 100.00 90.00 ${now}.5 ${T}`,
      `1 ${H} 100.00 90.00 -${now} ${T}`,
      `1 ${H} 100.00 90.00 ${now} ${T}.5`,
      `1 ${H} 100.00 90.00 ${now} -${T}`,
      `1 ${H} 100.00 90.00 ${now} ${T} extra`,
    ];
    for (const [i, value] of planted.entries()) {
      const app = await replica();
      await admin.set(key, value, "PX", TTL_MS);
      const path = i % 2 ? "/api/supply/circulating?format=bare" : "/api/supply/total?format=bare";
      expect([value, (await get(app, path)).text]).toEqual([value, i % 2 ? t.circulating : t.total]);
      expect([value, reads().totalSupply]).toEqual([value, i + 1]);
      expect(await admin.get(key)).toMatch(entry);
    }
  });

  it("an entry whose circulating half failed is served as such only within the failure backoff", async () => {
    const key = figuresKey();
    const t = await truth();
    // Kept longer than the backoff: not a write of this code with these settings, so read again.
    await admin.set(key, `1 ${H} 100.00 SUPPLY_INCONSISTENT ${Date.now()} ${T}`, "PX", TTL_MS);
    const a = await replica();
    expect((await get(a, "/api/supply/circulating?format=bare")).text).toBe(t.circulating);
    expect(reads().totalSupply).toBe(1);
    // Within it: the total of that read is served, circulating fails closed with the entry's code.
    await admin.set(key, `1 ${H} 100.00 SUPPLY_INCONSISTENT ${Date.now()} ${T}`, "PX", BACKOFF_MS);
    const b = await replica();
    expect((await get(b, "/api/supply/total?format=bare")).text).toBe("100.00");
    const circ = await get(b, "/api/supply/circulating?format=bare");
    expect([circ.status, circ.headers.get("x-supply-error")]).toEqual([502, "SUPPLY_INCONSISTENT"]);
    expect(reads().totalSupply).toBe(1);
  });

  it("locked ≥ total: the read's total is shared with circulating's failure, for the backoff only", async () => {
    const [a, b] = [await replica(), await replica()];
    const t = await truth();
    d.proxy.setFault({
      kind: "result",
      value: `0x${"ff".repeat(32)}`,
      match: (m, p) => ethCallSelector(m, p) === TOTAL_LOCKED_CLAIM_CALLDATA,
    });
    const circ = await get(a, "/api/supply/circulating?format=bare");
    expect([circ.status, circ.headers.get("x-supply-error")]).toEqual([502, "SUPPLY_INCONSISTENT"]);
    expect(await admin.get(figuresKey())).toMatch(
      new RegExp(` ${t.total.replace(".", "\\.")} SUPPLY_INCONSISTENT [0-9]+ [0-9]+$`),
    );
    expect(await admin.pttl(figuresKey())).toBeLessThanOrEqual(BACKOFF_MS);
    // The other replica answers both from that entry, reading nothing.
    expect((await get(b, "/api/supply/total?format=bare")).text).toBe(t.total);
    expect((await get(b, "/api/supply/circulating")).headers.get("x-supply-error")).toBe("SUPPLY_INCONSISTENT");
    expect(reads()).toEqual({ blockNumber: 1, totalSupply: 1, totalLockedClaim: 1 });
    d.proxy.setFault(null);
    await new Promise((r) => setTimeout(r, BACKOFF_MS + 50));
    expect((await get(b, "/api/supply/circulating?format=bare")).text).toBe(t.circulating);
  });

  it("an old replica's entries (the keys of the versions that cached the figures apart, without a read time, a hash or a block timestamp) are never read", async () => {
    // A rolling upgrade: old replicas keep writing their own keys; a new replica neither reads nor touches them.
    const { AssetToken, VeLockNFT } = d.deployment.addresses;
    const old = {
      total: `${PREFIX}supply:${d.config.chainId}:${AssetToken}:total`,
      circulating: `${PREFIX}supply:${d.config.chainId}:${AssetToken}:${VeLockNFT}:circulating`,
      figures: `${PREFIX}supply:${d.config.chainId}:${AssetToken}:${VeLockNFT}:figures`,
      v2: `${PREFIX}supply:${d.config.chainId}:${AssetToken}:${VeLockNFT}:figures-v2`,
      v3: `${PREFIX}supply:${d.config.chainId}:${AssetToken}:${VeLockNFT}:figures-v3`,
    };
    const v2 = `1 99999999.99 99999999.98 ${Date.now()}`;
    const v3 = `1 ${H} 99999999.99 99999999.98 ${Date.now()}`;
    await admin.set(old.v2, v2, "PX", TTL_MS);
    await admin.set(old.v3, v3, "PX", TTL_MS);
    await admin.set(old.total, "99999999.99", "PX", TTL_MS);
    await admin.set(old.circulating, "99999999.98", "PX", TTL_MS);
    await admin.set(old.figures, "1 99999999.99 99999999.98", "PX", TTL_MS);
    const t = await truth();
    const a = await replica();
    expect((await get(a, "/api/supply/total?format=bare")).text).toBe(t.total);
    expect((await get(a, "/api/supply/circulating?format=bare")).text).toBe(t.circulating);
    expect(await admin.mget(old.total, old.circulating, old.figures, old.v2, old.v3)).toEqual([
      "99999999.99",
      "99999999.98",
      "1 99999999.99 99999999.98",
      v2,
      v3,
    ]);
    expect([old.figures, old.v2, old.v3]).not.toContain(figuresKey());
  });

  it("an entry planted in Redis for longer than the window is not served: read from the chain, replaced, gone when deleted", async () => {
    const key = figuresKey();
    const t = await truth();
    const entry = entryOf((await chainSupplyAt(d)).blockNumber, t.total, t.circulating);
    // A well-formed entry with a year's TTL (a foreign writer, an old dump restored): not a write of this window.
    await admin.set(key, `1 ${H} 99999999.99 99999999.98 ${Date.now()} ${T}`, "PX", 31_536_000_000);
    const [a, b] = [await replica(), await replica()];
    for (const app of [a, b]) {
      const res = await get(app, "/api/supply/total?format=bare");
      expect([res.status, res.text]).toEqual([200, t.total]);
    }
    expect(reads().totalSupply).toBe(1);
    expect(await admin.get(key)).toMatch(entry);
    expect(await admin.pttl(key)).toBeLessThanOrEqual(TTL_MS);

    // One planted within the window is served (nothing tells it from ours), but no longer than its own PTTL: deleted
    // from Redis, it is gone from every replica once that lapses.
    await new Promise((r) => setTimeout(r, TTL_MS + 50));
    await admin.set(key, `1 ${H} 99999999.99 99999999.98 ${Date.now()} ${T}`, "PX", 200);
    const c = await replica();
    expect((await get(c, "/api/supply/total?format=bare")).text).toBe("99999999.99");
    expect((await get(c, "/api/supply/circulating?format=bare")).text).toBe("99999999.98");
    await admin.del(key);
    await new Promise((r) => setTimeout(r, 250));
    expect((await get(c, "/api/supply/total?format=bare")).text).toBe(t.total);
  });

  it("a failure marker planted for longer than the backoff is not answered; one within it lasts only its PTTL", async () => {
    const key = figuresKey();
    const t = await truth();
    await admin.set(`${key}:fail`, "SUPPLY_RPC_UNREACHABLE", "PX", 600_000);
    const a = await replica();
    expect((await get(a, "/api/supply/total?format=bare")).text).toBe(t.total);

    await admin.del(key);
    const b = await replica();
    await admin.set(`${key}:fail`, "SUPPLY_RPC_UNREACHABLE", "PX", BACKOFF_MS);
    const failed = await get(b, "/api/supply/total?format=bare");
    expect([failed.status, failed.headers.get("x-supply-error")]).toEqual([502, "SUPPLY_RPC_UNREACHABLE"]);
    await admin.del(`${key}:fail`);
    await new Promise((r) => setTimeout(r, BACKOFF_MS + 50));
    expect((await get(b, "/api/supply/total?format=bare")).text).toBe(t.total);
  });

  it("replicas with different key prefixes do not share", async () => {
    const a = await replica();
    const other = await replica(`${PREFIX}other:`);
    await get(a, "/api/supply/total");
    await get(other, "/api/supply/total");
    expect(reads().totalSupply).toBe(2);
  });

  it("Redis down: figures still served and cached in-process", async () => {
    const warnings: string[] = [];
    const cache = await RedisTtlCache.create({
      url: "redis://127.0.0.1:1",
      keyPrefix: PREFIX,
      connectTimeoutMs: 300,
      logger: { ...silentLogger, warn: (_msg, fields) => warnings.push(String(fields?.reason)) },
    });
    caches.push(cache);
    const a = d.app({ logger: silentLogger, supply: { cache, ttlMs: TTL_MS } });
    const t = await truth();
    const started = performance.now();
    expect(JSON.parse((await get(a, "/api/supply/total")).text).result).toBe(t.total);
    expect(performance.now() - started).toBeLessThan(1_000);
    await get(a, "/api/supply/total");
    expect(reads().totalSupply).toBe(1);
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.join(" ")).not.toMatch(/redis:\/\//);
  });

  it("createSupplyCache picks Redis when REDIS_URL is set, memory otherwise", async () => {
    const memory = await createSupplyCache({ ...d.config, redisUrl: null });
    expect(memory.kind).toBe("memory");
    const shared = await createSupplyCache({ ...d.config, redisUrl: REDIS_URL }, { keyPrefix: PREFIX });
    caches.push(shared);
    expect(shared.kind).toBe("redis");
  });
});
