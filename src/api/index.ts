// Ponder's HTTP entry: the Hono app of api/, given Ponder's read-only db as the lock store.
// Served by `ponder start` (indexer + API) and `ponder serve` (API-only replicas).
// Ponder executes this file at build time, before indexing starts and before the server listens, so a
// ConfigError thrown here (bad variable, RPC on the wrong chain) stops the process with its message.
import { db } from "ponder:api";
import { Hono } from "hono";
import { createApp } from "../../api/app";
import { cliSchemaFrom } from "../../api/config";
import { createLockStore } from "../../api/locks/store";
import { createServiceDeps } from "../../api/service";
import { installGracefulDrain } from "../../api/startup/drain";
import { redactProcessOutput, secretUrlsFrom } from "../../api/startup/redactOutput";

// First: from here on nothing this process prints (Ponder's indexer errors included) carries an RPC key.
redactProcessOutput(secretUrlsFrom());

const deps = await createServiceDeps({
  locks: createLockStore({ db }),
  load: { deployment: true, cliSchema: cliSchemaFrom() },
  checkChainId: true,
});
const drain = installGracefulDrain({ drainMs: deps.config.shutdownDrainMs, logger: deps.logger! });

const api = createApp(deps);

// Ponder mounts this app with .route("/"), which would bypass our 404 and error handlers; handing
// every request to `api.fetch` keeps the whole envelope behaviour (c.env carries the socket peer).
export default new Hono().use(drain.middleware).all("*", (c) => api.fetch(c.req.raw, c.env));
