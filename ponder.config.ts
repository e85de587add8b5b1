import { createConfig } from "ponder";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi, VeLockNFTAbi } from "./abis";
import { checkRpcChainId } from "./api/chain/chainId";
import { createRpcClient } from "./api/chain/rpc";
import { indexerSettings } from "./indexer/config";
import { outageGatedTransport } from "./indexer/outageGate";

// NETWORK selects deployments/<network>.json (MANIFEST_FILE overrides the path). A bad setting stops `ponder start`
// with one line naming the variable, as the API process does: thrown, Ponder would print it twice with a stack and a
// code frame. See indexer/config.ts (and api/config.ts) for every variable.
const settings = (() => {
  try {
    return indexerSettings();
  } catch (error) {
    const name = (error as Error).name;
    if (name !== "ConfigError" && name !== "ManifestError") throw error;
    const message = (error as Error).message;
    process.stderr.write(
      `${name === "ManifestError" ? `invalid configuration: MANIFEST_FILE / NETWORK: ${message}` : message}\n`,
    );
    process.exit(1);
  }
})();

/** One JSON line per change of the node's state (the URL never appears: it may carry an API key). */
const logNodeState = (event: { state: "down"; reason: string } | { state: "up"; downMs: number }) =>
  process.stderr.write(
    `${JSON.stringify({
      time: new Date().toISOString(),
      level: event.state === "down" ? "warn" : "info",
      msg: event.state === "down" ? "rpc node not answering; requests wait for it" : "rpc node answering again",
      chain: settings.chainName,
      ...(event.state === "down" ? { reason: event.reason.slice(0, 120) } : { downMs: event.downMs }),
    })}\n`,
  );

/**
 * The node checked as the API process checks it (api/chain/chainId.ts), before Ponder's first request to it: its
 * eth_chainId must be the manifest's, read within 3 tries (0.5 s apart when refused, RPC_TIMEOUT_MS each when
 * silent). Otherwise one line naming RPC_URL (its key redacted) and exit 1, so a process manager sees the failure:
 * Ponder's own diagnostic only warns on a mismatch, and behind the outage gate it would wait for a silent node for
 * ever. Run by the first request, so the commands that never reach the node (`ponder db …`, codegen) never check.
 */
const checkNode = async () => {
  try {
    await checkRpcChainId({
      rpc: createRpcClient({ url: settings.rpcUrl, timeoutMs: settings.rpcTimeoutMs }),
      expected: settings.chainId,
      variable: settings.rpcUrlVariable,
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name !== "ConfigError" && name !== "ChainIdMismatchError") throw error;
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
};

export default createConfig({
  ...(settings.database ? { database: settings.database } : {}),
  chains: {
    [settings.chainName]: {
      id: settings.chainId,
      // A node outage is waited out, not failed into Ponder's retry ladder (indexer/outageGate.ts).
      rpc: outageGatedTransport(settings.rpcUrl, { onChange: logNodeState, beforeFirstRequest: checkNode }),
      pollingInterval: settings.pollingIntervalMs,
      disableCache: settings.disableCache,
    },
  },
  contracts: {
    VeLockNFT: {
      chain: settings.chainName,
      abi: VeLockNFTAbi,
      address: settings.veLockNFT.address,
      startBlock: settings.veLockNFT.startBlock,
    },
    // The official leaderboards' inputs (protocol.md §9).
    MineCore: { chain: settings.chainName, abi: MineCoreAbi, ...settings.boards.MineCore },
    Furnace: { chain: settings.chainName, abi: FurnaceAbi, ...settings.boards.Furnace },
    ShareholderRoyalties: {
      chain: settings.chainName,
      abi: ShareholderRoyaltiesAbi,
      ...settings.boards.ShareholderRoyalties,
    },
  },
});
