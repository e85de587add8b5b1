// Ponder's HTTP entry. Ponder executes this file at build time, before indexing starts and before its own
// server listens, so a ConfigError thrown here (bad variable, RPC on the wrong chain) stops the process with
// its message.
//
// Clients are served by the API process (`npm run serve:api`, api/server/main.ts); Ponder's own HTTP server
// serves no route of ours. With API_PORT set (`npm start`), this process serves the API itself on that port,
// assembled exactly as the API process assembles it (api/server/process.ts), reading the index through Ponder's
// in-process database (PGlite locally). Without it (the production indexer, `npm run serve:indexer`) it only
// checks the configuration and the RPC's chain id, so a bad deployment stops the indexer with a message (`ponder
// start` has checked the node already, before its first request: ponder.config.ts; `ponder serve` has not).
import { db } from "ponder:api";
import { Hono } from "hono";
import { checkRpcChainId } from "../../api/chain/chainId";
import { createRpcClient } from "../../api/chain/rpc";
import { cliSchemaFrom, loadConfig } from "../../api/config";
import { createLockIndex } from "../../api/read/atBlock";
import { createLockStore } from "../../api/read/store";
import { IndexWatermark } from "../../api/read/watermark";
import { serveProcess } from "../../api/server/process";
import { boundedReadiness } from "../../api/server/readiness";
import { runBeforeShutdown } from "../../api/startup/drain";
import { dropPonderQueryQueueNotice } from "../../api/startup/ponderQueryQueueNotice";
import { redactProcessOutput, secretUrlsFrom } from "../../api/startup/redactOutput";
import { pgliteSql } from "../../api/webhooks/sql";

// First: from here on nothing this process prints (Ponder's indexer errors included) carries an RPC key.
redactProcessOutput(secretUrlsFrom());
// Ponder's realtime sync makes pg print a deprecation that is Ponder's to fix (see the module).
dropPonderQueryQueueNotice();

const config = loadConfig(process.env, { deployment: true, cliSchema: cliSchemaFrom() });

if (config.apiPort === null) {
  // The production indexer: the configuration and the RPC's chain id checked, nothing served.
  if (config.rpcUrl) {
    const rpc = createRpcClient({ url: config.rpcUrl, timeoutMs: config.rpcTimeoutMs });
    await checkRpcChainId({ rpc, expected: config.chainId, variable: config.rpcUrlVariable });
  }
} else {
  // npm start: the API on our own server, as the API process serves it. Ponder's pool is its own (its /metrics
  // reports it), so no pool gauges; statement durations reach our metrics.
  const served = await serveProcess({
    config,
    port: config.apiPort,
    host: config.host ?? "127.0.0.1",
    openIndex: ({ metrics }) => {
      const locks = createLockStore({ db, onQuery: metrics.indexDb.onQuery });
      return {
        locks,
        atBlock: createLockIndex({ db, chainId: config.chainId }),
        // The index's mark polled as the API process polls it (api/read/watermark.ts); the timer never holds the exit.
        watermark: new IndexWatermark(() => locks.indexMark()).start(),
        // /ready as the API process answers it: bounded; ready once Ponder marked the index ready (is_ready, the
        // in-process equivalent of the views schema existing), "index missing" while it back-fills.
        readiness: boundedReadiness(() => locks.isReady()),
      };
    },
    // The webhooks' state in an in-process PGlite of their own (Ponder's database is read-only here): as ephemeral as
    // the local stack's index, which starts empty every run.
    openWebhookSql: async () => {
      const { PGlite } = await import("@electric-sql/pglite");
      // Started before the server listens: its start-up (compiling Postgres' WASM) would hold the event loop ~1 s.
      const db = new PGlite();
      await db.waitReady;
      return pgliteSql(db);
    },
  });
  // Our drain first (stop accepting, finish in-flight within SHUTDOWN_DRAIN_MS), then Ponder's shutdown.
  runBeforeShutdown(() => served.close(config.shutdownDrainMs));
}

// Ponder's own server (its /health, /ready, /status, /metrics for the indexer) serves no route of ours.
export default new Hono();
