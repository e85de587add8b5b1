import type { AppDepsInput } from "./app";
import { createRpcClient } from "./chain/rpc";
import { type AppConfig, describeConfig, loadConfig } from "./config";
import type { LockStore } from "./locks/types";
import { createLogger } from "./observability/logger";
import { createMetrics } from "./observability/metrics";
import { createRateLimiter } from "./ratelimit/createRateLimiter";
import { createSupplyCache } from "./supply/supplyCache";

/**
 * Builds the production dependencies of createApp from the environment: one config, one RPC
 * client (its calls counted in the metrics), the shared caches and limiter (Redis when
 * REDIS_URL is set), and the lock store the caller brings (Ponder's db in src/api/index.ts).
 */
export async function createServiceDeps(options: {
  locks: LockStore | null;
  env?: Record<string, string | undefined>;
  config?: AppConfig;
}): Promise<AppDepsInput> {
  const config = options.config ?? loadConfig(options.env);
  const logger = createLogger();
  const metrics = createMetrics();
  const rpc = config.rpcUrl
    ? createRpcClient({ url: config.rpcUrl, timeoutMs: config.rpcTimeoutMs, onCall: metrics.onRpcCall })
    : null;
  const cache = await createSupplyCache(config, { logger });
  const limiter = createRateLimiter({ config, logger, metrics });
  logger.info("api configured", { config: describeConfig(config) });
  return { config, rpc, locks: options.locks, supply: { cache }, limiter, metrics, logger };
}
