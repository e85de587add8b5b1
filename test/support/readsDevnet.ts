import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createApp } from "../../api/app";
import { createRpcClient, type RpcClient } from "../../api/chain/rpc";
import { type AppConfig, loadConfig } from "../../api/config";
import type { AppDepsInput } from "../../api/deps";
import type { Manifest } from "../../api/manifest";
import { createLogger } from "../../api/observability/logger";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import { DEVNET_ABIS, type DevnetDeployment, deployDevnet, devnetClients, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedResult, seedDevnet } from "../../devnet/seed";
import { type RpcProxy, startRpcProxy } from "./rpcProxy";

/**
 * One seeded devnet per test file for the read endpoints: anvil → fault proxy → the app's RpcClient,
 * configured through loadConfig like production (manifest file, RPC_URL, RPC_TIMEOUT_MS). On-chain
 * truth is read with viem straight from anvil, so the proxy counts only what the service sends.
 */
export type ReadsDevnet = {
  anvil: AnvilHandle;
  proxy: RpcProxy;
  deployment: DevnetDeployment;
  seed: SeedResult;
  config: AppConfig;
  rpc: RpcClient;
  /** viem clients straight to anvil (not through the proxy). */
  chain: ReturnType<typeof devnetClients>;
  /** A fresh app (and so a fresh gate unless one is given) over the proxy. */
  app(over?: Partial<AppDepsInput>): ReturnType<typeof createApp>;
  /** GET a path on an app; returns status, parsed body and headers. */
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the parsed JSON shape themselves
  get(app: ReturnType<typeof createApp>, p: string): Promise<{ status: number; body: any; headers: Headers }>;
  /** A config whose manifest is changed by `edit` (e.g. a contract removed). */
  configWith(edit: (m: Manifest) => Manifest): AppConfig;
  setStatusBitmask(mask: bigint): Promise<void>;
  stop(): Promise<void>;
};

export async function startReadsDevnet(opts: { rpcTimeoutMs?: number } = {}): Promise<ReadsDevnet> {
  const anvil = await startAnvil();
  const dir = mkdtempSync(path.join(tmpdir(), "reads-"));
  let proxy: RpcProxy | undefined;
  try {
    const deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
    const seed = await seedDevnet({ rpcUrl: anvil.rpcUrl, manifest: deployment.manifest });
    proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
    const p = proxy;
    const timeout = String(opts.rpcTimeoutMs ?? 15_000);
    const configFor = (manifest: Manifest, name: string) => {
      const file = path.join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(manifest));
      return loadConfig({ NETWORK: "local", MANIFEST_FILE: file, RPC_URL: p.url, RPC_TIMEOUT_MS: timeout });
    };
    const config = configFor(deployment.manifest, "local");
    const rpc = createRpcClient({ url: config.rpcUrl!, timeoutMs: config.rpcTimeoutMs });
    const chain = devnetClients(anvil.rpcUrl, deployment.chainId);
    let edits = 0;
    return {
      anvil,
      proxy: p,
      deployment,
      seed,
      config,
      rpc,
      chain,
      // Quiet logs (errors still print); each app has its own in-memory rate limiter.
      app: (over = {}) => createApp({ config, rpc, logger: createLogger({ level: "error" }), ...over }),
      async get(app, url) {
        const res = await app.request(url);
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        return { status: res.status, body, headers: res.headers };
      },
      configWith: (edit) => configFor(edit(structuredClone(deployment.manifest)), `edit${++edits}`),
      async setStatusBitmask(mask) {
        await sendTx(chain, DEVNET_ACCOUNTS.deployer.privateKey, {
          address: deployment.addresses.LaunchController,
          abi: DEVNET_ABIS.LaunchController,
          functionName: "setStatusBitmask",
          args: [mask],
        });
      },
      async stop() {
        await p.stop();
        await anvil.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await proxy?.stop();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
