/**
 * The start-up check that the node behind RPC_URL serves the chain the manifest was deployed on, and answers. Both
 * production processes run it before anything else talks to the node: the API process (api/server/process.ts) and
 * the indexer (ponder.config.ts, before Ponder's first request). Ponder's own RPC diagnostic only warns on a
 * mismatch, and behind the indexer's outage gate (indexer/outageGate.ts) it waits for a silent node for ever; an
 * API that quotes and prepares calldata against the wrong chain, or an indexer that cannot reach its node, must not
 * start at all. Messages name the variable and the host (redactUrl), never the URL's secret part.
 */
import { ConfigError } from "../config";
import { type RpcClient, RpcError } from "./rpc";

export class ChainIdMismatchError extends ConfigError {
  override name = "ChainIdMismatchError";
}

export type CheckRpcChainIdParameters = {
  rpc: RpcClient;
  /** The manifest's chainId. */
  expected: number;
  /** The variable that named the node, for the message. */
  variable?: string;
  /** Tries before giving up on an unreachable node (a deploy often races the node's own start). */
  attempts?: number;
  retryDelayMs?: number;
};

/** Resolves when eth_chainId equals `expected`; throws ConfigError otherwise (mismatch, unreadable, unreachable). */
export async function checkRpcChainId({
  rpc,
  expected,
  variable = "RPC_URL",
  attempts = 3,
  retryDelayMs = 500,
}: CheckRpcChainIdParameters): Promise<void> {
  const where = `${variable} at ${rpc.redactedUrl}`;
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    let actual: number;
    try {
      // Decoded inside the call, so a malformed answer is counted as one (api/chain/rpc.ts).
      actual = await rpc.request(
        { method: "eth_chainId", params: [] },
        { decode: (result) => chainIdOf(result, where) },
      );
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      last = error;
      // A JSON-RPC error is an answer, not an outage: retrying will not change it.
      const transient = error instanceof RpcError && error.kind !== "rpc" && error.kind !== "invalid";
      if (transient && attempt < attempts) {
        await new Promise((r) => setTimeout(r, retryDelayMs));
        continue;
      }
      break;
    }
    if (actual !== expected) {
      throw new ChainIdMismatchError(
        `invalid configuration: ${where} serves chain id ${actual}, but the manifest is for chain id ${expected}`,
      );
    }
    return;
  }
  // RpcError messages carry the method and kind only (rpc.ts never puts the URL in them).
  const reason = last instanceof RpcError ? `${last.kind}: ${last.message}` : "unknown failure";
  throw new ConfigError(`invalid configuration: ${where}: could not read eth_chainId (${reason})`);
}

function chainIdOf(result: unknown, where: string): number {
  if (typeof result !== "string" || !/^0x[0-9a-fA-F]{1,16}$/.test(result)) {
    throw new ConfigError(`invalid configuration: ${where}: eth_chainId answered a malformed value`);
  }
  return Number.parseInt(result, 16);
}
