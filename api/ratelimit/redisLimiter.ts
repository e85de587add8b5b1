/**
 * The shared limiter: one Lua script per request (INCR, and PEXPIRE when the window is new), so the
 * count is atomic in Redis and the limit holds across every replica that shares the server.
 *
 * When Redis fails (refused, reset, slow), this replica FAILS OPEN TO ITS OWN IN-PROCESS LIMITER: the
 * request is decided by a MemoryRateLimiter with the same policy, a warning is logged when an outage begins (a
 * Redis that keeps failing and recovering writes at most one more line a minute, with a count: throttledWarnings)
 * and `api_rate_limit_store_fallback_total` counts every such decision. A replica therefore never
 * answers 500 or hangs because of Redis, and a client still meets a limit (per replica, so at most
 * replicas × max during the outage). After a failure Redis is left alone for `retryAfterMs`, so an
 * outage costs at most one stall deadline (200 ms) per replica per second, not one per request.
 * Until Redis first answers after start-up (`bootGraceMs`), local decisions are not reported as an outage.
 */
import type { Redis } from "ioredis";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { type ThrottledWarn, throttledWarnings, WARNING_WINDOW_MS } from "../observability/throttle";
import { decide, MemoryRateLimiter, type RateLimitDecision, type RateLimiter, type RateLimitPolicy } from "./limiter";

// Returns { count, ttlMs }. A key without a TTL (never expected) gets one, so no key can live forever.
const HIT_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { n, ttl }
`;

type HitCommand = { rateLimitHit(key: string, windowMs: number, cost: number): Promise<[number, number]> };

/** Silence from Redis (no reply to anything) for this long while a decision waits = Redis is stuck. */
export const DEFAULT_REDIS_STALL_MS = 200;
/** No decision waits on Redis longer than this, even while it still answers other calls. */
export const DEFAULT_REDIS_MAX_WAIT_MS = 5_000;

/** A replica that has not reached Redis yet this long after start decides locally without a warning. */
export const DEFAULT_BOOT_GRACE_MS = 2_000;

class StoreTimeoutError extends Error {
  override name = "StoreTimeoutError";
}

export type RedisRateLimiterOptions = RateLimitPolicy & {
  redis: Redis;
  /** Namespaces the keys (tests use a unique one per run). Default "ratelimit:". */
  keyPrefix?: string;
  /** Close the client on close() (true when the limiter created it). */
  ownsClient?: boolean;
  /** Redis counts as stuck after this long without any reply while a decision waits. Default 200. */
  stallMs?: number;
  /** Hard bound on one decision's wait for Redis, even while it answers other calls. Default 5000. */
  maxWaitMs?: number;
  /** Until Redis first answers, failures within this long after creation are not an outage. Default 2000. */
  bootGraceMs?: number;
  /** After a failure, decide locally for this long before trying Redis again. Default 1000. */
  retryAfterMs?: number;
  /**
   * Outages begun within this long of the last warning are counted into one line at its end, and "recovered" is
   * logged at most once per this long: a flapping Redis is not a line per flap. Default WARNING_WINDOW_MS (60 s).
   */
  warningWindowMs?: number;
  logger: Logger;
  metrics: Metrics;
};

export class RedisRateLimiter implements RateLimiter {
  readonly #o: RedisRateLimiterOptions;
  readonly #fallback: MemoryRateLimiter;
  readonly #prefix: string;
  #skipUntil = 0;
  #healthy = true;
  #lastReply = 0;
  #droppedAt = Number.NEGATIVE_INFINITY;
  #everAnswered = false;
  readonly #createdAt = performance.now();
  readonly #warn: ThrottledWarn & { flush(): void };
  #recoveredLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(options: RedisRateLimiterOptions) {
    this.#o = options;
    this.#prefix = options.keyPrefix ?? "ratelimit:";
    this.#fallback = new MemoryRateLimiter({ max: options.max, windowSec: options.windowSec });
    this.#warn = throttledWarnings(options.logger, this.#window);
    options.redis.defineCommand("rateLimitHit", { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  async hit(key: string, cost = 1): Promise<RateLimitDecision> {
    if (performance.now() < this.#skipUntil) return this.#local(key, "skipped", cost);
    try {
      const [count, ttlMs] = await this.#send(this.#prefix + key, cost);
      this.#everAnswered = true;
      if (!this.#healthy) {
        this.#healthy = true;
        const now = performance.now();
        if (now - this.#recoveredLoggedAt >= this.#window) {
          this.#recoveredLoggedAt = now;
          this.#o.logger.info("rate-limit store recovered; limits are shared again");
        }
      }
      return decide(Number(count), Number(ttlMs), this.#o, "redis");
    } catch (error) {
      const now = performance.now();
      // The first connection is still being dialled: not an outage worth a warning (yet).
      if (!this.#everAnswered && now - this.#createdAt < (this.#o.bootGraceMs ?? DEFAULT_BOOT_GRACE_MS))
        return this.#local(key, "connecting", cost);
      this.#skipUntil = now + (this.#o.retryAfterMs ?? 1_000);
      const reason = error instanceof StoreTimeoutError ? "timeout" : "error";
      if (this.#healthy) {
        this.#healthy = false;
        this.#warn("rate-limit-store", "rate-limit store unavailable; this replica falls back to in-process limits", {
          reason,
          error,
        });
      }
      return this.#local(key, reason, cost);
    }
  }

  /**
   * One script call with a stall deadline. The deadline measures Redis's silence, not our wait: while
   * replies to other calls keep arriving (a burst queued behind us), the call is still progressing.
   * Timers are checked from setImmediate, i.e. after the event loop has read the socket, so a loop
   * that was merely busy does not mistake unread replies for a dead server.
   */
  #send(key: string, cost: number): Promise<[number, number]> {
    const stallMs = this.#o.stallMs ?? DEFAULT_REDIS_STALL_MS;
    const maxWaitMs = this.#o.maxWaitMs ?? DEFAULT_REDIS_MAX_WAIT_MS;
    const started = performance.now();
    const command = (this.#o.redis as unknown as HitCommand).rateLimitHit(key, this.#o.windowSec * 1000, cost);
    return new Promise((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      const settle = (f: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        f();
      };
      const arm = (ms: number) => {
        timer = setTimeout(() => setImmediate(check), ms);
      };
      const check = () => {
        if (done) return;
        const now = performance.now();
        const quiet = now - Math.max(this.#lastReply, started);
        if (quiet < stallMs && now - started < maxWaitMs)
          return arm(Math.min(stallMs - quiet, maxWaitMs - (now - started)));
        settle(() => reject(new StoreTimeoutError(`rate-limit store silent for ${Math.round(quiet)} ms`)));
        // Drop the stuck connection (once, however many calls noticed) so its queued calls fail now
        // and a fresh one is dialled.
        if (quiet >= stallMs && now - this.#droppedAt > stallMs) {
          this.#droppedAt = now;
          this.#o.redis.disconnect(true);
        }
      };
      arm(Math.min(stallMs, maxWaitMs));
      command.then(
        (value) => {
          this.#lastReply = performance.now();
          settle(() => resolve(value));
        },
        (error: Error) => settle(() => reject(error)),
      );
    });
  }

  #local(key: string, reason: string, cost: number): RateLimitDecision {
    this.#o.metrics.rateLimitStoreFallbacks.inc({ reason });
    return this.#fallback.hitNow(key, cost);
  }

  get #window(): number {
    return this.#o.warningWindowMs ?? WARNING_WINDOW_MS;
  }

  async close(): Promise<void> {
    this.#warn.flush();
    if (this.#o.ownsClient) this.#o.redis.disconnect();
  }
}
