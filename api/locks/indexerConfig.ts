/**
 * The indexer's settings, built from the environment and the deployment manifest. ponder.config.ts turns them
 * into Ponder's createConfig; anything missing or malformed throws one IndexerConfigError naming the variable,
 * file or key, so `ponder start` stops at start-up instead of indexing the wrong thing.
 */
import type { Address } from "viem";
import { deployedAddress, loadManifest, NETWORKS, type Network } from "../manifest";

export class IndexerConfigError extends Error {
  override name = "IndexerConfigError";
}

export type IndexerSettings = {
  network: Network;
  chainId: number;
  /** Ponder chain name (the key of /status): the network name. */
  chainName: Network;
  rpcUrl: string;
  /** How often realtime sync polls the node for new blocks. */
  pollingIntervalMs: number;
  /**
   * Whether Ponder ignores its RPC cache (ponder_sync). Default: on for local only — the devnet is re-created from
   * scratch at the same chain id and addresses, so a cached log from an earlier chain would be a lie.
   */
  disableCache: boolean;
  veLockNFT: { address: Address; startBlock: number };
  /** undefined → Ponder's own choice (DATABASE_URL / DATABASE_PRIVATE_URL → Postgres, else PGlite in .ponder/). */
  database: { kind: "pglite"; directory: string } | undefined;
};

export const LOCAL_RPC_URL = "http://127.0.0.1:8545";

type Env = Record<string, string | undefined>;

const set = (env: Env, name: string): string | undefined => {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
};

function rpcUrlFrom(env: Env, network: Network, chainId: number): string {
  const perChain = `PONDER_RPC_URL_${chainId}`;
  const [name, value] = set(env, "RPC_URL")
    ? ["RPC_URL", set(env, "RPC_URL")]
    : set(env, perChain)
      ? [perChain, set(env, perChain)]
      : [undefined, undefined];
  if (name === undefined || value === undefined) {
    if (network === "local") return LOCAL_RPC_URL;
    throw new IndexerConfigError(`RPC_URL is required for NETWORK=${network} (or set ${perChain})`);
  }
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    // Never echo the value: RPC URLs carry API keys.
    throw new IndexerConfigError(`${name} is not a URL`);
  }
  if (protocol !== "http:" && protocol !== "https:") throw new IndexerConfigError(`${name} must be an http(s) URL`);
  return value;
}

/**
 * Reads NETWORK, MANIFEST_FILE, RPC_URL / PONDER_RPC_URL_<chainId>, PGLITE_DIR, DATABASE_URL, INDEXER_POLLING_MS,
 * INDEXER_DISABLE_CACHE.
 */
export function indexerSettings(env: Env = process.env): IndexerSettings {
  const networkValue = set(env, "NETWORK") ?? "local";
  if (!Object.hasOwn(NETWORKS, networkValue)) {
    throw new IndexerConfigError(`NETWORK must be one of ${Object.keys(NETWORKS).join(", ")} (got "${networkValue}")`);
  }
  const network = networkValue as Network;
  const manifestFile = set(env, "MANIFEST_FILE");
  let manifest: ReturnType<typeof loadManifest>;
  try {
    manifest = loadManifest(network, manifestFile);
  } catch (error) {
    const hint = manifestFile ? " (from MANIFEST_FILE)" : network === "local" ? " (run `npm run devnet:deploy`)" : "";
    throw new IndexerConfigError(`${(error as Error).message}${hint}`);
  }
  const where = manifestFile ?? `deployments/${network}.json`;
  const address = deployedAddress(manifest, "VeLockNFT");
  if (address === null) {
    throw new IndexerConfigError(`${where}: contracts.VeLockNFT is missing or the zero address; nothing to index`);
  }
  const startBlock = manifest.contracts.VeLockNFT?.startBlock;
  // Scanning Base from genesis would take days; only the devnet may default to block 0.
  if (startBlock === undefined && network !== "local") {
    throw new IndexerConfigError(`${where}: contracts.VeLockNFT.startBlock is required on ${network}`);
  }

  const pollingValue = set(env, "INDEXER_POLLING_MS");
  let pollingIntervalMs = network === "local" ? 250 : 1000;
  if (pollingValue !== undefined) {
    if (!/^[0-9]+$/.test(pollingValue) || Number(pollingValue) < 100 || Number(pollingValue) > 60_000) {
      throw new IndexerConfigError("INDEXER_POLLING_MS must be a whole number of milliseconds in [100, 60000]");
    }
    pollingIntervalMs = Number(pollingValue);
  }

  const cacheValue = set(env, "INDEXER_DISABLE_CACHE");
  if (cacheValue !== undefined && cacheValue !== "true" && cacheValue !== "false") {
    throw new IndexerConfigError("INDEXER_DISABLE_CACHE must be true or false");
  }

  const postgres = set(env, "DATABASE_URL") ?? set(env, "DATABASE_PRIVATE_URL");
  const pgliteDir = set(env, "PGLITE_DIR");
  return {
    network,
    chainId: manifest.chainId,
    chainName: network,
    rpcUrl: rpcUrlFrom(env, network, manifest.chainId),
    pollingIntervalMs,
    disableCache: cacheValue === undefined ? network === "local" : cacheValue === "true",
    veLockNFT: { address, startBlock: startBlock ?? 0 },
    // Postgres wins when both are set, as in Ponder's own selection.
    database: pgliteDir && !postgres ? { kind: "pglite", directory: pgliteDir } : undefined,
  };
}
