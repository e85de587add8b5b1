import type { Hono } from "hono";
import { type Address, encodeFunctionData } from "viem";
import { AssetTokenAbi, LpStakingVault7DAbi, ShareholderRoyaltiesAbi } from "../../../abis";
import { MulticallError, readUint256sAtOneBlock } from "../../chain/multicall";
import type { AppDeps } from "../../deps";
import { ChainUnreadyError, StateReadFailedError } from "../../http/errors";
import { parseAddress, parseQuery } from "../../http/params";
import type { LiveLock, LockStore } from "../../locks/types";
import { deployedAddress, type Manifest } from "../../manifest";
import type { Logger } from "../../observability/logger";
import { addressString, array, boolean, constant, integer, object, uintString } from "../../openapi/jsonSchema";
import type { RouteDefinition } from "../../openapi/routeDefinition";

/**
 * GET /state/:address (spec §2.3, §4.2; protocol.md §5): the four balances from the chain in one
 * deployless-multicall eth_call pinned to one block, the lock list from the index. A lock-list failure
 * degrades to source "rpc" with no locks; a balance failure fails the request (STATE_READ_FAILED).
 */

export type StateSource = "subgraph+rpc" | "rpc";

/** The four balance reads, in response order. A missing contract is CHAIN_UNREADY: no half snapshot. */
function balanceCalls(manifest: Manifest, user: Address) {
  const need = (name: "AssetToken" | "LpStakingVault7D" | "ShareholderRoyalties") => {
    const address = deployedAddress(manifest, name);
    if (!address) throw new ChainUnreadyError(name, manifest.chain);
    return address;
  };
  const token = need("AssetToken");
  const vault = need("LpStakingVault7D");
  const royalties = need("ShareholderRoyalties");
  return [
    { target: token, callData: encodeFunctionData({ abi: AssetTokenAbi, functionName: "balanceOf", args: [user] }) },
    {
      target: vault,
      callData: encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "stakedBalance", args: [user] }),
    },
    {
      target: royalties,
      callData: encodeFunctionData({ abi: ShareholderRoyaltiesAbi, functionName: "claimableEth", args: [user] }),
    },
    { target: vault, callData: encodeFunctionData({ abi: LpStakingVault7DAbi, functionName: "earned", args: [user] }) },
  ];
}

/**
 * How long the lock list may take before the snapshot goes out without it. An indexed query answers in
 * milliseconds; a database that hangs must not hold a balance read that is already done for the whole
 * upstream timeout.
 */
export const LOCKS_BUDGET_MS = 2_000;

/** The user's live locks, or null when the index is absent, not caught up, failing or too slow. */
async function locksFromIndex(
  locks: LockStore | null,
  user: Address,
  timeoutMs: number,
  logger: Logger,
): Promise<LiveLock[] | null> {
  if (!locks) return null;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      logger.warn("lock index too slow; state answers source rpc", { timeoutMs });
      resolve(null);
    }, timeoutMs);
  });
  const query = (async () => ((await locks.isReady()) ? await locks.liveLocksOf(user) : null))().catch(
    (error: Error) => {
      console.warn(`[state] lock index unavailable, answering source "rpc": ${error.name}`);
      return null;
    },
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const lockSchema = object({
  tokenId: uintString("The lock's token id."),
  amountWei: uintString("Locked token amount (wei)."),
  lockEnd: uintString("Unix time (seconds) the lock ends; an AutoMax lock keeps renewing to now + 365 days."),
  autoMax: boolean("Whether the lock is kept at the maximum length."),
});

/** The route's documented face (api/openapi, the MCP tool get_state); the handler below uses its path and params. */
export const stateRoute = {
  path: "/state/:address",
  operationId: "get_state",
  summary: "Read a wallet's balances and locks",
  description:
    "The wallet's token balance, staked LP, ETH royalties waiting to be collected and LP rewards waiting to be " +
    "harvested, read on chain at one block, plus its live vote-escrow locks from the index. `source` is " +
    '"subgraph+rpc" when the locks come from the caught-up index, else "rpc" with `veLocks: []`.',
  pathParams: { address: { kind: "address", required: true, description: "The wallet to read." } },
  query: {},
  errors: ["BAD_PARAMS", "CHAIN_UNREADY", "STATE_READ_FAILED"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  response: {
    schema: object({
      ok: constant(true),
      source: { type: "string", enum: ["subgraph+rpc", "rpc"], description: "Where the lock list came from." },
      chainId: integer("The chain the balances were read on."),
      blockNumber: uintString("The block every balance was read at."),
      user: object({
        address: addressString("The wallet, EIP-55 checksummed."),
        claimBalanceWei: uintString("Token (AssetToken) balance in the wallet (wei)."),
        lpStakedWei: uintString("LP staked in LpStakingVault7D (wei)."),
        pendingRoyaltiesEthWei: uintString("Shareholder royalties ready to collect (ETH wei)."),
        pendingLpRewardsWei: uintString("LP staking rewards ready to harvest (token wei)."),
        veLocks: array(lockSchema, "Live locks (amount > 0), by token id; empty when source is rpc."),
      }),
    }),
    example: {
      ok: true,
      source: "subgraph+rpc",
      chainId: 8453,
      blockNumber: "38118524",
      user: {
        address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        claimBalanceWei: "52500000000000000000000",
        lpStakedWei: "250000000000000000000",
        pendingRoyaltiesEthWei: "120000000000000000",
        pendingLpRewardsWei: "3400000000000000000",
        veLocks: [
          { tokenId: "1", amountWei: "10000000000000000000000", lockEnd: "1795000000", autoMax: false },
          { tokenId: "2", amountWei: "2000000000000000000000", lockEnd: "1798000000", autoMax: true },
        ],
      },
    },
  },
} as const satisfies RouteDefinition;

export function registerStateRoutes(v1: Hono, deps: AppDeps): void {
  v1.get(stateRoute.path, async (c) => {
    const user = parseAddress("address", c.req.param("address"));
    parseQuery(c.req.url, stateRoute.query); // no query parameters: any given one is BAD_PARAMS
    const calls = balanceCalls(deps.config.manifest, user);
    const rpc = deps.rpc;
    if (!rpc) throw new StateReadFailedError("No RPC endpoint is configured.", { upstream: "unconfigured" });

    const [balances, locks] = await Promise.all([
      readUint256sAtOneBlock(rpc, calls).catch((error: unknown) => {
        if (error instanceof MulticallError) {
          throw new StateReadFailedError("Reading on-chain state failed upstream.", {
            upstream: error.reason === "transport" ? error.upstream : error.reason,
          });
        }
        throw error;
      }),
      locksFromIndex(deps.locks, user, Math.min(deps.config.rpcTimeoutMs, LOCKS_BUDGET_MS), deps.logger),
    ]);
    const [claimBalanceWei, lpStakedWei, pendingRoyaltiesEthWei, pendingLpRewardsWei] = balances.values;
    const source: StateSource = locks ? "subgraph+rpc" : "rpc";
    c.header("cache-control", "no-store");
    return c.json({
      ok: true,
      source,
      chainId: deps.config.chainId,
      blockNumber: balances.blockNumber.toString(),
      user: {
        address: user,
        claimBalanceWei: claimBalanceWei!.toString(),
        lpStakedWei: lpStakedWei!.toString(),
        pendingRoyaltiesEthWei: pendingRoyaltiesEthWei!.toString(),
        pendingLpRewardsWei: pendingLpRewardsWei!.toString(),
        // A burned or emptied lock must never be listed (protocol.md §2), whatever the store returns.
        veLocks: (locks ?? [])
          .filter((l) => l.amount > 0n)
          .map((l) => ({
            tokenId: l.tokenId.toString(),
            amountWei: l.amount.toString(),
            lockEnd: l.lockEnd.toString(),
            autoMax: l.autoMax,
          })),
      },
    });
  });
}
