// Ponder's HTTP entry. Ponder executes this file at build time, before indexing starts and before its own
// server listens, so a ConfigError thrown here (bad variable, RPC on the wrong chain) stops the process with
// its message.
//
// Clients are served by the API process (`npm run serve:api`, api/server/main.ts); Ponder's own HTTP server
// serves no route of ours. With API_PORT set (`npm start`), this process serves the API itself on that port
// with the API process's own server (api/server/server.ts: limits, timeouts, connection guard, envelope for
// Node-level rejects, probes, drain), reading the index through Ponder's in-process database (PGlite locally).
// Without it (the production indexer, `npm run serve:indexer`) it only checks the configuration and the RPC's
// chain id, so a bad deployment stops the indexer with a message.
import { db } from "ponder:api";
import { Hono } from "hono";
import { createApp } from "../../api/app";
import { cliSchemaFrom } from "../../api/config";
import { createLockIndex } from "../../api/locks/atBlock";
import { createLockStore } from "../../api/locks/store";
import { IndexWatermark } from "../../api/locks/watermark";
import { createMetrics } from "../../api/observability/metrics";
import { serveMetrics } from "../../api/server/metricsServer";
import { boundedReadiness } from "../../api/server/readiness";
import { startApiServer } from "../../api/server/server";
import { createServiceDeps } from "../../api/service";
import { runBeforeShutdown } from "../../api/startup/drain";
import { checkMulticall3 } from "../../api/startup/multicall3";
import { dropPonderQueryQueueNotice } from "../../api/startup/ponderQueryQueueNotice";
import { redactProcessOutput, secretUrlsFrom } from "../../api/startup/redactOutput";

// First: from here on nothing this process prints (Ponder's indexer errors included) carries an RPC key.
redactProcessOutput(secretUrlsFrom());
// Ponder's realtime sync makes pg print a deprecation that is Ponder's to fix (see the module).
dropPonderQueryQueueNotice();

// Statement durations reach the metrics; the pool is Ponder's own (its /metrics reports it), so no pool gauges.
const metrics = createMetrics();
const store = createLockStore({ db, onQuery: metrics.indexDb.onQuery });
const deps = await createServiceDeps({
  locks: store,
  load: { deployment: true, cliSchema: cliSchemaFrom() },
  checkChainId: true,
  metrics,
});
const { config } = deps;
const logger = deps.logger!;

// With API_PORT (npm start): the API on our own server, as the API process serves it.
if (config.apiPort !== null) {
  // /ready as the API process answers it: bounded; ready once Ponder marked the index ready (is_ready, the
  // in-process equivalent of the views schema existing), "index missing" while it back-fills.
  // The index's mark polled as the API process polls it (api/locks/watermark.ts); the timer never holds the exit.
  const indexWatermark = new IndexWatermark(() => store.indexMark()).start();
  // How the node offers Multicall3, as the API process decides it (a ConfigError here stops the process).
  const multicall = deps.rpc ? await checkMulticall3({ rpc: deps.rpc, setting: config.multicall3, logger }) : undefined;
  const app = createApp({
    ...deps,
    ...(multicall ? { multicall } : {}),
    lockIndex: createLockIndex({ db }),
    indexWatermark,
    readiness: boundedReadiness(() => store.isReady()),
  });
  const host = config.host ?? "127.0.0.1";
  const api = await startApiServer(app, {
    port: config.apiPort,
    hostname: host,
    connections: config.connections,
    trustedProxies: config.trustedProxies,
    metrics: deps.metrics!,
    logger,
  });
  // With METRICS_PORT, the metrics on a listener of their own, as the API process serves them.
  const metricsListener = await serveMetrics({ config, metrics, apiServer: api.server });
  // Our drain first (stop accepting, finish in-flight within SHUTDOWN_DRAIN_MS), then Ponder's shutdown.
  runBeforeShutdown(async () => {
    await api.close(config.shutdownDrainMs);
    await metricsListener?.close();
  });
  logger.info("api listening", {
    port: api.port,
    host,
    limits: api.limits,
    ...(metricsListener ? { metrics: { port: metricsListener.port, host: metricsListener.host } } : {}),
  });
}

// Ponder's own server (its /health, /ready, /status, /metrics for the indexer) serves no route of ours.
export default new Hono();
