import { Redis } from "ioredis";
import type { Logger } from "./observability/logger";

/**
 * The one way the service opens Redis (the supply cache and the rate limiter each hold one connection):
 * commands fail at once while disconnected (no offline queue: a caller falls back to in-process at once
 * instead of queueing behind an outage), no per-command retries, and the connection keeps retrying in
 * the background with a bounded back-off. Deadlines are the caller's own.
 */
export function createRedisClient(
  url: string,
  options: { logger?: Logger; lazyConnect?: boolean; commandTimeoutMs?: number; connectTimeoutMs?: number } = {},
): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...(options.lazyConnect ? { lazyConnect: true } : {}),
    ...(options.commandTimeoutMs === undefined ? {} : { commandTimeout: options.commandTimeoutMs }),
  });
  // Without a listener ioredis prints every reconnect failure; callers report outages themselves.
  redis.on("error", (error: Error) => options.logger?.debug("redis connection error", { error }));
  return redis;
}
