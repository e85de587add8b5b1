// Ponder's HTTP entry. Ponder executes this file at build time, before indexing starts and before its own
// server listens, so a ConfigError thrown here (bad variable, RPC on the wrong chain) stops the process with
// its message.
//
// With API_PORT set (`npm start`), the API is served on that port by the API process's own server
// (api/server/server.ts: limits, timeouts, connection guard, envelope for Node-level rejects, probes, drain),
// reading the index through Ponder's in-process database (PGlite locally); Ponder's own HTTP server keeps its
// --port, private, and serves nothing of ours. Without it (the production indexer, `npm run serve:indexer`, and
// the tests that drive Ponder directly) Ponder's server serves the app on its own, private, port; clients are
// served by the API process (`npm run serve:api`).
import { db } from "ponder:api";
import { Hono } from "hono";
import { createApp } from "../../api/app";
import { cliSchemaFrom } from "../../api/config";
import { createLockStore } from "../../api/locks/store";
import { boundedReadiness } from "../../api/server/readiness";
import { startApiServer } from "../../api/server/server";
import { createServiceDeps } from "../../api/service";
import { installGracefulDrain, runBeforeShutdown } from "../../api/startup/drain";
import { redactProcessOutput, secretUrlsFrom } from "../../api/startup/redactOutput";

// First: from here on nothing this process prints (Ponder's indexer errors included) carries an RPC key.
redactProcessOutput(secretUrlsFrom());

const store = createLockStore({ db });
const deps = await createServiceDeps({
  locks: store,
  load: { deployment: true, cliSchema: cliSchemaFrom() },
  checkChainId: true,
});
const { config } = deps;
const logger = deps.logger!;

async function serveOwn(port: number): Promise<Hono> {
  // /ready as the API process answers it: bounded; ready once Ponder marked the index ready (is_ready, the
  // in-process equivalent of the views schema existing), "index missing" while it back-fills.
  const app = createApp({ ...deps, readiness: boundedReadiness(() => store.isReady()) });
  const host = config.host ?? "127.0.0.1";
  const api = await startApiServer(app, { port, hostname: host });
  // Our drain first (stop accepting, finish in-flight within SHUTDOWN_DRAIN_MS), then Ponder's shutdown.
  runBeforeShutdown(() => api.close(config.shutdownDrainMs));
  logger.info("api listening", { port: api.port, host });
  return new Hono();
}

function behindPonder(): Hono {
  const drain = installGracefulDrain({ drainMs: config.shutdownDrainMs, logger });
  const api = createApp(deps);
  // Ponder mounts this app with .route("/"), which would bypass our 404 and error handlers; handing
  // every request to `api.fetch` keeps the whole envelope behaviour (c.env carries the socket peer).
  return new Hono().use(drain.middleware).all("*", (c) => api.fetch(c.req.raw, c.env));
}

export default config.apiPort !== null ? await serveOwn(config.apiPort) : behindPonder();
