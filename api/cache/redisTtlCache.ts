/**
 * The supply cache shared by replicas through Redis, so N replicas make ONE upstream read per cache
 * window between them, not one each:
 *
 * - a value lives at `<prefix><key>` with PX = its TTL;
 * - on a miss, a replica takes a lock `<prefix><key>:lock` (SET NX PX) on a short lease that it renews
 *   while it loads; the holder re-checks the value, loads, writes it with PX, and releases the lock
 *   (compare-and-delete, so a lapsed lock taken over by someone else is never deleted);
 * - the others poll the value until it appears (one read served everyone), or a failure is written
 *   (below), or the lock disappears without either: then the holder is gone (a replica that died or
 *   stalled mid-read stops renewing, so its lock lapses within one lease) or failed without a backoff,
 *   and a waiter takes the lock and loads itself, until its wait runs out. A dead replica costs the
 *   others one lease of waiting, not a lock held for the whole read's deadline.
 *
 * In front of Redis sits an in-process mirror (MemoryTtlCache) that keeps a value only for the
 * Redis entry's remaining PTTL, so a hit costs no Redis round trip and still expires with the window; it is
 * bounded by entries and bytes and drops what expired, since a request may choose the key (any past block).
 * Concurrent misses inside one process are coalesced there before they reach Redis. With `revalidateMs` the mirror
 * keeps a value at most that long before it asks Redis again (one read per key per interval for the whole process,
 * however many requests): replicas whose copies Redis no longer holds (a restart without persistence, an eviction, a
 * failover) take the entry Redis holds now within that interval instead of each serving its own for the rest of the
 * window. While Redis is unavailable the value is still served for its whole remaining lifetime (not read again).
 *
 * Every value is written with SET NX: two replicas that both loaded (a lock that lapsed under its holder) end up
 * serving ONE value, the first written; the later one adopts it.
 *
 * Redis is not trusted to hold only our writes (a foreign writer, a restored dump, an operator's SET): a value whose
 * PTTL is longer than the window the caller asked for, or a failure longer than the caller's backoff, was not written
 * by this code with these settings and is treated as absent (a value is read again and replaced), so nothing in Redis
 * can make a process serve a figure, or a failure, longer than its own window.
 *
 * One load spends at most `budgetMs` waiting on Redis in all (its reads, the lock, the write): a Redis that is slow but
 * alive costs a request about one command timeout, not one per command. A waiter's polls each have a budget of their
 * own (their number is bounded by `waitMs`: a read of several seconds is hundreds of quick polls). A command that runs
 * past its budget (or fails) ends Redis's part in that load: it is served in-process, as when Redis is down.
 *
 * With a backoff, the holder of a failed read writes `<prefix><key>:fail` = its code with PX = the backoff
 * before it releases the lock: every replica then answers that failure without reading until it lapses,
 * so an outage costs the node about one read per value per interval for the whole cluster.
 *
 * If Redis is unavailable the cache degrades to in-process only (a warning is logged): the supply
 * API stays up and its figures stay exact; only the sharing between replicas is lost. A load that Redis failed (no
 * reply within its budget, or no connection) opens the cache's breaker (api/cache/redisBreaker.ts): for a cool-down
 * every load skips Redis at once, then one load probes it, so a hung Redis costs one budget per cool-down, not one per
 * new key. A write probes it in the background too (`<prefix>breaker-probe`, PX the cool-down; backing off to 30 s,
 * and at once on a reconnect), so the breaker and its gauge close when Redis answers again even with no load, and not
 * while it answers reads but refuses writes (maxmemory under noeviction): a probing load that only read leaves the
 * verdict to that write.
 */
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { CacheStats } from "../observability/cacheStats";
import { type Logger, silentLogger } from "../observability/logger";
import { type ThrottledWarn, throttledWarnings } from "../observability/throttle";
import { createRedisClient } from "../redis";
import { BoundedMap } from "./boundedMap";
import { type Admission, DEFAULT_COOL_DOWN_MS, RedisBreaker } from "./redisBreaker";
import {
  type Backoff,
  MemoryTtlCache,
  type MemoryTtlCacheOptions,
  RecentFailureError,
  type Timed,
  type TtlCache,
} from "./ttlCache";

export type RedisTtlCacheOptions = {
  url: string;
  /** Namespaces every key (tests use a unique prefix per run). */
  keyPrefix?: string;
  /**
   * The lock's lease: renewed every third of it while the holder loads, so a holder that dies (or whose event loop
   * stalls) for longer lets the others take over after at most this long. Default 2 s.
   */
  leaseMs?: number;
  /** How long a replica waits on another's lock (and takes it over) before giving up; set it to the loader's deadline. */
  waitMs?: number;
  /**
   * When the wait runs out: `fail` (default) rejects with CacheWaitTimeoutError; `load` loads in-process, for a loader
   * that may run after the wait within its caller's deadline (the wait is then shorter than that deadline).
   */
  afterWait?: "fail" | "load";
  /** How often a waiting replica looks for the holder's value. */
  pollMs?: number;
  /** Upper bound for one Redis command, so a hung Redis degrades instead of hanging requests. */
  commandTimeoutMs?: number;
  /**
   * The most time one load may spend waiting on Redis replies, all its commands together (default: the command
   * timeout). Past it the load goes on in-process: a slow Redis costs a request about this much, once.
   */
  budgetMs?: number;
  /** How long Redis is skipped after it failed a load (the breaker's cool-down; default 5 s). */
  coolDownMs?: number;
  /** How long `create` waits for the first connection before starting degraded. */
  connectTimeoutMs?: number;
  /**
   * Where Redis's failures are told: `warning` with the failure as `reason`, throttled (api/observability/throttle.ts:
   * the first at once, the rest of a 10 s window as one line with their count). Default: stderr.
   */
  logger?: Logger;
  /** That line's message (default "cache degraded"). */
  warning?: string;
  /**
   * A shared value this rejects is treated as absent (and replaced): Redis is not trusted to hold only our writes.
   * `pttlMs` is the entry's remaining lifetime in Redis (already no longer than the window asked for).
   */
  accept?: (value: string, pttlMs: number) => boolean | number;
  /**
   * At most how long the in-process mirror serves a value before asking Redis for it again (default: its whole PTTL).
   * A value taken is then kept aside for its whole lifetime, and served from there while Redis is unavailable.
   */
  revalidateMs?: number;
  /** The in-process mirror's bounds (entries, bytes): a request may choose the keys (a past block). */
  mirror?: Omit<MemoryTtlCacheOptions, "now">;
};

type Shared = { shared: Timed | null; locked: boolean; failure: RecentFailureError | null };

/**
 * One load's share of Redis: the time it has spent waiting on replies, whether Redis is done for it, and the failure
 * that ended it (a command that failed or ran out the budget, also one whose failure the load did not wait to answer).
 */
type Budget = { spentMs: number; over: boolean; failure?: string; wrote?: boolean };

export class CacheWaitTimeoutError extends Error {
  override name = "CacheWaitTimeoutError";
}

/** Marks a failure of Redis itself, as opposed to a failure of the loader. */
class RedisUnavailable extends Error {
  override name = "RedisUnavailable";
}

/** A Redis in trouble is told at most once per this (with a count of what the window held). */
const WARNING_WINDOW_MS = 10_000;
const STDERR_LOGGER: Logger = {
  ...silentLogger,
  warn: (msg, fields) => console.warn(`[cache] ${msg}`, fields),
};

/** Compare-and-delete: releases a lock held under a token, drops a value only while it is still that value. */
const DELETE_IF_EQUAL = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;
const RENEW_LOCK = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const DEFAULT_LEASE_MS = 2_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 500;

export class RedisTtlCache implements TtlCache {
  readonly kind: "memory" | "redis" = "redis";
  readonly keyPrefix: string;
  readonly shared = new CacheStats();
  readonly #redis: Redis;
  /** The in-process mirror in front of Redis (bounded; read by tests and metrics). */
  readonly mirror: MemoryTtlCache;
  readonly #leaseMs: number;
  readonly #waitMs: number;
  readonly #pollMs: number;
  readonly #afterWait: "fail" | "load";
  readonly #budgetMs: number;
  readonly #warn: ThrottledWarn;
  readonly #warning: string;
  readonly #accept: (value: string, pttlMs: number) => boolean | number;
  readonly #revalidateMs: number | undefined;
  /** With revalidateMs: each key's value as last taken or written, until its whole lifetime ends (Redis unavailable). */
  readonly #held: BoundedMap<string, { value: string; expiresAt: number }>;
  /** Skips Redis for a cool-down after it failed a load (read by tests and metrics). */
  readonly breaker: RedisBreaker;

  private constructor(redis: Redis, options: RedisTtlCacheOptions) {
    this.#redis = redis;
    this.mirror = new MemoryTtlCache(options.mirror ?? {});
    this.keyPrefix = options.keyPrefix ?? "cache:";
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#waitMs = options.waitMs ?? 10_000;
    this.#pollMs = options.pollMs ?? 20;
    this.#afterWait = options.afterWait ?? "fail";
    this.#budgetMs = options.budgetMs ?? options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#warn = throttledWarnings(options.logger ?? STDERR_LOGGER, WARNING_WINDOW_MS);
    this.#warning = options.warning ?? "cache degraded";
    this.#accept = options.accept ?? (() => true);
    this.#revalidateMs = options.revalidateMs;
    this.#held = new BoundedMap(this.mirror.maxEntries, "recency");
    const logger = options.logger ?? STDERR_LOGGER;
    const coolDownMs = options.coolDownMs ?? DEFAULT_COOL_DOWN_MS;
    this.breaker = new RedisBreaker({
      coolDownMs,
      onOpen: (reason) =>
        logger.warn(`${this.#warning}: Redis skipped for ${coolDownMs} ms, then probed`, {
          reason: `redis unavailable, caching in-process: ${reason}`,
        }),
      onClose: () => logger.info("redis answers again: sharing resumed", { cache: this.keyPrefix }),
      // One write within a load's budget: the breaker (and its gauge) closes when Redis takes writes again, with no
      // load. A PING or a read is answered by a Redis that refuses every write (OOM under noeviction).
      probe: async () => {
        await this.#redisOp(() => this.#redis.set(`${this.keyPrefix}breaker-probe`, "1", "PX", coolDownMs), {
          spentMs: 0,
          over: false,
        });
      },
    });
  }

  /** Connects (bounded by connectTimeoutMs); an unreachable Redis still yields a working, degraded cache. */
  static async create(options: RedisTtlCacheOptions): Promise<RedisTtlCache> {
    // Requests go in-process while Redis is away; the connection keeps retrying in the background.
    const redis = createRedisClient(options.url, {
      lazyConnect: true,
      commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeoutMs: options.connectTimeoutMs ?? 2_000,
    });
    const cache = new RedisTtlCache(redis, options);
    redis.on("error", (error: Error) => cache.#warnThrottled(`redis: ${error.message}`));
    // Reconnected: an open breaker is probed now.
    redis.on("ready", () => cache.breaker.poke());
    // Bounded as the connect is: a Redis that takes the connection and never answers its handshake (hung, a silent
    // proxy) held the process's start until it answered. Past the bound it is an outage: the connection goes on
    // trying in the background, and the breaker decides per command.
    const connectMs = options.connectTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      redis.connect().then(
        () => null,
        (error: unknown) => (error as Error).message,
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${connectMs} ms`), connectMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome !== null) {
      cache.#warnThrottled(`redis unavailable at start, caching in-process until it returns: ${outcome}`);
    }
    return cache;
  }

  #warnThrottled(reason: string) {
    this.#warn("redis", this.#warning, { reason });
  }

  peek(key: string): string | undefined {
    return this.mirror.peek(key);
  }

  entries(): number {
    return this.mirror.entries();
  }

  getOrLoad(key: string, ttlMs: number, load: () => Promise<string>, backoff?: Backoff): Promise<string> {
    return this.getOrLoadTimed(key, ttlMs, async () => ({ value: await load(), ttlMs }), backoff);
  }

  getOrLoadTimed(key: string, ttlMs: number, load: () => Promise<Timed>, backoff?: Backoff): Promise<string> {
    // The loader's own lifetime, never past the window: what is written to Redis with PX and kept in the mirror.
    const bounded = async (): Promise<Timed> => {
      const loaded = await load();
      return loaded.ttlMs <= ttlMs ? loaded : { value: loaded.value, ttlMs };
    };
    return this.mirror.getOrLoadTimed(key, ttlMs, () => this.#revalidated(key, ttlMs, bounded, backoff), backoff);
  }

  /** A load for the mirror: kept there at most revalidateMs (then Redis is asked again), held for its whole lifetime. */
  async #revalidated(key: string, ttlMs: number, load: () => Promise<Timed>, backoff?: Backoff): Promise<Timed> {
    const timed = await this.#loadShared(key, ttlMs, load, backoff);
    if (this.#revalidateMs === undefined) return timed;
    if (timed.ttlMs > 0) this.#held.set(key, { value: timed.value, expiresAt: performance.now() + timed.ttlMs });
    return { value: timed.value, ttlMs: Math.min(timed.ttlMs, this.#revalidateMs) };
  }

  /** The value held for `key` (revalidateMs) with what is left of its lifetime, or null: Redis is away, serve it. */
  #heldCopy(key: string): Timed | null {
    const held = this.#held.get(key);
    if (held === undefined) return null;
    const left = Math.floor(held.expiresAt - performance.now());
    if (left > 0) return { value: held.value, ttlMs: left };
    this.#held.delete(key);
    return null;
  }

  async invalidate(key: string, value: string): Promise<void> {
    await this.mirror.invalidate(key, value);
    if (this.#held.peek(key)?.value === value) this.#held.delete(key);
    await this.#redisOp(() => this.#redis.eval(DELETE_IF_EQUAL, 1, this.keyPrefix + key, value)).catch(() => {});
  }

  /**
   * One Redis command. With a load's `budget`, the command may take only what is left of it, and its time is spent
   * from it; a command that fails or runs out the budget ends Redis's part in that load (every later one is refused).
   */
  async #redisOp<T>(op: () => Promise<T>, budget?: Budget): Promise<T> {
    if (this.#redis.status !== "ready") {
      if (budget) budget.failure = `redis is ${this.#redis.status}`;
      throw new RedisUnavailable(`redis is ${this.#redis.status}`);
    }
    if (budget === undefined) {
      try {
        return await op();
      } catch (error) {
        throw new RedisUnavailable((error as Error).message);
      }
    }
    const left = this.#budgetMs - budget.spentMs;
    if (budget.over || left <= 0) {
      budget.over = true;
      throw new RedisUnavailable(`this load spent its ${this.#budgetMs} ms of Redis time`);
    }
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const sent = op();
      // The command is left to finish (or time out) on its own; this load no longer waits for it.
      sent.catch(() => {});
      return await Promise.race([
        sent,
        new Promise<never>((_, reject) => {
          // Timers run before I/O in a loop turn: after a stalled event loop, a reply already read waits one turn
          // (setImmediate) so it wins the race, and a busy process is not taken for a slow Redis.
          timer = setTimeout(
            () =>
              setImmediate(() => reject(new Error(`no reply within this load's ${this.#budgetMs} ms of Redis time`))),
            left,
          );
        }),
      ]);
    } catch (error) {
      budget.over = true;
      budget.failure = (error as Error).message;
      throw new RedisUnavailable(budget.failure);
    } finally {
      clearTimeout(timer);
      budget.spentMs += performance.now() - started;
    }
  }

  async #readShared(
    valueKey: string,
    lockKey: string,
    ttlMs: number,
    backoff: Backoff | undefined,
    budget: Budget,
  ): Promise<Shared> {
    const failKey = `${valueKey}:fail`;
    const replies = await this.#redisOp(
      () => this.#redis.multi().get(valueKey).pttl(valueKey).exists(lockKey).get(failKey).pttl(failKey).exec(),
      budget,
    );
    const [value, pttl, locked, failCode, failPttl] = (replies ?? []).map((r) => r?.[1]);
    // pttl -2 = gone, -1 = no expiry: neither was written by us. Nor was a value that outlives the window asked for
    // (we write PX ttlMs), nor a failure that outlives the backoff: each is absent, so none is served past its window.
    // `accept` may shorten what is kept (a value whose own window ends before its PTTL).
    const verdict =
      typeof value === "string" && typeof pttl === "number" && pttl > 0 && pttl <= ttlMs
        ? this.#accept(value, pttl)
        : 0;
    const keepMs = verdict === true ? (pttl as number) : verdict === false ? 0 : Math.min(pttl as number, verdict);
    const shared = keepMs >= 1 ? { value: value as string, ttlMs: Math.floor(keepMs) } : null;
    const failure =
      backoff !== undefined &&
      typeof failCode === "string" &&
      typeof failPttl === "number" &&
      failPttl > 0 &&
      failPttl <= backoff.ms
        ? new RecentFailureError(failCode, failPttl)
        : null;
    return { shared, locked: locked === 1, failure };
  }

  async #loadShared(key: string, ttlMs: number, load: () => Promise<Timed>, backoff?: Backoff): Promise<Timed> {
    const admission = this.breaker.admit();
    if (admission === "skip") return this.#heldCopy(key) ?? this.#loadHere(load);
    const loaded: { value: Timed | null } = { value: null };
    const budget: Budget = { spentMs: 0, over: false };
    try {
      const value = await this.#loadThroughRedis(key, ttlMs, load, backoff, loaded, budget);
      this.#settle(admission, budget);
      return value;
    } catch (error) {
      if (!(error instanceof RedisUnavailable)) {
        // Redis answered (the load failed, a failure was shared, or the wait ran out): the breaker is told so.
        this.#settle(admission, budget);
        throw error;
      }
      this.breaker.failed(admission, error.message);
      // The loader's good value is kept even if writing it to Redis failed.
      if (loaded.value) return loaded.value;
      return this.#heldCopy(key) ?? this.#loadHere(load);
    }
  }

  /** Tells the breaker how Redis served a load that used it: a probe that wrote nothing proved only reads. */
  #settle(admission: Admission, budget: Budget): void {
    if (budget.failure !== undefined) this.breaker.failed(admission, budget.failure);
    else if (budget.wrote) this.breaker.succeeded(admission);
    else this.breaker.inconclusive(admission);
  }

  /** A load served without Redis: this process reads it, a shared miss. */
  async #loadHere(load: () => Promise<Timed>): Promise<Timed> {
    this.shared.misses++;
    return await load();
  }

  async #loadThroughRedis(
    key: string,
    ttlMs: number,
    load: () => Promise<Timed>,
    backoff: Backoff | undefined,
    loaded: { value: Timed | null },
    budget: Budget,
  ): Promise<Timed> {
    const valueKey = this.keyPrefix + key;
    const lockKey = `${valueKey}:lock`;
    const waitUntil = performance.now() + this.#waitMs;
    for (let first = true; ; first = false) {
      if (!first) await new Promise((resolve) => setTimeout(resolve, this.#pollMs));
      // Each poll has a budget of its own: a wait is bounded by waitMs, and a slow read's hundreds of quick polls
      // added up past one budget (the waiter then read itself and opened its breaker against a healthy Redis).
      const now = first
        ? await this.#readShared(valueKey, lockKey, ttlMs, backoff, budget)
        : await this.#poll(valueKey, lockKey, ttlMs, backoff, budget);
      if (now.shared) return this.#hit(now.shared);
      if (now.failure) throw now.failure;
      // No value, no failure, no lock: nobody is reading (or the reader died or stalled past its lease). Take it.
      if (!now.locked) {
        const token = randomUUID();
        const acquired = await this.#redisOp(() => this.#redis.set(lockKey, token, "PX", this.#leaseMs, "NX"), budget);
        // Answered, taken or not: Redis takes writes (one at maxmemory under noeviction refuses SET NX either way).
        budget.wrote = true;
        if (acquired === "OK") {
          return await this.#holdAndLoad(valueKey, lockKey, token, ttlMs, load, backoff, loaded, budget);
        }
      }
      if (performance.now() >= waitUntil) {
        // A lock renewed by someone for the whole wait without a value: a replica stuck in its read, or a foreign
        // writer. Told (throttled): the answer is the read's failure though nothing was read here, or read here late.
        this.#warn("lock", `${this.#warning}: a lock held past the wait`, {
          reason: `${lockKey} was held by another for ${this.#waitMs} ms and no value or failure was written`,
        });
        if (this.#afterWait === "load") return this.#loadHere(load);
        throw new CacheWaitTimeoutError(`no shared value for ${key} within ${this.#waitMs} ms`);
      }
    }
  }

  /** One poll of a waiting load, within a budget of its own; a poll Redis failed ends Redis's part in the load. */
  async #poll(
    valueKey: string,
    lockKey: string,
    ttlMs: number,
    backoff: Backoff | undefined,
    budget: Budget,
  ): Promise<Shared> {
    const own: Budget = { spentMs: 0, over: false };
    try {
      return await this.#readShared(valueKey, lockKey, ttlMs, backoff, own);
    } finally {
      if (own.failure !== undefined) {
        budget.over = true;
        budget.failure = own.failure;
      }
    }
  }

  /** A value this process takes from Redis is a shared hit; one it reads upstream itself, a shared miss. */
  #hit(value: Timed): Timed {
    this.shared.hits++;
    return value;
  }

  /** Holds the lock `token` (renewing its lease) while it loads, writes the value or the failure, and releases it. */
  async #holdAndLoad(
    valueKey: string,
    lockKey: string,
    token: string,
    ttlMs: number,
    load: () => Promise<Timed>,
    backoff: Backoff | undefined,
    loaded: { value: Timed | null },
    budget: Budget,
  ): Promise<Timed> {
    const renew = setInterval(() => {
      this.#redisOp(() => this.#redis.eval(RENEW_LOCK, 1, lockKey, token, this.#leaseMs)).catch(() => {});
    }, this.#leaseMs / 3);
    renew.unref();
    try {
      // Another replica may have written the value (or a failure) between our read and our lock.
      const again = await this.#readShared(valueKey, lockKey, ttlMs, backoff, budget);
      if (again.shared) return this.#hit(again.shared);
      if (again.failure) throw again.failure;
      this.shared.misses++;
      try {
        loaded.value = await load();
      } catch (error) {
        // Written before the lock is released, so no waiter sees "no lock, no value, no failure" and reads again.
        if (backoff !== undefined && backoff.ms > 0) {
          const code = backoff.codeOf(error);
          await this.#redisOp(() => this.#redis.set(`${valueKey}:fail`, code, "PX", backoff.ms), budget).catch(
            () => {},
          );
        }
        throw error;
      }
      const value = loaded.value;
      if (value.ttlMs <= 0) return value;
      const written = await this.#redisOp(
        () => this.#redis.set(valueKey, value.value, "PX", value.ttlMs, "NX"),
        budget,
      );
      if (written === "OK") return value;
      // Another replica wrote a value while this one loaded (it took over a lock that lapsed under us, or wrote
      // without one): every replica serves ONE value, the first written, so this one adopts it. One that is not
      // acceptable (a foreign writer's) is replaced.
      const winner = await this.#readShared(valueKey, lockKey, ttlMs, backoff, budget);
      if (winner.shared) return winner.shared;
      await this.#redisOp(() => this.#redis.set(valueKey, value.value, "PX", value.ttlMs), budget);
      return value;
    } finally {
      clearInterval(renew);
      const release = () => this.#redis.eval(DELETE_IF_EQUAL, 1, lockKey, token);
      // Within the budget the release is waited for (the next reader finds no lock); past it, only sent: the answer is
      // ready, and a waiter that finds the lock still there finds the value (or the failure) first.
      if (budget.over) this.#redisOp(release).catch(() => {});
      else await this.#redisOp(release, budget).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.breaker.stop();
    await this.mirror.close();
    this.#redis.disconnect();
  }
}
