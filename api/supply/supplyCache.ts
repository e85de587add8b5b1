import { RedisTtlCache } from "../cache/redisTtlCache";
import { MemoryTtlCache, type TtlCache } from "../cache/ttlCache";
import type { AppConfig } from "../config";
import type { Logger } from "../observability/logger";
import { supplyRpcTimeoutMs } from "./router";

/** The shape formatWei2 produces, but never "0.00" (a zero figure is never answered, api/supply/reads.ts). */
const SUPPLY_FIGURE = /^(0|[1-9][0-9]*)\.[0-9]{2}$/;
const isSupplyFigure = (value: string) => SUPPLY_FIGURE.test(value) && value !== "0.00";

export type SupplyCacheOptions = {
  /** Namespaces the Redis keys (default "asset-api:"); replicas that must share use the same one. */
  keyPrefix?: string;
  /** The supply read deadline, when AppDeps.supply.rpcTimeoutMs overrides the default. */
  rpcTimeoutMs?: number;
  logger?: Logger;
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
    // Only a well-formed figure is served from Redis; anything else is read again from the chain.
    accept: isSupplyFigure,
    ...(logger ? { logger, warning: "supply cache degraded" } : {}),
  });
}
