import type { AppConfig } from "../config";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { createRedisClient } from "../redis";
import { MemoryRateLimiter, type RateLimiter } from "./limiter";
import { RedisRateLimiter } from "./redisLimiter";

export type CreateRateLimiterParameters = {
  config: Pick<AppConfig, "redisUrl" | "rateLimit">;
  logger: Logger;
  metrics: Metrics;
  keyPrefix?: string;
};

/** design.md: in-memory by default; Redis when REDIS_URL is set, so the limit holds across replicas. */
export function createRateLimiter({ config, logger, metrics, keyPrefix }: CreateRateLimiterParameters): RateLimiter {
  if (config.redisUrl === null) return new MemoryRateLimiter(config.rateLimit);
  return new RedisRateLimiter({
    ...config.rateLimit,
    redis: createRedisClient(config.redisUrl, { logger }),
    ownsClient: true,
    keyPrefix,
    logger,
    metrics,
  });
}
