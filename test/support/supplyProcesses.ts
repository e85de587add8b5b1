/**
 * API processes as operators run them (`npm run serve:api`, dist/server/main.js, no index) over one seeded devnet
 * behind the fault proxy, for a supply test file: registers the file's hooks (devnet and Redis admin once; a fresh key
 * prefix, no fault and clear counters before each test; every process killed after it; the prefix's keys deleted at
 * the end). TEST_REDIS_URL picks the Redis (default db 0 on 127.0.0.1:6379).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { supplyFiguresKey } from "../../api/supply/router";
import { formatWei2 } from "../../api/supply/wei";
import { DEVNET_ABIS, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { chainSupplyAt } from "./chainTruth";
import { writeManifest } from "./ponder";
import { type ReadsDevnet, startReadsDevnet } from "./readsDevnet";
import { type ServiceChild, spawnService } from "./replica";

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export type SupplyProcesses = {
  readonly d: ReadsDevnet;
  readonly admin: Redis;
  /** This test's key prefix (REDIS_KEY_PREFIX of the processes it starts): no entry of one test is served in the next. */
  prefix: string;
  /** A new prefix for the processes started from now on (within one test). */
  newPrefix(): string;
  /** An API process over the devnet's fault proxy; `redisUrl` "" caches in-process; `env` adds to its environment. */
  api(redisUrl?: string, env?: Record<string, string>): Promise<ServiceChild>;
  /** The shared entry's key, as the API process names it (api/server/process.ts: the supply cache's own prefix). */
  figuresKey(): string;
};

export function supplyProcesses(name: string): SupplyProcesses {
  const base = `${name}:${process.pid}:${randomUUID().slice(0, 8)}:`;
  const apis: ServiceChild[] = [];
  let d: ReadsDevnet | undefined;
  let admin: Redis | undefined;
  let manifestFile = "";
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("supplyProcesses: used before beforeAll ran");
    return value;
  };
  const self: SupplyProcesses = {
    get d() {
      return started(d);
    },
    get admin() {
      return started(admin);
    },
    prefix: base,
    newPrefix() {
      self.prefix = `${base}${randomUUID().slice(0, 8)}:`;
      return self.prefix;
    },
    async api(redisUrl = TEST_REDIS_URL, env = {}) {
      const p = await spawnService({
        command: "api",
        rpcUrl: self.d.proxy.url,
        manifestFile,
        schema: "asset_v1",
        env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: self.prefix, LOG_LEVEL: "warn", ...env },
      });
      apis.push(p);
      await p.waitFor200("/health", 30_000);
      return p;
    },
    figuresKey() {
      const { chainId } = self.d.config;
      const { AssetToken, VeLockNFT } = self.d.deployment.addresses;
      return `${self.prefix}supply:${supplyFiguresKey(chainId, AssetToken, VeLockNFT)}`;
    },
  };
  beforeAll(async () => {
    admin = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    d = await startReadsDevnet();
    manifestFile = writeManifest(d.deployment.manifest);
  });
  beforeEach(() => {
    self.newPrefix();
    self.d.proxy.setFault(null);
    self.d.proxy.setUpstream(null);
    self.d.proxy.reset();
  });
  afterEach(async () => {
    await Promise.all(apis.splice(0).map((p) => p.stop("SIGKILL")));
  });
  afterAll(async () => {
    if (admin) {
      const keys = await admin.keys(`${base}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
    }
    await d?.stop();
  });
  return self;
}

/** Both figures one process answers now (`result` of each; null where it answers an error). */
export async function servedFigures(p: ServiceChild): Promise<{ total: string | null; circulating: string | null }> {
  const result = async (path: string) => {
    const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(15_000) });
    return ((await res.json()) as { result: string | null }).result;
  };
  return { total: await result("/api/supply/total"), circulating: await result("/api/supply/circulating") };
}

/** The chain's figures at its head, formatted as the API formats them. */
export async function chainFigures(d: ReadsDevnet): Promise<{ total: string; circulating: string }> {
  const t = await chainSupplyAt(d);
  return { total: formatWei2(t.total), circulating: formatWei2(t.circulating) };
}

/** Mints `amount` (wei) of the token to the deployer: both figures grow by it. */
export async function mintSupply(d: ReadsDevnet, amount: bigint): Promise<void> {
  const { deployer } = DEVNET_ACCOUNTS;
  await sendTx(d.chain, deployer.privateKey, {
    address: d.deployment.addresses.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [deployer.address, amount],
  });
}

/** One JSON-RPC call to `url` (a node, anvil's own methods included): its `result`. */
export async function rpcResult(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}
