import type { Hono } from "hono";
import type { Address } from "viem";
import { ViewReadError } from "../../chain/readView";
import type { CancelSignal } from "../../chain/rpc";
import type { AppDeps } from "../../deps";
import { CancelSource, deadlineRpc, requestDeadline, v1DeadlineMs } from "../../http/cancellation";
import type { AppEnv } from "../../http/env";
import { BadParamsError, ChainUnreadyError, StateReadFailedError } from "../../http/errors";
import { parseAddress, parseQuery } from "../../http/params";
import { deployedAddress, type Manifest } from "../../manifest";
import { causeOf, type ThrottledWarn, throttledWarnings } from "../../observability/throttle";
import { behind, MIN_BLOCK_PARAM, WAIT_MS_PARAM, waitForHead } from "../../read/atLeast";
import { type IndexedLockIds, type LockStore, QueryCancelledError } from "../../read/contract";
import { HeadWatch } from "../../read/headWatch";
import type { RouteDefinition } from "../../route/definition";
import { addressString, array, boolean, constant, integer, object, uintString } from "../../route/jsonSchema";
import { LockIdHints } from "./idHints";
import { readSnapshot, type SnapshotContracts } from "./snapshot";

/**
 * GET /state/:address (spec §2.3, §4.2; protocol.md §5; issue 13): one block B, read in one Multicall3
 * eth_call — the balances, veBalanceOf, and every lock's getLockInfo at B. The index only names the token
 * ids to read; api/mcp/v1/snapshot.ts proves the set complete at B (ownerOf + the NFT count) or says it is
 * not. `source` is "subgraph+rpc" only for a proven set; otherwise "rpc" with the locks that are proven the
 * user's at B. A balance failure fails the request (STATE_READ_FAILED).
 */

export type StateSource = "subgraph+rpc" | "rpc";

/** The contracts a snapshot reads. A missing one is CHAIN_UNREADY: no half snapshot. */
function snapshotContracts(manifest: Manifest): SnapshotContracts {
  const need = (name: "AssetToken" | "LpStakingVault7D" | "ShareholderRoyalties" | "VeLockNFT") => {
    const address = deployedAddress(manifest, name);
    if (!address) throw new ChainUnreadyError(name, manifest.chain);
    return address;
  };
  return {
    token: need("AssetToken"),
    vault: need("LpStakingVault7D"),
    royalties: need("ShareholderRoyalties"),
    ve: need("VeLockNFT"),
  };
}

/**
 * How long the index read may take before the snapshot goes out without it. An indexed query answers in
 * milliseconds; a database that hangs must not hold the request for the whole upstream timeout.
 */
export const LOCKS_BUDGET_MS = 2_000;

/** The index's token ids for the user and its block, or null when the index is absent, failing or too slow. */
async function idsFromIndex(
  locks: LockStore | null,
  user: Address,
  timeoutMs: number,
  warn: ThrottledWarn,
  request: CancelSignal | undefined,
): Promise<IndexedLockIds | null> {
  if (!locks) return null;
  // The query is cancelled when the budget passes or the request is abandoned: its answer would not be used.
  const stop = new CancelSource();
  const abandoned = () => stop.abort(request?.reason);
  request?.addEventListener("abort", abandoned);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => {
      stop.abort("budget");
      warn("index-slow", "lock index too slow; state answers source rpc", {
        cause: `no answer within ${timeoutMs} ms`,
      });
      resolve(null);
    }, timeoutMs);
  });
  const query = locks.lockIdsOf(user, { signal: stop }).catch((error: Error) => {
    if (!(error instanceof QueryCancelledError)) {
      warn("index-unavailable", "lock index unavailable; state answers source rpc", { cause: causeOf(error) });
    }
    return null;
  });
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
    request?.removeEventListener("abort", abandoned);
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
    "The wallet's token balance, staked LP, ETH royalties waiting to be collected, LP rewards waiting to be " +
    "harvested, vote-escrow balance and live vote-escrow locks, all read on chain at one block (`blockNumber`) " +
    "in one call: each lock's amount, end and AutoMax flag are what the lock contract reports at that block " +
    "(an AutoMax lock ends that block's time + 365 days). The index only says which locks to read. `source` is " +
    '"subgraph+rpc" when the lock list is proven complete at that block, else "rpc" with only the locks proven ' +
    "to be the wallet's (possibly none). `indexedBlock` says how far the index was. With `minBlock`, " +
    "`blockNumber` is at least that block: if the node is not there yet, the read waits up to `waitMs` for it " +
    "(then 409 INDEX_BEHIND with the node's head).",
  pathParams: { address: { kind: "address", required: true, description: "The wallet to read." } },
  query: {
    minBlock: {
      ...MIN_BLOCK_PARAM,
      description:
        "Read at this block or later: a client that saw its transaction mined in block N asks for state that " +
        "includes it. If the node's head is below N, the read waits up to `waitMs` for the node, then answers 409 " +
        "INDEX_BEHIND with the node's head and `retryAfterSec`. More than 5 blocks beyond the node's head is 400.",
    },
    waitMs: WAIT_MS_PARAM,
  },
  errors: ["BAD_PARAMS", "INDEX_BEHIND", "CHAIN_UNREADY", "STATE_READ_FAILED", "UPSTREAM_UNAVAILABLE"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  response: {
    schema: object({
      ok: constant(true),
      source: {
        type: "string",
        enum: ["subgraph+rpc", "rpc"],
        description:
          '"subgraph+rpc": veLocks is every live lock of the wallet at blockNumber. "rpc": the set could not be ' +
          "proven complete (index unavailable or too far behind); veLocks holds only locks proven the wallet's.",
      },
      chainId: integer("The chain the balances were read on."),
      blockNumber: uintString("The block every figure of the answer was read at."),
      indexedBlock: {
        anyOf: [
          uintString(
            "The last block the lock index had processed, as read for this answer or by the server's poll of the " +
              "index at most 1 s before it.",
          ),
          { type: "null" },
        ],
        description:
          "The last block the lock index had processed (read for this answer, or polled at most 1 s before it); " +
          "null when the index was unavailable.",
      },
      user: object({
        address: addressString("The wallet, EIP-55 checksummed."),
        claimBalanceWei: uintString("Token (AssetToken) balance in the wallet (wei)."),
        lpStakedWei: uintString("LP staked in LpStakingVault7D (wei)."),
        pendingRoyaltiesEthWei: uintString("Shareholder royalties ready to collect (ETH wei)."),
        pendingLpRewardsWei: uintString("LP staking rewards ready to harvest (token wei)."),
        veBalanceWei: uintString("Vote-escrow balance, VeLockNFT.veBalanceOf (wei)."),
        veLocks: array(
          lockSchema,
          "Live locks (amount > 0), by token id, as getLockInfo reports them at blockNumber; with source rpc, " +
            "only those proven the wallet's.",
        ),
      }),
    }),
    example: {
      ok: true,
      source: "subgraph+rpc",
      chainId: 8453,
      blockNumber: "38118524",
      indexedBlock: "38118524",
      user: {
        address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        claimBalanceWei: "52500000000000000000000",
        lpStakedWei: "250000000000000000000",
        pendingRoyaltiesEthWei: "120000000000000000",
        pendingLpRewardsWei: "3400000000000000000",
        veBalanceWei: "11473972602739726027397",
        veLocks: [
          { tokenId: "1", amountWei: "10000000000000000000000", lockEnd: "1795000000", autoMax: false },
          { tokenId: "2", amountWei: "2000000000000000000000", lockEnd: "1801654524", autoMax: true },
        ],
      },
    },
  },
} as const satisfies RouteDefinition;

/** The node's head is the snapshot's block itself (waitForHead of "node" reads no chain head). */
const nullHead = () => Promise.resolve(null);

export function registerStateRoutes(v1: Hono<AppEnv>, deps: AppDeps): void {
  const hints = new LockIdHints();
  // The node's head, for reads that wait for a `minBlock`: one eth_blockNumber poll for all of them, while any waits.
  const nodeRpc = deps.rpc;
  const nodeHead = new HeadWatch({
    onWait: (outcome) => deps.metrics.minBlockWaits.inc({ of: "node", outcome }),
    ...(nodeRpc
      ? {
          read: async () => {
            const raw = await nodeRpc.request({ method: "eth_blockNumber", params: [] });
            return typeof raw === "string" && /^0x[0-9a-f]{1,16}$/.test(raw) ? BigInt(raw) : null;
          },
        }
      : {}),
  });
  deps.metrics.caches.register("state_hints", { stats: hints.stats, entries: () => hints.size });
  // An index outage is a few lines a minute with their cause, not one per request.
  const warn = throttledWarnings(deps.logger);
  v1.get(stateRoute.path, async (c) => {
    const user = parseAddress("address", c.req.param("address"));
    const q = parseQuery(c.req.url, stateRoute.query);
    const target = q.minBlock === undefined ? null : { minBlock: q.minBlock, waitMs: Number(q.waitMs) };
    if (target === null && new URL(c.req.url, "http://x").searchParams.has("waitMs")) {
      throw new BadParamsError("waitMs is only taken with minBlock (the block to wait for).", { param: "waitMs" });
    }
    const contracts = snapshotContracts(deps.config.manifest);
    const rpc = deadlineRpc(c, deps.rpc);
    if (!rpc) throw new StateReadFailedError("No RPC endpoint is configured.", { upstream: "unconfigured" });

    // The index's ids decide what the eth_call reads; with a hint from this user's last read both go at once, or,
    // while the index's watermark is fresh, the eth_call alone (the SQL only if the chain disproves the hint).
    const read = () =>
      readSnapshot({
        rpc,
        via: deps.multicall,
        contracts,
        user,
        // A quarter of the route's deadline at most: the chain read that follows must still fit in it.
        index: () =>
          idsFromIndex(
            deps.index.locks,
            user,
            Math.min(LOCKS_BUDGET_MS, v1DeadlineMs(deps.config.rpcTimeoutMs) / 4),
            warn,
            requestDeadline(c),
          ),
        hint: hints.get(user),
        // Only with an index to ask when the chain disproves the hint.
        watermark: deps.index.locks ? deps.index.watermark?.fresh() : undefined,
      }).catch((error: unknown) => {
        if (error instanceof ViewReadError) {
          // A member's failure (reverted, or not its view's exact encoding) is "subcall"; the call's own, its kind.
          throw new StateReadFailedError("Reading on-chain state failed upstream.", {
            upstream: error.member === undefined ? error.kind : "subcall",
          });
        }
        throw error;
      });
    let snap = await read();
    nodeHead.saw(snap.blockNumber);
    // Never below minBlock: the node is behind it, so wait for the node (one poll for all waiters), read again.
    if (target !== null && snap.blockNumber < target.minBlock) {
      const want = { ...target, block: target.minBlock, param: "minBlock" };
      await waitForHead({ watch: nodeHead, c, target: want, head: snap.blockNumber, chainHead: nullHead, of: "node" });
      snap = await read();
      if (snap.blockNumber < target.minBlock) throw behind(want, snap.blockNumber, target.waitMs, "node");
    }
    const index = snap.index;
    if (index && snap.hint) hints.set(user, snap.hint);
    deps.metrics.indexLag.observe(snap.blockNumber, index?.indexedBlock ?? null);
    const source: StateSource = index && snap.complete ? "subgraph+rpc" : "rpc";
    c.header("cache-control", "no-store");
    return c.json({
      ok: true,
      source,
      chainId: deps.config.chainId,
      blockNumber: snap.blockNumber.toString(),
      indexedBlock: index?.indexedBlock == null ? null : index.indexedBlock.toString(),
      user: {
        address: user,
        claimBalanceWei: snap.claimBalanceWei.toString(),
        lpStakedWei: snap.lpStakedWei.toString(),
        pendingRoyaltiesEthWei: snap.pendingRoyaltiesEthWei.toString(),
        pendingLpRewardsWei: snap.pendingLpRewardsWei.toString(),
        veBalanceWei: snap.veBalanceWei.toString(),
        // Without the index nothing names the user's locks, so nothing is listed (the reference's "rpc" answer),
        // even when this user's remembered ids could still be proven.
        veLocks: (index ? snap.locks : []).map((l) => ({
          tokenId: l.tokenId.toString(),
          amountWei: l.amount.toString(),
          lockEnd: l.lockEnd.toString(),
          autoMax: l.autoMax,
        })),
      },
    });
  });
}
