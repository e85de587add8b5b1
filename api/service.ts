import { createRpcClient } from "./chain/rpc";
import { type AppConfig, describeConfig, type LoadConfigOptions, loadConfig, PRODUCTION_NETWORKS } from "./config";
import type { AppDepsInput } from "./deps";
import { createSharedAnswers } from "./index/sharedAnswers";
import type { LockStore } from "./locks/types";
import { createLogger } from "./observability/logger";
import { createMetrics, type Metrics } from "./observability/metrics";
import { createRateLimiter } from "./ratelimit/createRateLimiter";
import { checkRpcChainId } from "./startup/chainId";
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
  /** Production checks of loadConfig (required variables on base / base-sepolia); see LoadConfigOptions. */
  load?: LoadConfigOptions;
  /** Refuse to start unless the RPC's eth_chainId equals the manifest's chainId (the Ponder entry sets it). */
  checkChainId?: boolean;
  /** Made before the deps by an entry whose lock store reports to it (src/api/index.ts); default: new ones. */
  metrics?: Metrics;
}): Promise<AppDepsInput> {
  const config = options.config ?? loadConfig(options.env, options.load);
  const logger = createLogger();
  const metrics = options.metrics ?? createMetrics();
  const rpc = config.rpcUrl
    ? createRpcClient({
        url: config.rpcUrl,
        timeoutMs: config.rpcTimeoutMs,
        onCall: metrics.onRpcCall,
        onCancelled: metrics.onRpcCancelled,
      })
    : null;
  if (options.checkChainId && rpc) await checkRpcChainId({ rpc, expected: config.chainId });
  if (config.redisUrl === null && PRODUCTION_NETWORKS.includes(config.network)) {
    logger.warn("REDIS_URL is not set: rate limits and the supply cache are per process, not shared by replicas");
  }
  // One prefix for the deployment, one sub-space per use, so two deployments (or test runs) never share keys.
  const cache = await createSupplyCache(config, { logger, keyPrefix: `${config.redisKeyPrefix}supply:` });
  const limiter = createRateLimiter({ config, logger, metrics, keyPrefix: `${config.redisKeyPrefix}ratelimit:` });
  // Each block's ve ranking and stats, computed by one replica for all (api/index/sharedAnswers.ts).
  const indexShared = await createSharedAnswers(config, { logger, keyPrefix: `${config.redisKeyPrefix}index:` });
  logger.info("api configured", { config: describeConfig(config) });
  return { config, rpc, locks: options.locks, supply: { cache }, indexShared, limiter, metrics, logger };
}
