/**
 * A TTL cache of string values with single-flight loading: concurrent misses of one key share one
 * load, a failed load is never cached (every waiter gets the failure, the next call loads again).
 * Two implementations: MemoryTtlCache (one process) and RedisTtlCache (shared by replicas).
 */

import type { CacheStats } from "../observability/cacheStats";
import { BoundedMap } from "./boundedMap";

export interface TtlCache {
  readonly kind: "memory" | "redis";
  /** The fresh value of `key`, synchronously, or undefined: the hot path of a cache hit. */
  peek(key: string): string | undefined;
  /** How many fresh values this process holds now (for the metrics; not a hot path). */
  entries(): number;
  /**
   * A cache shared by replicas: hits (the value came from another replica's read) and misses (this replica read
   * it upstream) of the shared layer behind this process's own.
   */
  readonly shared?: CacheStats;
  /** A cache shared through Redis: whether this process skips Redis now (api/cache/redisBreaker.ts). */
  readonly breaker?: { readonly open: boolean };
  /**
   * The fresh value, else the result of one shared `load()` kept for `ttlMs`. Rejects with load's error.
   * With `backoff`, a failed load is remembered for `backoff.ms` under its code: until then every call with a backoff
   * rejects at once with RecentFailureError (no load), so a failing upstream is asked about once per interval; a call
   * without one neither looks at nor remembers a failure.
   */
  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>, backoff?: Backoff): Promise<string>;
  /**
   * Like getOrLoad, but the loader says how long its value is kept, at most `ttlMs` (which also bounds what is taken
   * from a shared cache): the supply figures keep an entry whose circulating half failed only for the failure backoff.
   */
  getOrLoadTimed(key: string, ttlMs: number, load: () => Promise<Timed>, backoff?: Backoff): Promise<string>;
  /**
   * Drops `value` of `key` (found wrong after it was cached: the supply figures of a block reorged away), here and in a
   * shared cache, unless the key holds another value by now; the next call loads again.
   */
  invalidate(key: string, value: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a failed load is remembered, and the code it is remembered under (what the caller answers). */
export type Backoff = { ms: number; codeOf: (error: unknown) => string };

/** A load of this key failed within the backoff interval; nothing was read. `code` is the failure's. */
export class RecentFailureError extends Error {
  override name = "RecentFailureError";
  constructor(
    readonly code: string,
    /** How long the failure is still remembered. */
    readonly retryInMs: number,
  ) {
    super(`the last read failed (${code}); not read again for ${Math.ceil(retryInMs)} ms`);
  }
}

/** A loaded value and how long it may still be served (a shared cache may hand back a partly used window). */
export type Timed = { value: string; ttlMs: number };

/** Bounds of an in-process cache: a request may choose its keys (a past block), so entries and bytes are capped. */
export type MemoryTtlCacheOptions = {
  /** At most this many values (default 1,000); past it the least recently used goes. */
  maxEntries?: number;
  /** At most this many UTF-16 code units of values in all (default 32 Mi: 64 MB); past it the least recently used go. */
  maxChars?: number;
  /** A monotonic millisecond clock, injectable for tests. */
  now?: () => number;
};

const DEFAULT_MAX_ENTRIES = 1_000;
const DEFAULT_MAX_CHARS = 32 * 1024 * 1024;

/**
 * The in-process cache. Its keys may be chosen by a request (the mirror of the shared index answers is keyed by
 * block), so it holds at most `maxEntries` values and `maxChars` of them, least recently used out first, and an
 * expired value is dropped when it is next looked at or when a sweep (once the earliest expiry has passed, at a set)
 * finds it. Remembered failures are bounded by the same entry count.
 */
export class MemoryTtlCache implements TtlCache {
  readonly kind: "memory" | "redis" = "memory";
  readonly maxEntries: number;
  readonly maxChars: number;
  readonly #entries: BoundedMap<string, { value: string; expiresAt: number }>;
  readonly #flights = new Map<string, Promise<string>>();
  readonly #failures: BoundedMap<string, { code: string; until: number }>;
  readonly #now: () => number;
  #chars = 0;
  /** No entry expires before this: a sweep before it would find nothing. */
  #sweepAt = Number.POSITIVE_INFINITY;

  /** `options` may be the clock alone (tests). */
  constructor(options: MemoryTtlCacheOptions | (() => number) = {}) {
    const o = typeof options === "function" ? { now: options } : options;
    this.#now = o.now ?? (() => performance.now());
    this.maxEntries = o.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxChars = o.maxChars ?? DEFAULT_MAX_CHARS;
    this.#entries = new BoundedMap(this.maxEntries, "recency");
    this.#failures = new BoundedMap(this.maxEntries, "insertion");
  }

  /** How many values the map holds now, expired or not (what memory holds; tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** How many UTF-16 code units of values the map holds now. */
  get chars(): number {
    return this.#chars;
  }

  #delete(key: string): void {
    const entry = this.#entries.peek(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#chars -= entry.value.length;
  }

  #sweep(now: number): void {
    if (now < this.#sweepAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, entry] of this.#entries) {
      if (now >= entry.expiresAt) this.#delete(key);
      else if (entry.expiresAt < next) next = entry.expiresAt;
    }
    for (const [key, failure] of this.#failures) if (now >= failure.until) this.#failures.delete(key);
    this.#sweepAt = next;
  }

  #set(key: string, value: string, expiresAt: number): void {
    this.#delete(key);
    // A value larger than the whole budget is served to its waiters but not kept.
    if (value.length > this.maxChars) return;
    this.#sweep(this.#now());
    // Evicted here, not by the map, so the byte count stays exact: least recently used first.
    for (const [oldest] of this.#entries) {
      if (this.#entries.size < this.maxEntries && this.#chars + value.length <= this.maxChars) break;
      this.#delete(oldest);
    }
    this.#entries.set(key, { value, expiresAt });
    this.#chars += value.length;
    if (expiresAt < this.#sweepAt) this.#sweepAt = expiresAt;
  }

  peek(key: string): string | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#now() < entry.expiresAt) return entry.value;
    this.#delete(key);
    return undefined;
  }

  entries(): number {
    const now = this.#now();
    let fresh = 0;
    for (const [, entry] of this.#entries) if (now < entry.expiresAt) fresh++;
    return fresh;
  }

  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>, backoff?: Backoff): Promise<string> {
    return this.getOrLoadTimed(key, ttlMs, async () => ({ value: await load(), ttlMs }), backoff);
  }

  /**
   * Like getOrLoad, but the loader says how long its value stays fresh (at most `ttlMs`). A loader that rejects with
   * RecentFailureError (a failure another replica remembered) is remembered for that error's remaining time.
   */
  getOrLoadTimed(key: string, ttlMs: number, load: () => Promise<Timed>, backoff?: Backoff): Promise<string> {
    const hit = this.peek(key);
    if (hit !== undefined) return Promise.resolve(hit);
    // Only a load with a backoff is held back by a failure remembered, as in a shared cache (redisTtlCache.ts): one
    // without asks no upstream that failed (the supply figures a process holds, written back: api/supply/router.ts).
    const failed = backoff === undefined ? undefined : this.#failures.get(key);
    if (failed !== undefined) {
      const left = failed.until - this.#now();
      if (left > 0) return Promise.reject(new RecentFailureError(failed.code, left));
      this.#failures.delete(key);
    }
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      flight = (async () => {
        try {
          const loaded = await load();
          const keepMs = Math.min(loaded.ttlMs, ttlMs);
          if (keepMs > 0) this.#set(key, loaded.value, this.#now() + keepMs);
          const value = loaded.value;
          return value;
        } catch (error) {
          if (backoff !== undefined) {
            const [code, ms] =
              error instanceof RecentFailureError ? [error.code, error.retryInMs] : [backoff.codeOf(error), backoff.ms];
            if (ms > 0) this.#failures.set(key, { code, until: this.#now() + ms });
          }
          throw error;
        } finally {
          this.#flights.delete(key);
        }
      })();
      this.#flights.set(key, flight);
    }
    return flight;
  }

  async invalidate(key: string, value: string): Promise<void> {
    if (this.#entries.peek(key)?.value === value) this.#delete(key);
  }

  /** Drops every entry (in-flight loads still finish and store). */
  clear(): void {
    this.#entries.clear();
    this.#failures.clear();
    this.#chars = 0;
    this.#sweepAt = Number.POSITIVE_INFINITY;
  }

  async close(): Promise<void> {
    this.clear();
  }
}
