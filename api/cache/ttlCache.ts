/**
 * A TTL cache of string values with single-flight loading: concurrent misses of one key share one
 * load, a failed load is never cached (every waiter gets the failure, the next call loads again).
 * Two implementations: MemoryTtlCache (one process) and RedisTtlCache (shared by replicas).
 */
export interface TtlCache {
  readonly kind: "memory" | "redis";
  /** The fresh value of `key`, synchronously, or undefined: the hot path of a cache hit. */
  peek(key: string): string | undefined;
  /** The fresh value, else the result of one shared `load()` kept for `ttlMs`. Rejects with load's error. */
  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>): Promise<string>;
  close(): Promise<void>;
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
  readonly #now: () => number;

  /** `now` is a monotonic millisecond clock, injectable for tests. */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  peek(key: string): string | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && this.#now() < entry.expiresAt ? entry.value : undefined;
  }

  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>): Promise<string> {
    return this.getOrLoadTimed(key, async () => ({ value: await load(), ttlMs }));
  }

  /** Like getOrLoad, but the loader says how long its value stays fresh. */
  getOrLoadTimed(key: string, load: () => Promise<Timed>): Promise<string> {
    const hit = this.peek(key);
    if (hit !== undefined) return Promise.resolve(hit);
    let flight = this.#flights.get(key);
    if (flight === undefined) {
      flight = (async () => {
        try {
          const { value, ttlMs } = await load();
          if (ttlMs > 0) this.#entries.set(key, { value, expiresAt: this.#now() + ttlMs });
          return value;
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
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }
}
