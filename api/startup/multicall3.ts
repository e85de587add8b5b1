/**
 * The start-up check of Multicall3 (MULTICALL3, api/config.ts): the API process reads the code at the address the
 * setting names and decides once how the state route's multicall reaches Multicall3 — the deployed contract, or its
 * creation code inside every call ("deployless", ~12 KB of call data instead of ~0.2 KB) — so that a node without
 * Multicall3 never turns every state read into a 502 "upstream malformed". What it decided and why is logged.
 *
 * - auto (default): the canonical address if Multicall3 is there, else deployless (a warning says why);
 * - canonical: Multicall3 must be at the canonical address, or the process refuses to start;
 * - an address: Multicall3 must be at that address, or the process refuses to start;
 * - deployless: no check; every multicall carries the creation code.
 *
 * "Multicall3 is there" means: the code's keccak256 is that of the build this project ships
 * (MULTICALL3_RUNTIME_CODE_HASH), or — another build of the same contract — the contract answers
 * tryBlockAndAggregate(false, [getBlockNumber()]) exactly as Multicall3 does, its inner block number equal to its
 * outer one.
 */
import { type Address, encodeFunctionData, type Hex, keccak256, parseAbi } from "viem";
import { MULTICALL3_ADDRESS, type MulticallVia, multicallAtOneBlock, multicallViaFor } from "../chain/multicall";
import { MULTICALL3_RUNTIME_CODE_HASH } from "../chain/multicall3Bytecode";
import { decodeView, ViewReadError } from "../chain/readView";
import { type RpcClient, RpcError } from "../chain/rpc";
import { type AppConfig, ConfigError, type Multicall3Setting } from "../config";
import type { Logger } from "../observability/logger";

export const MULTICALL3_VARIABLE = "MULTICALL3";

/** How the app reaches Multicall3 when nothing checked the node (tests, benches): what the setting says. */
export function assumedMulticallVia(config: Pick<AppConfig, "multicall3" | "chainId">): MulticallVia {
  const setting = config.multicall3;
  if (setting === "auto") return multicallViaFor(config.chainId);
  if (setting === "canonical") return MULTICALL3_ADDRESS;
  return setting;
}

const GET_BLOCK_NUMBER = {
  address: MULTICALL3_ADDRESS,
  abi: parseAbi(["function getBlockNumber() view returns (uint256 blockNumber)"]),
  functionName: "getBlockNumber",
} as const;

/** What the node holds at `address`: Multicall3 (and how that was seen), or why not. */
export type Multicall3Finding = { found: true; by: "code hash" | "probe" } | { found: false; why: string };

export async function inspectMulticall3(rpc: RpcClient, address: Address): Promise<Multicall3Finding> {
  const code = await rpc.request<Hex>(
    { method: "eth_getCode", params: [address, "latest"] },
    {
      // Counted "invalid" and failed like any garbled answer: code is 0x and whole bytes of hex.
      decode: (r) => {
        if (typeof r === "string" && /^0x(?:[0-9a-fA-F]{2})*$/.test(r)) return r as Hex;
        throw new RpcError("invalid", "eth_getCode: not hex bytes", { method: "eth_getCode" });
      },
    },
  );
  if (code === "0x") return { found: false, why: `no contract at ${address}` };
  if (keccak256(code) === MULTICALL3_RUNTIME_CODE_HASH) return { found: true, by: "code hash" };
  const callData = encodeFunctionData(GET_BLOCK_NUMBER);
  try {
    const { blockNumber, results } = await multicallAtOneBlock(rpc, [{ target: address, callData }], { via: address });
    const inner = results[0]?.success ? decodeView({ ...GET_BLOCK_NUMBER, address }, results[0].returnData) : null;
    if (inner === blockNumber) return { found: true, by: "probe" };
  } catch (error) {
    // The node failing is not an answer about the contract: the caller retries or reports it.
    if (!(error instanceof ViewReadError) || (error.kind !== "malformed" && error.kind !== "rpc")) throw error;
  }
  return { found: false, why: `the contract at ${address} does not answer as Multicall3` };
}

export type CheckMulticall3Parameters = {
  rpc: RpcClient;
  setting: Multicall3Setting;
  logger: Logger;
  /** Tries before giving up on an unreadable node (the chain id check before it already waited for the node). */
  attempts?: number;
  retryDelayMs?: number;
  /** The variable the node's URL came from (RPC_URL, or PONDER_RPC_URL_<chainId>), named in the refusal. */
  variable?: string;
};

/** The way the process reaches Multicall3; throws ConfigError (naming MULTICALL3) when the setting cannot hold. */
export async function checkMulticall3({
  rpc,
  setting,
  logger,
  attempts = 3,
  retryDelayMs = 500,
  variable = "RPC_URL",
}: CheckMulticall3Parameters): Promise<MulticallVia> {
  if (setting === "deployless") {
    logger.info("multicall3: deployless (MULTICALL3=deployless)");
    return "deployless";
  }
  const address = setting === "auto" || setting === "canonical" ? MULTICALL3_ADDRESS : setting;
  let finding: Multicall3Finding | undefined;
  let failure = "";
  for (let attempt = 1; attempt <= attempts && finding === undefined; attempt++) {
    try {
      finding = await inspectMulticall3(rpc, address);
    } catch (error) {
      // RpcError and ViewReadError messages carry the method and kind only (never the URL).
      failure = error instanceof RpcError || error instanceof ViewReadError ? error.message : "unknown failure";
      if (attempt < attempts) await new Promise((r) => setTimeout(r, retryDelayMs));
    }
  }
  if (finding?.found) {
    logger.info("multicall3: using the contract", { address, verifiedBy: finding.by, setting });
    return address;
  }
  const why = finding ? finding.why : `its code could not be read (${failure})`;
  if (setting !== "auto") {
    throw new ConfigError(
      `invalid configuration: ${MULTICALL3_VARIABLE}=${setting} requires Multicall3 at ${address} on ${variable} at ` +
        `${rpc.redactedUrl}, but ${why}; set ${MULTICALL3_VARIABLE}=auto (deployless when absent) or deployless`,
    );
  }
  logger.warn("multicall3: not found; state reads run it deployless (~12 KB of call data per read)", {
    address,
    reason: why,
    setting,
  });
  return "deployless";
}
