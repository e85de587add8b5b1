/**
 * A serving process, assembled in one place for both entry points: the API process (api/server/main.ts, `npm run
 * serve:api`) and the API served inside Ponder by `npm start` (src/api/index.ts). What differs between them is only
 * the index they read (Postgres through the views schema, or Ponder's in-process database) and who owns the
 * process's signals; everything else — the configuration, the RPC client and its chain-id check, how Multicall3 is
 * reached, the caches and limiter (Redis when configured), the app, the server, the metrics listener, the drain — is
 * built here, the same way.
 */
import { createApp } from "../app";
import { checkRpcChainId } from "../chain/chainId";
import { createRpcClient } from "../chain/rpc";
import { type AppConfig, describeConfig, type LoadConfigOptions, loadConfig, PRODUCTION_NETWORKS } from "../config";
import type { AppDepsInput } from "../deps";
import type { ReadyState } from "../http/probes";
import { createLogger, type Logger } from "../observability/logger";
import { createMetrics, type Metrics } from "../observability/metrics";
import { createRateLimiter } from "../ratelimit/createRateLimiter";
import type { IndexSource } from "../read/runtime";
import { createSharedAnswers } from "../read/sharedAnswers";
import { checkMulticall3 } from "../startup/multicall3";
import { checkRedis } from "../startup/redisCheck";
import { SupplyFloor } from "../supply/figures";
import { createSupplyCache } from "../supply/supplyCache";
import { Webhooks } from "../webhooks/service";
import type { Sql } from "../webhooks/sql";
import { serveMetrics } from "./metricsServer";
import { type ApiServer, startApiServer } from "./server";

/** How long after it listens the process loads what the app deferred (ApiApp.warm), so `/ready` never waits for it. */
const WARM_AFTER_MS = 1_000;
/**
 * The production dependencies of createApp from the configuration: one RPC client (its calls counted in the
 * metrics; its chain id checked when `checkChainId`), the shared caches and limiter (Redis when REDIS_URL is set),
 * and no index yet (the entry brings it: `index`).
 */
export async function createServiceDeps(options: {
  env?: Record<string, string | undefined>;
  config?: AppConfig;
  /** Production checks of loadConfig (required variables on base / base-sepolia); see LoadConfigOptions. */
  load?: LoadConfigOptions;
  /** Refuse to start unless the RPC's eth_chainId equals the manifest's chainId, and decide how Multicall3 is reached. */
  checkChainId?: boolean;
  /** Made before the deps by an entry whose index reports to them; default: new ones. */
  metrics?: Metrics;
  logger?: Logger;
}): Promise<AppDepsInput & { metrics: Metrics; logger: Logger }> {
  const config = options.config ?? loadConfig(options.env, options.load);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const metrics = options.metrics ?? createMetrics();
  const rpc = config.rpcUrl
    ? createRpcClient({
        url: config.rpcUrl,
        timeoutMs: config.rpcTimeoutMs,
        onCall: metrics.onRpcCall,
        onCancelled: metrics.onRpcCancelled,
      })
    : null;
  // The node is checked first: its chain id, then how it offers Multicall3 (MULTICALL3, api/startup/multicall3.ts).
  const multicall =
    options.checkChainId && rpc
      ? await checkRpcChainId({ rpc, expected: config.chainId, variable: config.rpcUrlVariable }).then(() =>
          checkMulticall3({ rpc, setting: config.multicall3, logger, variable: config.rpcUrlVariable }),
        )
      : undefined;
  if (config.redisUrl === null && PRODUCTION_NETWORKS.includes(config.network)) {
    logger.warn("REDIS_URL is not set: rate limits and the supply cache are per process, not shared by replicas");
  }
  // A Redis that refuses the URL (its database, user or password) stops the process; an unreachable one does not.
  if (config.redisUrl !== null) await checkRedis(config.redisUrl);
  if (config.cursorSecret === null && PRODUCTION_NETWORKS.includes(config.network)) {
    logger.warn(
      "CURSOR_SECRET is not set: page cursors are signed with a key derived from the database name and password",
    );
  }
  // One prefix for the deployment, one sub-space per use, so two deployments (or test runs) never share keys.
  // The block of the figures served: the shared cache never takes a lower block's entry from Redis (a lagging node's).
  const floor = new SupplyFloor();
  // The supply cache, and each block's ve ranking and stats computed by one replica for all
  // (api/read/sharedAnswers.ts): their connections opened together, so a silent Redis costs the start one bound, not two.
  const [cache, shared] = await Promise.all([
    createSupplyCache(config, { logger, keyPrefix: `${config.redisKeyPrefix}supply:`, floor }),
    createSharedAnswers(config, { logger, keyPrefix: `${config.redisKeyPrefix}index:` }),
  ]);
  const limiter = createRateLimiter({ config, logger, metrics, keyPrefix: `${config.redisKeyPrefix}ratelimit:` });
  logger.info("api configured", { config: describeConfig(config) });
  return {
    config,
    rpc,
    ...(multicall ? { multicall } : {}),
    index: { locks: null, atBlock: null, shared },
    supply: { cache, floor },
    limiter,
    metrics,
    logger,
  };
}

/** The index an entry point opens for its process, and how the process answers /ready and lets it go. */
export type OpenedIndex = Omit<IndexSource, "shared"> & {
  readiness?: () => Promise<ReadyState>;
  close?: () => Promise<void>;
};

export type ServeProcessOptions = {
  config: AppConfig;
  port: number;
  host: string;
  /** Opens this process's index once the metrics and logger exist (its statements report to them); null: none. */
  openIndex: (parts: { config: AppConfig; metrics: Metrics; logger: Logger }) => OpenedIndex | null;
  /** Made before the process by an entry whose index reports to them; default: new ones. */
  metrics?: Metrics;
  /** Where the webhooks' state lives (api/webhooks/sql.ts); null or absent: the webhook routes answer 503. */
  openWebhookSql?: (config: AppConfig) => Promise<Sql | null> | Sql | null;
};

export type ServingProcess = {
  api: ApiServer;
  /** The metrics' own listener (METRICS_PORT), or null when /api/metrics is on the API's port. */
  metrics: { port: number; host: string } | null;
  logger: Logger;
  /** Stops accepting, drains in-flight requests within `drainMs`, then lets go of the index, Redis and the rest. */
  close(drainMs: number): Promise<void>;
};

/** Assembles and starts one serving process (see the file comment). */
export async function serveProcess(options: ServeProcessOptions): Promise<ServingProcess> {
  const { config } = options;
  const deps = await createServiceDeps({ config, checkChainId: true, metrics: options.metrics });
  const { logger, metrics } = deps;
  const opened = options.openIndex({ config, metrics, logger });
  if (!opened)
    logger.warn(
      "no index database configured (DATABASE_URL and a schema): state answers source rpc, the index routes and GraphQL 503 INDEX_UNAVAILABLE unconfigured, /ready says index unconfigured",
    );
  const { readiness, close: closeIndex, ...source } = opened ?? { locks: null, atBlock: null };
  const webhookSql = (await options.openWebhookSql?.(config)) ?? null;
  const webhooks = webhookSql
    ? new Webhooks(webhookSql, config.webhooks.schema, config.webhooks, logger, metrics.webhooks)
    : null;
  // The tables now, so the first registration does not wait for them; a failure is tried again on first use.
  webhooks
    ?.ready()
    .catch((error: unknown) => logger.warn("webhook store not ready", { error: (error as Error).message }));
  const app = createApp({ ...deps, index: { ...source, shared: deps.index?.shared ?? null }, readiness, webhooks });
  const api = await startApiServer(app, {
    port: options.port,
    hostname: options.host,
    connections: config.connections,
    trustedProxies: config.trustedProxies,
    metrics,
    logger,
  });
  const metricsListener = await serveMetrics({ config, metrics, apiServer: api.server });
  const metricsAt = metricsListener ? { port: metricsListener.port, host: metricsListener.host } : null;
  logger.info("api listening", {
    port: api.port,
    host: options.host,
    limits: api.limits,
    ...(metricsAt ? { metrics: metricsAt } : {}),
  });
  // What the app defers past start-up (GraphQL's engine, the MCP endpoint), loaded once the process serves, so
  // neither its first /ready nor the first request to them waits for it.
  setTimeout(() => {
    app.warm().catch((error: unknown) => logger.error("deferred load failed", { error: (error as Error).message }));
  }, WARM_AFTER_MS).unref();
  return {
    api,
    metrics: metricsAt,
    logger,
    async close(drainMs) {
      const started = performance.now();
      logger.info("shutdown: draining", { drainMs });
      await api.close(drainMs);
      // The metrics listener last, so a scrape during the drain still sees it.
      await metricsListener?.close();
      logger.info("shutdown: drained", { ms: Math.round(performance.now() - started) });
      // The webhooks' attempts in flight end within WEBHOOK_TIMEOUT_MS; an unfinished one is retried by a replica.
      await Promise.race([webhooks?.close(), new Promise((r) => setTimeout(r, 2_000))]);
      // Bounded: a pool still dialling a silent database must not hold the exit.
      await Promise.race([closeIndex?.().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
      await deps.limiter?.close().catch(() => {});
      await deps.supply?.cache?.close().catch(() => {});
      await deps.index?.shared?.close().catch(() => {});
    },
  };
}
