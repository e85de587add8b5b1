/**
 * Shared set-up of the supply benchmarks: a devnet (anvil + deployed contracts, loopback only), the
 * fault proxy in front of it as the app's RPC (so upstream reads are counted), and the real app served
 * over HTTP by @hono/node-server, the server Ponder itself uses.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import { createApp } from "../api/app";
import { createRpcClient } from "../api/chain/rpc";
import { loadConfig } from "../api/config";
import type { AppDepsInput } from "../api/deps";
import type { AppEnv } from "../api/http/env";
import { createLogger } from "../api/observability/logger";
import { startAnvil } from "../devnet/anvil";
import { deployDevnet } from "../devnet/deploy";
import { startRpcProxy } from "../test/support/rpcProxy";

export type Served = { url: string; close(): Promise<void> };

/** Serves a Hono app on 127.0.0.1, on a free port. */
export function serveApp(app: Hono<AppEnv>): Promise<Served> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

export async function supplyBenchSetup() {
  const anvil = await startAnvil();
  const dir = mkdtempSync(path.join(tmpdir(), "bench-supply-"));
  const deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  const proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
  const file = path.join(dir, "local.json");
  writeFileSync(file, JSON.stringify(deployment.manifest));
  const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: file, RPC_URL: proxy.url });
  const rpc = createRpcClient({ url: config.rpcUrl!, timeoutMs: config.rpcTimeoutMs });
  // Logs at warn: no per-request line on the terminal (the request log middleware still runs).
  const logger = createLogger({ level: "warn" });
  return {
    anvil,
    proxy,
    config,
    rpc,
    deployment,
    app: (over: Partial<AppDepsInput> = {}) => createApp({ config, rpc, logger, ...over }),
    async stop() {
      await proxy.stop();
      await anvil.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
