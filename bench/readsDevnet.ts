import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createApp } from "../api/app";
import { createRpcClient } from "../api/chain/rpc";
import { loadConfig } from "../api/config";
import { createLogger } from "../api/observability/logger";
import { startAnvil } from "../devnet/anvil";
import { deployDevnet } from "../devnet/deploy";
import { seedDevnet } from "../devnet/seed";

/** A seeded devnet and an app over `rpcUrl(anvilUrl)` (the anvil itself, or a proxy in front of it), loopback only. */
export async function benchDevnet(front?: (anvilUrl: string) => Promise<{ url: string; stop(): Promise<void> }>) {
  const anvil = await startAnvil();
  const dir = mkdtempSync(path.join(tmpdir(), "bench-reads-"));
  const deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  const seed = await seedDevnet({ rpcUrl: anvil.rpcUrl, manifest: deployment.manifest });
  const proxy = front ? await front(anvil.rpcUrl) : null;
  const file = path.join(dir, "local.json");
  writeFileSync(file, JSON.stringify(deployment.manifest));
  // The bench measures the read path, not the limiter: budget raised out of the way; logs at warn (no per-request line).
  const config = loadConfig({
    NETWORK: "local",
    MANIFEST_FILE: file,
    RPC_URL: proxy?.url ?? anvil.rpcUrl,
    RATE_LIMIT_MAX: "1000000",
  });
  const rpc = createRpcClient({ url: config.rpcUrl!, timeoutMs: config.rpcTimeoutMs });
  const app = createApp({ config, rpc, logger: createLogger({ level: "warn" }) });
  return {
    anvil,
    deployment,
    seed,
    config,
    rpc,
    app,
    async get(p: string) {
      const res = await app.request(p);
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${p} → ${res.status} ${body}`);
      return body;
    },
    async stop() {
      await proxy?.stop();
      await anvil.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The baseline every latency bench divides by: one bare `eth_call` of `data` to `to`, sent with fetch straight to
 * the node, nothing else. Throws when the node does not answer with a result.
 */
export function bareEthCall(rpcUrl: string, to: string, data: string): () => Promise<void> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to, data }, "latest"] });
  return async () => {
    const res = await fetch(rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
    const json = (await res.json()) as { result?: string };
    if (typeof json.result !== "string") throw new Error("bare eth_call failed");
  };
}
