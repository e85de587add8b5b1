import { describe, expect, it } from "vitest";
import { LIMITED_PREFIXES, limitedPrefix, rateLimitHeaders } from "../../api/http/rateLimit";
import { decide, MemoryRateLimiter } from "../../api/ratelimit/limiter";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("MemoryRateLimiter", () => {
  it("admits exactly max per window per key, then refuses with the time left", () => {
    const t = clock();
    const l = new MemoryRateLimiter({ max: 5, windowSec: 60, now: t.now });
    const first = [1, 2, 3, 4, 5].map(() => l.hitNow("a"));
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(first.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    t.advance(20_500);
    const refused = l.hitNow("a");
    expect(refused).toEqual({ allowed: false, limit: 5, remaining: 0, resetSec: 40, store: "memory" });
    // Another key has its own budget.
    expect(l.hitNow("b").remaining).toBe(4);
  });

  it("opens a fresh window once the old one has run out (anchored at the key's first hit)", () => {
    const t = clock();
    const l = new MemoryRateLimiter({ max: 2, windowSec: 10, now: t.now });
    l.hitNow("a");
    l.hitNow("a");
    expect(l.hitNow("a").allowed).toBe(false);
    t.advance(9_999);
    expect(l.hitNow("a").allowed).toBe(false);
    t.advance(1);
    const fresh = l.hitNow("a");
    expect(fresh).toMatchObject({ allowed: true, remaining: 1, resetSec: 10 });
  });

  it("forgets expired keys, so memory is bounded by the keys active in one window", () => {
    const t = clock();
    const l = new MemoryRateLimiter({ max: 3, windowSec: 1, now: t.now });
    for (let i = 0; i < 1000; i++) l.hitNow(`k${i}`);
    expect(l.size).toBe(1000);
    t.advance(500);
    for (let i = 0; i < 10; i++) l.hitNow(`late${i}`);
    expect(l.size).toBe(1010);
    t.advance(600); // the first 1000 have expired, the late ten have not
    l.hitNow("x");
    expect(l.size).toBe(11);
  });

  it("caps the number of tracked keys, dropping the oldest window first", () => {
    const t = clock();
    const l = new MemoryRateLimiter({ max: 1, windowSec: 60, maxKeys: 3, now: t.now });
    for (const k of ["a", "b", "c", "d"]) {
      l.hitNow(k);
      t.advance(1);
    }
    expect(l.size).toBe(3);
    // "a" was forgotten (fresh budget), "b" was not.
    expect(l.hitNow("a").allowed).toBe(true);
    expect(l.hitNow("c").allowed).toBe(false);
  });

  it("decide never reports a negative remaining or a zero reset", () => {
    expect(decide(900, 1, { max: 300, windowSec: 60 }, "redis")).toEqual({
      allowed: false,
      limit: 300,
      remaining: 0,
      resetSec: 1,
      store: "redis",
    });
    expect(decide(300, 59_001, { max: 300, windowSec: 60 }, "memory")).toMatchObject({ allowed: true, resetSec: 60 });
  });
});

describe("limited prefixes", () => {
  it.each([
    ["/api/mcp/v1/state/0x0000000000000000000000000000000000000001", "state"],
    ["/api/mcp/v1/state", "state"],
    ["/api/mcp/v1/preflight", "preflight"],
    ["/api/mcp/v1/quote/lock-via-furnace", "quote"],
    ["/api/mcp/v1/prepare/collect-all", "prepare"],
    ["/api/mcp/v1/prepare/no-such-action", "prepare"],
  ])("%s counts against %s", (path, prefix) => {
    expect(limitedPrefix(path)).toBe(prefix);
  });

  it.each([
    "/api/supply/total",
    "/api/supply/circulating",
    "/api/supply/max",
    "/api/mcp/v1/openapi.json",
    "/api/mcp/v1/",
    "/api/mcp/v1/preflightx",
    "/api/mcp/v1/states/x",
    "/api/mcp/v2/state/x",
    "/api/metrics",
    "/state/x",
  ])("%s is not limited", (path) => {
    expect(limitedPrefix(path)).toBeNull();
  });

  it("has exactly the four prefixes of design.md, and the index API's own", () => {
    expect([...LIMITED_PREFIXES]).toEqual(["state", "preflight", "quote", "prepare", "index"]);
  });

  it("formats the draft-10 structured fields with one named policy per prefix", () => {
    const h = rateLimitHeaders(
      "quote",
      { max: 300, windowSec: 60 },
      { allowed: true, limit: 300, remaining: 12, resetSec: 7, store: "memory" },
    );
    expect(h).toEqual({ "ratelimit-policy": '"quote";q=300;w=60', ratelimit: '"quote";r=12;t=7' });
  });
});

describe("decide", () => {
  it("a fresh window on a fractional monotonic clock reports exactly its length (no float round-up to t=61)", () => {
    // (now + 60000) − now for a fractional `now` is not always 60000 in floating point.
    const now = 80166.84774037653;
    const ttl = now + 60_000 - now;
    expect(ttl).toBeGreaterThan(60_000);
    expect(decide(1, ttl, { max: 300, windowSec: 60 }, "memory").resetSec).toBe(60);
  });
});
