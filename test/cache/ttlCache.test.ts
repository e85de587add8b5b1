import { describe, expect, it } from "vitest";
import { MemoryTtlCache, RecentFailureError } from "../../api/cache/ttlCache";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

describe("MemoryTtlCache", () => {
  it("shares one load between concurrent misses and serves the value until the TTL ends", async () => {
    let now = 0;
    const cache = new MemoryTtlCache(() => now);
    let loads = 0;
    const gate = deferred<string>();
    const load = () => {
      loads++;
      return gate.promise;
    };
    const waiters = Array.from({ length: 50 }, () => cache.getOrLoad("k", 1000, load));
    expect(cache.peek("k")).toBeUndefined();
    gate.resolve("v1");
    expect(await Promise.all(waiters)).toEqual(Array(50).fill("v1"));
    expect(loads).toBe(1);

    now = 999;
    expect(cache.peek("k")).toBe("v1");
    expect(await cache.getOrLoad("k", 1000, async () => "v2")).toBe("v1");
    expect(cache.entries()).toBe(1);
    now = 1000;
    expect(cache.peek("k")).toBeUndefined();
    // An expired value still in the map is not an entry (the metrics' api_cache_entries).
    expect(cache.entries()).toBe(0);
    expect(await cache.getOrLoad("k", 1000, async () => "v2")).toBe("v2");
    expect(cache.entries()).toBe(1);
  });

  it("never caches a failure: every waiter gets it, the next call loads again", async () => {
    const cache = new MemoryTtlCache(() => 0);
    const gate = deferred<string>();
    let loads = 0;
    const load = () => {
      loads++;
      return gate.promise;
    };
    const waiters = Array.from({ length: 10 }, () => cache.getOrLoad("k", 1000, load).catch((e: Error) => e.message));
    gate.reject(new Error("boom"));
    expect(await Promise.all(waiters)).toEqual(Array(10).fill("boom"));
    expect(loads).toBe(1);
    expect(cache.peek("k")).toBeUndefined();
    expect(await cache.getOrLoad("k", 1000, async () => "ok")).toBe("ok");
    expect(cache.peek("k")).toBe("ok");
  });

  it("a failure remembered holds back loads with a backoff only: one without (asking no upstream) still loads", async () => {
    let now = 0;
    const cache = new MemoryTtlCache(() => now);
    const backoff = { ms: 2_000, codeOf: () => "DOWN" };
    await expect(cache.getOrLoad("k", 1000, () => Promise.reject(new Error("down")), backoff)).rejects.toThrow("down");
    await expect(cache.getOrLoad("k", 1000, async () => "never", backoff)).rejects.toBeInstanceOf(RecentFailureError);
    expect(await cache.getOrLoad("k", 1000, async () => "held")).toBe("held");
    expect(await cache.getOrLoad("k", 1000, async () => "never", backoff)).toBe("held");
    now = 1000;
    await expect(cache.getOrLoad("k", 1000, async () => "never", backoff)).rejects.toBeInstanceOf(RecentFailureError);
  });

  it("keeps keys apart and treats a synchronous throw like a failed load", async () => {
    const cache = new MemoryTtlCache(() => 0);
    await cache.getOrLoad("a", 1000, async () => "A");
    await expect(
      cache.getOrLoad("b", 1000, () => {
        throw new Error("sync");
      }),
    ).rejects.toThrow("sync");
    expect(cache.peek("a")).toBe("A");
    expect(cache.peek("b")).toBeUndefined();
  });
});
