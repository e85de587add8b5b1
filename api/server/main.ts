/**
 * The API process (`npm run serve:api`): the whole API — supply, v1, MCP, OpenAPI, /docs, metrics and
 * probes — on a server of our own (api/server/server.ts), reading the lock index from Postgres through
 * Ponder's views schema. Ponder (`ponder start`) only indexes; N of these serve behind a load balancer.
 *
 * Environment: the one configuration (api/config.ts). DATABASE_URL + DATABASE_VIEWS_SCHEMA (or
 * DATABASE_SCHEMA) select the index; without DATABASE_URL state answers say `source: "rpc"`. PORT (default
 * 42069) and HOST (default 0.0.0.0) pick the socket. Prints one JSON line `{"listening":{port,host}}`.
 */
import { createApp } from "../app";
import { ConfigError } from "../config";
import { createServiceDeps } from "../service";
import { redactProcessOutput, secretUrlsFrom } from "../startup/redactOutput";
import { openIndexDatabase } from "./indexDatabase";
import { startApiServer } from "./server";

redactProcessOutput(secretUrlsFrom());

// A configuration the service cannot run with stops it with one line saying what is wrong, not a stack trace.
const deps = await createServiceDeps({ locks: null, load: { deployment: true }, checkChainId: true }).catch(
  (error: unknown) => {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  },
);
const config = deps.config;
const logger = deps.logger!;
const schema = config.database.viewsSchema ?? config.database.schema;
const index = config.database.url && schema ? openIndexDatabase({ url: config.database.url, schema }) : null;
if (!index) logger.warn("no index database configured (DATABASE_URL and a schema): state answers source rpc");

const app = createApp({
  ...deps,
  locks: index?.store ?? null,
  lockIndex: index?.lockIndex ?? null,
  ...(index ? { readiness: index.readiness, indexWatermark: index.watermark } : {}),
});
const host = config.host ?? "0.0.0.0";
const api = await startApiServer(app, { port: config.port ?? 42069, hostname: host });
process.stdout.write(`${JSON.stringify({ listening: { port: api.port, host } })}\n`);
logger.info("api listening", { port: api.port, host });

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    logger.info("shutdown: draining", { drainMs: config.shutdownDrainMs });
    await api.close(config.shutdownDrainMs);
    logger.info("shutdown: drained", { ms: Math.round(performance.now() - started) });
    // Bounded: a pool still dialling a silent database must not hold the exit.
    await Promise.race([index?.close().catch(() => {}), new Promise((r) => setTimeout(r, 1_000))]);
    await deps.limiter?.close().catch(() => {});
    await deps.supply?.cache?.close().catch(() => {});
    await deps.indexShared?.close().catch(() => {});
    process.exit(0);
  });
}
