/**
 * The API process (`npm run serve:api`): the whole API — supply, v1, MCP, OpenAPI, /docs, metrics and
 * probes — on a server of our own (api/server/server.ts), reading the lock index from Postgres through
 * Ponder's views schema. Ponder (`ponder start`) only indexes; N of these serve behind a load balancer.
 *
 * Environment: the one configuration (api/config.ts). DATABASE_URL + DATABASE_VIEWS_SCHEMA (or
 * DATABASE_SCHEMA) select the index; without DATABASE_URL state answers say `source: "rpc"`. PORT (default
 * 42069) and HOST (default 0.0.0.0) pick the socket; METRICS_PORT / METRICS_HOST a listener of the metrics'
 * own (api/server/metricsServer.ts). Prints one JSON line `{"listening":{port,host}}`, with
 * `"metrics":{port,host}` beside `listening` when the metrics have their own listener.
 */
import { createApp } from "../app";
import { ConfigError } from "../config";
import { throttledWarnings } from "../observability/throttle";
import { createServiceDeps } from "../service";
import { checkMulticall3 } from "../startup/multicall3";
import { redactProcessOutput, secretUrlsFrom } from "../startup/redactOutput";
import { openIndexDatabase } from "./indexDatabase";
import { serveMetrics } from "./metricsServer";
import { startApiServer } from "./server";

redactProcessOutput(secretUrlsFrom());

// A configuration the service cannot run with stops it with one line saying what is wrong, not a stack trace.
// The node is checked first: its chain id, then how it offers Multicall3 (MULTICALL3, api/startup/multicall3.ts).
const deps = await createServiceDeps({ locks: null, load: { deployment: true }, checkChainId: true })
  .then(async (d) => ({
    ...d,
    ...(d.rpc
      ? { multicall: await checkMulticall3({ rpc: d.rpc, setting: d.config.multicall3, logger: d.logger! }) }
      : {}),
  }))
  .catch((error: unknown) => {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });
const config = deps.config;
const logger = deps.logger!;
const metrics = deps.metrics!;
const schema = config.database.viewsSchema ?? config.database.schema;
const index =
  config.database.url && schema
    ? openIndexDatabase({
        url: config.database.url,
        schema,
        onQuery: metrics.indexDb.onQuery,
        onCancelled: () => metrics.abortedWork.inc({ kind: "db" }),
        warn: throttledWarnings(logger),
      })
    : null;
if (index) metrics.indexDb.watchPool(index.pool);
else logger.warn("no index database configured (DATABASE_URL and a schema): state answers source rpc");

const app = createApp({
  ...deps,
  locks: index?.store ?? null,
  lockIndex: index?.lockIndex ?? null,
  ...(index ? { readiness: index.readiness, indexWatermark: index.watermark } : {}),
});
const host = config.host ?? "0.0.0.0";
const api = await startApiServer(app, {
  port: config.port ?? 42069,
  hostname: host,
  connections: config.connections,
  trustedProxies: config.trustedProxies,
  metrics: deps.metrics!,
  logger,
});
const metricsListener = await serveMetrics({ config, metrics, apiServer: api.server });
const metricsAt = metricsListener ? { metrics: { port: metricsListener.port, host: metricsListener.host } } : {};
process.stdout.write(`${JSON.stringify({ listening: { port: api.port, host }, ...metricsAt })}
`);
logger.info("api listening", { port: api.port, host, limits: api.limits, ...metricsAt });

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    logger.info("shutdown: draining", { drainMs: config.shutdownDrainMs });
    await api.close(config.shutdownDrainMs);
    // The metrics listener last, so a scrape during the drain still sees it.
    await metricsListener?.close();
    logger.info("shutdown: drained", { ms: Math.round(performance.now() - started) });
    // Bounded: a pool still dialling a silent database must not hold the exit.
    await Promise.race([index?.close().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
    await deps.limiter?.close().catch(() => {});
    await deps.supply?.cache?.close().catch(() => {});
    await deps.indexShared?.close().catch(() => {});
    process.exit(0);
  });
}
