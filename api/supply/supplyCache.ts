import { RedisTtlCache } from "../cache/redisTtlCache";
import { MemoryTtlCache, type TtlCache } from "../cache/ttlCache";
import type { AppConfig } from "../config";
import type { Logger } from "../observability/logger";
import { circulatingFailed, decodeFigures, type SupplyFloor } from "./figures";
import {
  SUPPLY_CLOCK_SKEW_MS,
  SUPPLY_FAILURE_BACKOFF_MS,
  SUPPLY_FIGURES_TTL_MS,
  SUPPLY_REVALIDATE_MS,
  supplyRpcTimeoutMs,
} from "./router";

/**
 * Only an entry this code would write is served from Redis (api/supply/figures.ts: well-formed, no zero figure,
 * circulating never above total), one whose circulating half failed only for as long as a failure is remembered, and
 * any only while its window, counted from its read, lasts: `readAt + window` still ahead (what is left of it is how
 * long it may be kept), and `readAt` not ahead of this clock by more than SUPPLY_CLOCK_SKEW_MS (a stamp from the
 * future would be served with Age 0 for a whole TTL). Whatever its PTTL says: a foreign or old writer sets that. Nor is
 * an entry of a block below the one this process serves (`floor`): a replica that read a lagging node wrote it; this
 * one reads again, and writes back its newer figures while their window lasts (api/supply/router.ts). Nor one of a block
 * this process saw reorged away (`floor`'s orphans): a replica that has not seen the reorg yet may still write it back;
 * this one reads the chain again and replaces it.
 */
const acceptEntry =
  (backoffMs: number, windowMs: number, floor: SupplyFloor | undefined, now: () => number = Date.now) =>
  (value: string, pttlMs: number): number | false => {
    const figures = decodeFigures(value);
    if (figures === null || (circulatingFailed(figures) && pttlMs > backoffMs)) return false;
    // A lower block than the one this process serves: a lagging node's figures, read again here and replaced.
    if (floor?.blockNumber != null && figures.blockNumber < floor.blockNumber) return false;
    if (floor?.isOrphaned(figures.blockHash)) return false;
    const at = now();
    if (figures.readAtMs > at + SUPPLY_CLOCK_SKEW_MS) return false;
    return figures.readAtMs + windowMs - at;
  };

export type SupplyCacheOptions = {
  /** Namespaces the Redis keys (default "asset-api:"); replicas that must share use the same one. */
  keyPrefix?: string;
  /** The supply read deadline, when AppDeps.supply.rpcTimeoutMs overrides the default. */
  rpcTimeoutMs?: number;
  /** The failure backoff, when AppDeps.supply.failureBackoffMs overrides the default. */
  failureBackoffMs?: number;
  /** The figures' window, when AppDeps.supply.ttlMs overrides the default. */
  ttlMs?: number;
  logger?: Logger;
  /** The block of the figures this process serves (pass the same to the router as AppDeps.supply.floor). */
  floor?: SupplyFloor;
};

/**
 * The supply cache the entry point passes as AppDeps.supply.cache: shared through Redis when
 * REDIS_URL is set (replicas make one upstream read per window between them), else in-process.
 */
export async function createSupplyCache(config: AppConfig, options: SupplyCacheOptions = {}): Promise<TtlCache> {
  if (config.redisUrl === null) return new MemoryTtlCache();
  const deadlineMs = options.rpcTimeoutMs ?? supplyRpcTimeoutMs(config.rpcTimeoutMs);
  const logger = options.logger;
  return RedisTtlCache.create({
    url: config.redisUrl,
    keyPrefix: options.keyPrefix ?? "asset-api:",
    // The holder renews its lock while it reads; one that dies mid-read is taken over after this lease.
    leaseMs: 1_500,
    // A replica waiting on another's read (or taking it over) gives up when that read's own deadline would have passed.
    waitMs: deadlineMs,
    // Only a well-formed entry within its window is served from Redis; anything else is read again from the chain.
    accept: acceptEntry(
      options.failureBackoffMs ?? SUPPLY_FAILURE_BACKOFF_MS,
      options.ttlMs ?? SUPPLY_FIGURES_TTL_MS,
      options.floor,
    ),
    // A replica's copy is asked of Redis again at least this often: replicas sharing Redis serve one block.
    revalidateMs: SUPPLY_REVALIDATE_MS,
    ...(logger ? { logger, warning: "supply cache degraded" } : {}),
  });
}
