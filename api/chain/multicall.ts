import { createRequire } from "node:module";
import path from "node:path";
import {
  type Address,
  deploylessCallViaBytecodeBytecode,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  parseAbi,
} from "viem";
import { decodeTryBlockAndAggregate, encodeTryBlockAndAggregate } from "./aggregateCodec";
import { type RpcClient, RpcError } from "./rpc";

/**
 * Several view reads in ONE eth_call, all at ONE block. Where the chain has Multicall3 at its canonical
 * address (Base, Base Sepolia, and our devnet, which installs it: devnet/multicall3.ts) the call goes to
 * it: ~0.2 KB of call data for four reads. Elsewhere Multicall3's creation code runs "deployless" (viem's
 * CREATE2 wrapper deploys it inside the call), ~12 KB per call but needing nothing on chain.
 * tryBlockAndAggregate also returns block.number, which tells the caller which block the values belong to
 * without a second round trip. (viem's exported multicall3Abi lacks tryBlockAndAggregate, hence parseAbi.)
 */

/** Multicall3's address on every chain it was deployed to with its keyless deployer. */
export const MULTICALL3_ADDRESS: Address = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** Chains known to have Multicall3 at MULTICALL3_ADDRESS: Base, Base Sepolia, and the devnet (it installs it). */
export const CANONICAL_MULTICALL3_CHAINS: ReadonlySet<number> = new Set([8453, 84532, 31337]);

/** How a multicall reaches Multicall3: the deployed contract, or its creation code inside the call. */
export type MulticallVia = "canonical" | "deployless";

export const multicallViaFor = (chainId: number): MulticallVia =>
  CANONICAL_MULTICALL3_CHAINS.has(chainId) ? "canonical" : "deployless";

const MULTICALL3_ABI = parseAbi([
  "function tryBlockAndAggregate(bool requireSuccess, (address target, bytes callData)[] calls) payable returns (uint256 blockNumber, bytes32 blockHash, (bool success, bytes returnData)[] returnData)",
]);

/**
 * Multicall3's creation code, taken from the installed viem (which uses it for its own deployless
 * multicall) instead of a hand-pasted copy. viem keeps it out of its public exports, so it is loaded
 * from viem's package directory; a viem without it stops the process at start-up, loudly.
 */
export const MULTICALL3_CREATION_CODE: Hex = (() => {
  const require = createRequire(import.meta.url);
  const viemDir = path.dirname(require.resolve("viem/package.json"));
  const code: unknown = require(path.join(viemDir, "_cjs", "constants", "contracts.js")).multicall3Bytecode;
  if (typeof code !== "string" || !/^0x(?:[0-9a-f]{2})+$/.test(code)) {
    throw new Error("viem no longer ships multicall3Bytecode in _cjs/constants/contracts.js");
  }
  return code as Hex;
})();

const DEPLOYLESS_CONSTRUCTOR = [
  { type: "constructor", stateMutability: "nonpayable", inputs: [{ type: "bytes" }, { type: "bytes" }] },
] as const;

export type ViewCall = { target: Address; callData: Hex };

export type MulticallResult = { blockNumber: bigint; results: { success: boolean; returnData: Hex }[] };

/** Why a multicall read failed: the transport (with the RpcError kind) or a malformed answer. */
export class MulticallError extends Error {
  override name = "MulticallError";
  constructor(
    readonly reason: "transport" | "malformed" | "subcall",
    message: string,
    readonly upstream?: string,
  ) {
    super(message);
  }
}

const word = (n: number) => n.toString(16).padStart(64, "0");
const padded = (hexBody: string) => hexBody.padEnd(Math.ceil(hexBody.length / 64) * 64, "0");

/**
 * Everything of the deployless call data up to the second constructor argument: the wrapper's code,
 * the two argument offsets and the Multicall3 creation code. It never changes, so it is ABI-encoded
 * once (the same bytes encodeDeployData produces, pinned by test/unit/multicall.test.ts).
 */
const DEPLOYLESS_PREFIX: Hex = (() => {
  const code = MULTICALL3_CREATION_CODE.slice(2);
  const secondOffset = 0x40 + 32 + padded(code).length / 2;
  return `${deploylessCallViaBytecodeBytecode}${word(0x40)}${word(secondOffset)}${word(code.length / 2)}${padded(code)}` as Hex;
})();

/** The eth_call params of a deployless Multicall3 tryBlockAndAggregate(false, calls). */
export function deploylessMulticallRequest(calls: readonly ViewCall[]): [{ data: Hex }, "latest"] {
  const aggregate = encodeTryBlockAndAggregate(calls);
  const body = aggregate.slice(2);
  return [{ data: `${DEPLOYLESS_PREFIX}${word(body.length / 2)}${padded(body)}` }, "latest"];
}

/** The same call data through viem's generic encoder (slower; kept to pin DEPLOYLESS_PREFIX in tests). */
export function deploylessMulticallDataViaViem(calls: readonly ViewCall[]): Hex {
  const aggregate = encodeFunctionData({
    abi: MULTICALL3_ABI,
    functionName: "tryBlockAndAggregate",
    args: [false, calls],
  });
  return encodeDeployData({
    abi: DEPLOYLESS_CONSTRUCTOR,
    bytecode: deploylessCallViaBytecodeBytecode,
    args: [MULTICALL3_CREATION_CODE, aggregate],
  });
}

/** The eth_call params of Multicall3.tryBlockAndAggregate(false, calls) at its canonical address. */
export function canonicalMulticallRequest(
  calls: readonly ViewCall[],
  block: bigint | "latest" = "latest",
): [{ to: Address; data: Hex }, string] {
  return [
    { to: MULTICALL3_ADDRESS, data: encodeTryBlockAndAggregate(calls) },
    block === "latest" ? block : `0x${block.toString(16)}`,
  ];
}

export type MulticallOptions = {
  /** Default "deployless" (works on any chain). */
  via?: MulticallVia;
  /** The block to read at (default: latest). */
  block?: bigint;
};

/** One round trip: every call's raw (success, returnData) and the block number they were read at. */
export async function multicallAtOneBlock(
  rpc: RpcClient,
  calls: readonly ViewCall[],
  options: MulticallOptions = {},
): Promise<MulticallResult> {
  let params: readonly unknown[];
  if (options.via === "canonical") params = canonicalMulticallRequest(calls, options.block ?? "latest");
  else {
    const [tx] = deploylessMulticallRequest(calls);
    params = [tx, options.block === undefined ? "latest" : `0x${options.block.toString(16)}`];
  }
  let raw: unknown;
  try {
    raw = await rpc.request({ method: "eth_call", params });
  } catch (error) {
    const kind = error instanceof RpcError ? error.kind : "unreachable";
    throw new MulticallError("transport", `multicall eth_call failed (${kind})`, kind);
  }
  if (typeof raw !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(raw)) {
    throw new MulticallError("malformed", "multicall answer is not hex data");
  }
  let decoded: ReturnType<typeof decodeTryBlockAndAggregate>;
  try {
    decoded = decodeTryBlockAndAggregate(raw as Hex);
  } catch {
    throw new MulticallError("malformed", "multicall answer does not decode");
  }
  const { blockNumber, results } = decoded;
  if (results.length !== calls.length) throw new MulticallError("malformed", "multicall answer has the wrong length");
  return { blockNumber, results: results.map((r) => ({ success: r.success, returnData: r.returnData })) };
}

const WORD = /^0x[0-9a-fA-F]{64}$/;

/**
 * Reads uint256 views at one block in one round trip. Each sub-call must succeed and return exactly
 * one 32-byte word (spec §2.2's rule, applied per call); anything else fails the whole read.
 */
export async function readUint256sAtOneBlock(
  rpc: RpcClient,
  calls: readonly ViewCall[],
  options: MulticallOptions = {},
): Promise<{ blockNumber: bigint; values: bigint[] }> {
  const { blockNumber, results } = await multicallAtOneBlock(rpc, calls, options);
  const values = results.map((r, i) => {
    if (!r.success) throw new MulticallError("subcall", `view call ${i} reverted`);
    if (!WORD.test(r.returnData)) throw new MulticallError("subcall", `view call ${i} did not return one 32-byte word`);
    return BigInt(r.returnData);
  });
  return { blockNumber, values };
}
