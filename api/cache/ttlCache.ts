/**
 * A TTL cache of string values with single-flight loading: concurrent misses of one key share one
 * load, a failed load is never cached (every waiter gets the failure, the next call loads again).
 * Two implementations: MemoryTtlCache (one process) and RedisTtlCache (shared by replicas).
 */
import type { CacheStats } from "./stats";

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
  /**
   * The fresh value, else the result of one shared `load()` kept for `ttlMs`. Rejects with load's error.
   * With `backoff`, a failed load is remembered for `backoff.ms` under its code: until then every call
   * rejects at once with RecentFailureError (no load), so a failing upstream is asked about once per interval.
   */
  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>, backoff?: Backoff): Promise<string>;
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

/**
 * The in-process cache. Keys are a small fixed set chosen by the code (never by a request), so the
 * map cannot grow without bound; an expired entry is replaced by the next load.
 */
export class MemoryTtlCache implements TtlCache {
  readonly kind: "memory" | "redis" = "memory";
  readonly #entries = new Map<string, { value: string; expiresAt: number }>();
  readonly #flights = new Map<string, Promise<string>>();
  readonly #failures = new Map<string, { code: string; until: number }>();
  readonly #now: () => number;

  /** `now` is a monotonic millisecond clock, injectable for tests. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  peek(key: string): string | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && this.#now() < entry.expiresAt ? entry.value : undefined;
  }

  entries(): number {
    const now = this.#now();
    let fresh = 0;
    for (const entry of this.#entries.values()) if (now < entry.expiresAt) fresh++;
    return fresh;
  }

  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>, backoff?: Backoff): Promise<string> {
    return this.getOrLoadTimed(key, async () => ({ value: await load(), ttlMs }), backoff);
  }

  /**
   * Like getOrLoad, but the loader says how long its value stays fresh. A loader that rejects with
   * RecentFailureError (a failure another replica remembered) is remembered for that error's remaining time.
   */
  getOrLoadTimed(key: string, load: () => Promise<Timed>, backoff?: Backoff): Promise<string> {
    const hit = this.peek(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const failed = this.#failures.get(key);
    if (failed !== undefined) {
      const left = failed.until - this.#now();
      if (left > 0) return Promise.reject(new RecentFailureError(failed.code, left));
      this.#failures.delete(key);
    }
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      flight = (async () => {
        try {
          const { value, ttlMs } = await load();
          if (ttlMs > 0) this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
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

  /** Drops every entry (in-flight loads still finish and store). */
  clear(): void {
    this.#entries.clear();
    this.#failures.clear();
  }

  async close(): Promise<void> {
    this.#entries.clear();
    this.#failures.clear();
  }
}
