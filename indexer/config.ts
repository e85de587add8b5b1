/**
 * The indexer's settings, derived from the one configuration (api/config.ts: one zod schema for every
 * variable) and the deployment manifest. ponder.config.ts turns them into Ponder's createConfig; anything
 * missing or malformed throws one ConfigError naming the variable, file or key, so `ponder start` stops
 * at start-up instead of indexing the wrong thing.
 */
import { type Address, zeroAddress } from "viem";
import { ConfigError, loadConfig, perChainRpcVariable } from "../api/config";
import { deployedAddress, ManifestError, type Network } from "../api/manifest";

export type IndexerSettings = {
  network: Network;
  chainId: number;
  /** Ponder chain name (the key of /status): the network name. */
  chainName: Network;
  rpcUrl: string;
  /** The variable rpcUrl came from (RPC_URL, else PONDER_RPC_URL_<chainId>), named by the start-up check's messages. */
  rpcUrlVariable: string;
  /** RPC_TIMEOUT_MS: one try of the start-up chain-id check (ponder.config.ts), as in the API process. */
  rpcTimeoutMs: number;
  /** How often realtime sync polls the node for new blocks. */
  pollingIntervalMs: number;
  /**
   * Whether Ponder ignores its RPC cache (ponder_sync). Default: on for local only — the devnet is re-created from
   * scratch at the same chain id and addresses, so a cached log from an earlier chain would be a lie.
   */
  disableCache: boolean;
  veLockNFT: { address: Address; startBlock: number };
  /**
   * The official leaderboards' sources (protocol.md §9). One the manifest lacks is followed at the zero address
   * (which emits nothing), so the indexer runs the same code on every network; a missing start block is
   * VeLockNFT's (nothing of the protocol precedes it).
   */
  boards: Record<BoardSource, { address: Address; startBlock: number }>;
  /** undefined → Ponder's own choice (DATABASE_URL / DATABASE_PRIVATE_URL → Postgres, else PGlite in .ponder/). */
  database: { kind: "pglite"; directory: string } | undefined;
};

export const BOARD_SOURCES = ["MineCore", "Furnace", "ShareholderRoyalties"] as const;
export type BoardSource = (typeof BOARD_SOURCES)[number];

const invalid = (message: string) => new ConfigError(`invalid configuration: ${message}`);

export function indexerSettings(env: Record<string, string | undefined> = process.env): IndexerSettings {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ManifestError)) throw error;
    const fromFile = (env.MANIFEST_FILE ?? "").trim() !== "";
    const local = (env.NETWORK ?? "local").trim() === "local";
    const hint = fromFile ? " (from MANIFEST_FILE)" : local ? " (run `npm run devnet:deploy`)" : "";
    throw invalid(`${error.message}${hint}`);
  }
  const { network, manifest } = config;
  if (config.rpcUrl === null) {
    throw invalid(`RPC_URL: required for NETWORK=${network} (or set ${perChainRpcVariable(manifest.chainId)})`);
  }
  const where = (env.MANIFEST_FILE ?? "").trim() || `deployments/${network}.json`;
  const address = deployedAddress(manifest, "VeLockNFT");
  if (address === null) throw invalid(`${where}: contracts.VeLockNFT is missing or the zero address; nothing to index`);
  const startBlock = manifest.contracts.VeLockNFT?.startBlock;
  // Scanning Base from genesis would take days; only the devnet may default to block 0.
  if (startBlock === undefined && network !== "local") {
    throw invalid(`${where}: contracts.VeLockNFT.startBlock is required on ${network}`);
  }
  const { pgliteDir, pollingIntervalMs, disableCache } = config.indexer;
  return {
    network,
    chainId: manifest.chainId,
    chainName: network,
    rpcUrl: config.rpcUrl,
    rpcUrlVariable: config.rpcUrlVariable,
    rpcTimeoutMs: config.rpcTimeoutMs,
    pollingIntervalMs: pollingIntervalMs ?? (network === "local" ? 250 : 1000),
    disableCache: disableCache ?? network === "local",
    veLockNFT: { address, startBlock: startBlock ?? 0 },
    boards: Object.fromEntries(
      BOARD_SOURCES.map((name) => [
        name,
        {
          address: deployedAddress(manifest, name) ?? zeroAddress,
          startBlock: manifest.contracts[name]?.startBlock ?? startBlock ?? 0,
        },
      ]),
    ) as IndexerSettings["boards"],
    // Postgres wins when both are set, as in Ponder's own selection.
    database: pgliteDir && !config.database.url ? { kind: "pglite", directory: pgliteDir } : undefined,
  };
}
