/**
 * The API process (`npm run serve:api`): the whole API — supply, v1, MCP, the index API, GraphQL, OpenAPI, /docs,
 * metrics and probes — on a server of our own (api/server/server.ts), reading the lock index from Postgres through
 * Ponder's views schema. Ponder (`ponder start`) only indexes; N of these serve behind a load balancer. Assembled as
 * every serving process is (api/server/process.ts).
 *
 * Environment: the one configuration (api/config.ts). DATABASE_URL + DATABASE_VIEWS_SCHEMA (or
 * DATABASE_SCHEMA) select the index; without DATABASE_URL (local only) state answers say `source: "rpc"`, the index
 * routes and GraphQL answer 503 "unconfigured" and /ready 200 with `index: "unconfigured"`. PORT (default
 * 42069) and HOST (default 0.0.0.0) pick the socket; METRICS_PORT / METRICS_HOST a listener of the metrics'
 * own (api/server/metricsServer.ts). Once it serves it logs one line `"msg":"listening"` with `listening: {port,host}`
 * (and `metrics: {port,host}` when the metrics have their own listener), whatever LOG_LEVEL says: supervisors and
 * tests wait for it.
 */
import { flushCompileCache } from "node:module";
import { ConfigError, loadConfig } from "../config";
import { ManifestError } from "../manifest";
import { createLogger } from "../observability/logger";
import { throttledWarnings } from "../observability/throttle";
import type { IndexSignalEvent } from "../read/indexSignal";
import { redactProcessOutput, secretUrlsFrom } from "../startup/redactOutput";
import { pgSql } from "../webhooks/sql";
import { openIndexDatabase } from "./indexDatabase";
import { serveProcess } from "./process";

redactProcessOutput(secretUrlsFrom());

// A configuration the service cannot run with stops it with one line saying what is wrong, not a stack trace.
const exitOnConfigError = (error: unknown, hosts?: readonly string[]): never => {
  const line = configErrorLine(error, hosts);
  if (line === null) throw error;
  process.stderr.write(`${line}\n`);
  process.exit(1);
};

/**
 * The one line for a setting the process cannot start with (the variable named), or null for anything else. `hosts`:
 * the addresses it listens on, so only their failure to resolve is said to be HOST's (a database's or a node's is not).
 */
function configErrorLine(error: unknown, hosts: readonly string[] = []): string | null {
  if (error instanceof ConfigError) return error.message;
  if (error instanceof ManifestError) return `invalid configuration: MANIFEST_FILE / NETWORK: ${error.message}`;
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  if (e?.syscall === "listen" && e.code === "EADDRINUSE") {
    return `invalid configuration: PORT / METRICS_PORT: ${e.address}:${e.port} is already in use`;
  }
  if (e?.syscall === "listen" && (e.code === "EADDRNOTAVAIL" || e.code === "EACCES")) {
    return `invalid configuration: HOST / PORT: cannot listen on ${e.address}:${e.port} (${e.code})`;
  }
  if (e?.syscall === "getaddrinfo" && e.hostname !== undefined && hosts.includes(e.hostname)) {
    return `invalid configuration: HOST / METRICS_HOST: ${e.hostname} does not resolve (${e.code})`;
  }
  return null;
}
const config = (() => {
  try {
    return loadConfig(process.env, { deployment: true });
  } catch (error) {
    return exitOnConfigError(error);
  }
})();
const host = config.host ?? "0.0.0.0";
const served = await serveProcess({
  config,
  port: config.port ?? 42069,
  host,
  openIndex: ({ metrics, logger }) => {
    const schema = config.database.viewsSchema ?? config.database.schema;
    if (!config.database.url || !schema) return null;
    const warn = throttledWarnings(logger);
    const index = openIndexDatabase({
      url: config.database.url,
      schema,
      onQuery: metrics.indexDb.onQuery,
      onCancelled: () => metrics.abortedWork.inc({ kind: "db" }),
      onRefused: metrics.indexDb.onRefused,
      warn,
      chainId: config.chainId,
      onOtherChain: (chainIds) =>
        warn("index-chain", "the index is of another chain: /ready answers 503 until it is this deployment's", {
          indexChainIds: chainIds.join(","),
          chainId: config.chainId,
        }),
      ...(config.database.viewsSchema
        ? {
            listen: {
              viewsSchema: config.database.viewsSchema,
              onEvent: (event: IndexSignalEvent) => {
                if (event === "connected" || event === "disconnected") {
                  metrics.streams.signalListening.set(event === "connected" ? 1 : 0);
                } else metrics.streams.signalHeads.inc({ how: event });
              },
            },
          }
        : {}),
    });
    metrics.indexDb.watchPool(index.pool);
    return index;
  },
  // The webhooks' outbox beside the index, in a schema of the API's own (WEBHOOK_SCHEMA), shared by every replica.
  openWebhookSql: () => (config.database.url ? pgSql(config.database.url) : null),
}).catch((error: unknown) => exitOnConfigError(error, [host, config.metrics.host]));
// A log line like every other (time, level, scrubbed), written at any LOG_LEVEL: it is the process's "up" signal.
createLogger({ level: "info" }).info("listening", {
  listening: { port: served.api.port, host },
  ...(served.metrics ? { metrics: served.metrics } : {}),
});
// The V8 code cache of this bundle, where NODE_COMPILE_CACHE names a folder (serve:api: .cache/node-compile-cache):
// written once the process serves, with the functions start-up compiled, so the next start skips that compilation
// even when this process is killed without a clean exit (Node otherwise writes it only at exit). Nothing when unset.
flushCompileCache();

// The first signal drains (exit 0); a second one during the drain is an operator who will not wait: the connections
// still open are closed at once and the process exits 1, so the stop is not mistaken for a clean one.
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) {
      served.logger.warn("shutdown: second signal, drain cut short: open connections closed, exiting 1", { signal });
      served.api.server.closeAllConnections();
      process.exit(1);
    }
    stopping = true;
    await served.close(config.shutdownDrainMs);
    process.exit(0);
  });
}
