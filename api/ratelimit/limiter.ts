/**
 * Fixed-window request counters, one window per key, anchored at the key's first request.
 *
 * Why fixed windows: one atomic INCR (+ PEXPIRE on the first hit) is the whole Redis protocol, so the
 * count is exact under any concurrency and across replicas, and memory is one integer per active key.
 * The known cost is a burst of up to 2× the limit across a window boundary, which the spec's
 * "300 requests per minute" does not forbid. Anchoring at the first hit (not the wall clock) spreads
 * resets out instead of releasing every client at the top of the minute.
 */

import { BoundedMap } from "../cache/boundedMap";

export type RateLimitDecision = {
  allowed: boolean;
  limit: number;
  /** Requests left in this window after this one (never negative). */
  remaining: number;
  /** Whole seconds until the window resets (≥ 1 while a window is open). */
  resetSec: number;
  /** Which store decided: the shared one, or this process (the default, or a fallback). */
  store: "memory" | "redis";
};

export interface RateLimiter {
  /**
   * Counts `cost` (default 1) against `key` and decides. Never rejects and never waits on a dead store.
   * A cost above 1 is one request that carries several messages (an MCP batch).
   */
  hit(key: string, cost?: number): Promise<RateLimitDecision>;
  /** Releases connections (a no-op for the in-memory limiter). */
  close(): Promise<void>;
}

export type RateLimitPolicy = { max: number; windowSec: number };

export function decide(count: number, ttlMs: number, policy: RateLimitPolicy, store: RateLimitDecision["store"]) {
  return {
    allowed: count <= policy.max,
    limit: policy.max,
    remaining: Math.max(0, policy.max - count),
    // Whole milliseconds first: with performance.now()'s fractional clock, (now + 60000) − now can come out as
    // 60000.000000007, which would round a fresh 60 s window up to t=61.
    resetSec: Math.max(1, Math.ceil(Math.round(ttlMs) / 1000)),
    store,
  } satisfies RateLimitDecision;
}

export type MemoryRateLimiterOptions = RateLimitPolicy & {
  /** Hard cap on tracked keys; past it the oldest window is forgotten (that client starts afresh). */
  maxKeys?: number;
  now?: () => number;
};

/**
 * In-process counters. Every window has the same length and a key's entry is re-inserted when its
 * window restarts, so Map order is expiry order: dropping expired keys is a walk from the front that
 * stops at the first live one — O(expired) per hit, and memory is bounded by the keys active within
 * one window (and by `maxKeys`).
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #windows: BoundedMap<string, { count: number; resetAt: number }>;
  readonly #policy: RateLimitPolicy;
  readonly #now: () => number;

  constructor(options: MemoryRateLimiterOptions) {
    this.#policy = { max: options.max, windowSec: options.windowSec };
    this.#windows = new BoundedMap(options.maxKeys ?? 100_000);
    // Monotonic, so a wall-clock step never reorders or resurrects windows.
    this.#now = options.now ?? (() => performance.now());
  }

  /** Synchronous core, shared with the Redis limiter's fallback path. */
  hitNow(key: string, cost = 1): RateLimitDecision {
    const now = this.#now();
    this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      this.#windows.delete(key);
      window = { count: 0, resetAt: now + this.#policy.windowSec * 1000 };
      this.#windows.set(key, window);
    }
    window.count += cost;
    return decide(window.count, window.resetAt - now, this.#policy, "memory");
  }

  async hit(key: string, cost = 1): Promise<RateLimitDecision> {
    return this.hitNow(key, cost);
  }

  /** Keys currently tracked (for tests of the memory bound). */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) {
      if (window.resetAt > now) return;
      this.#windows.delete(key);
    }
  }

  async close(): Promise<void> {}
}
