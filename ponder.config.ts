import { createConfig } from "ponder";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi, VeLockNFTAbi } from "./abis";
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

export default createConfig({
  ...(settings.database ? { database: settings.database } : {}),
  chains: {
    [settings.chainName]: {
      id: settings.chainId,
      // A node outage is waited out, not failed into Ponder's retry ladder (indexer/outageGate.ts).
      rpc: outageGatedTransport(settings.rpcUrl, { onChange: logNodeState }),
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
