import { type Abi, type Address, type ContractFunctionName, type Hex, parseAbi } from "viem";
import { type AggregateMember, type AggregateResult, tryBlockAndAggregateCodec } from "./aggregateCodec";
import { MULTICALL3_CREATION_CODE } from "./multicall3Bytecode";
import { decodeView, readView, type ViewCall, ViewReadError, type ViewResult } from "./readView";
import { type RpcClient, RpcError } from "./rpc";

/**
 * Several view reads in ONE eth_call, all at ONE block, through the one way to read a view
 * (api/chain/readView.ts): the outer Multicall3 call is a readView, each member's answer a decodeView by the
 * member's own ABI, and every failure one ViewReadError (a member's carries its position: `member`). Where the
 * node has Multicall3 (at its canonical address on Base, Base Sepolia and our devnet, which installs it:
 * devnet/multicall3.ts; checked at start-up: api/chain/multicall3.ts) the call goes to it: ~0.2 KB of call data for
 * four reads. Elsewhere Multicall3's creation code runs "deployless" (readView's `code`), ~12 KB per call but
 * needing nothing on chain.
 * tryBlockAndAggregate also returns block.number, which tells the caller which block the values belong to
 * without a second round trip. (viem's exported multicall3Abi lacks tryBlockAndAggregate, hence parseAbi.)
 */

/** Multicall3's address on every chain it was deployed to with its keyless deployer. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Chains known to have Multicall3 at MULTICALL3_ADDRESS: Base, Base Sepolia, and the devnet (it installs it). */
export const CANONICAL_MULTICALL3_CHAINS: ReadonlySet<number> = new Set([8453, 84532, 31337]);

export { MULTICALL3_CREATION_CODE };

/** How a multicall reaches Multicall3: the address of a deployed one, or its creation code inside the call. */
export type MulticallVia = Address | "deployless";

/**
 * The way to assume without asking the node (an app that skipped the start-up check: tests, benches): the
 * canonical address on the chains known to have it, else deployless. The API process asks instead.
 */
export const multicallViaFor = (chainId: number): MulticallVia =>
  CANONICAL_MULTICALL3_CHAINS.has(chainId) ? MULTICALL3_ADDRESS : "deployless";

// Declared `view` (it is `payable` on chain; the selector is the same): the service only ever eth_calls it.
export const MULTICALL3_ABI = parseAbi([
  "function tryBlockAndAggregate(bool requireSuccess, (address target, bytes callData)[] calls) view returns (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[] returnData)",
]);

export type MulticallResult = { blockNumber: bigint; results: readonly AggregateResult[] };

export type MulticallOptions = {
  /** Default "deployless" (works on any chain). */
  via?: MulticallVia;
  /** The block to read at (default: latest). */
  block?: bigint;
};

const OUTER = "tryBlockAndAggregate()";

/** The outer view: Multicall3.tryBlockAndAggregate(false, calls), at its address or deployless. */
export function multicallView(
  calls: readonly AggregateMember[],
  via: MulticallVia = "deployless",
): ViewCall<typeof MULTICALL3_ABI, "tryBlockAndAggregate"> {
  return {
    address: via === "deployless" ? MULTICALL3_ADDRESS : via,
    abi: MULTICALL3_ABI,
    functionName: "tryBlockAndAggregate",
    args: [false, calls],
    codec: tryBlockAndAggregateCodec,
    ...(via === "deployless" ? { code: MULTICALL3_CREATION_CODE } : {}),
  };
}

/** One round trip: every call's raw (success, returnData) and the block number they were read at. */
export async function multicallAtOneBlock(
  rpc: RpcClient | null,
  calls: readonly AggregateMember[],
  options: MulticallOptions = {},
): Promise<MulticallResult> {
  const block = options.block === undefined ? "latest" : (`0x${options.block.toString(16)}` as Hex);
  const [blockNumber, , results] = await readView(rpc, multicallView(calls, options.via), {
    block,
    accept: ([, , answers]) => {
      if (answers.length !== calls.length) {
        throw new ViewReadError(OUTER, "malformed", {
          cause: new Error(`${answers.length} answers for ${calls.length} calls`),
        });
      }
    },
  });
  return { blockNumber, results };
}

/**
 * A member's answer decoded by its own view's ABI (decodeView: exact re-encode check). A member that
 * reverted fails as kind "rpc" with its revert data kept (ViewReadError.revertData), like a reverted eth_call.
 */
export function decodeMember<TAbi extends Abi, TName extends ContractFunctionName<TAbi, "view" | "pure">>(
  view: ViewCall<TAbi, TName>,
  result: AggregateResult | undefined,
  member: number,
): ViewResult<TAbi, TName> {
  const label = `${view.functionName}()`;
  if (!result) throw new ViewReadError(label, "malformed", { member });
  if (!result.success) {
    const cause = new RpcError("rpc", `${label} reverted inside the multicall`, { data: result.returnData });
    throw new ViewReadError(label, "rpc", { cause, member });
  }
  try {
    return decodeView(view, result.returnData);
  } catch (error) {
    throw new ViewReadError(label, "malformed", { cause: error, member });
  }
}
