import { createConfig } from "ponder";
import { VeLockNFTAbi } from "./abis";
import { indexerSettings } from "./indexer/config";

// NETWORK selects deployments/<network>.json (MANIFEST_FILE overrides the path); a bad setting throws here,
// which stops `ponder start` with the message. See indexer/config.ts (and api/config.ts) for every variable.
const settings = indexerSettings();

export default createConfig({
  ...(settings.database ? { database: settings.database } : {}),
  chains: {
    [settings.chainName]: {
      id: settings.chainId,
      rpc: settings.rpcUrl,
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
  },
});
