import type { Address, Hex } from "viem";
import { decodeRevert } from "./revert";
import { originOf, type RpcClient, RpcError, type RpcFailureKind } from "./rpc";

/**
 * Runs a batch of calls from one sender with `eth_simulateV1` (one round trip): state carries from call
 * to call, so an approve is seen by the call after it. `validation: false` runs the calls without
 * nonce, fee or balance checks (all calls here carry no value), which is what "would this revert?"
 * asks. A node without the method is detected once and remembered for the life of the process, so
 * such a node costs one probe in total, not one per request.
 */

export type SimulatedCall = { to: Address; data: Hex };

export type SimulatedError = {
  /** The published error name, `Error`/`Panic`, or null when the data matches no known error. */
  name: string | null;
  args: string[];
  /** The 4-byte selector of the revert data, or null for a revert without data. */
  selector: Hex | null;
};

/** `logs`: how many logs the call emitted, where the node said (an ERC-20 transfer is one; a no-op emits none). */
export type SimulatedStep = { ok: boolean; gasUsed: bigint; error?: SimulatedError; logs?: number };

export type SimulationOutcome =
  | { kind: "ran"; blockNumber: bigint; steps: SimulatedStep[] }
  | { kind: "unsupported" }
  /** The node failed to answer (timeout, transport, error object, malformed answer): nothing is known. */
  | { kind: "failed"; reason: RpcFailureKind };

/** A simulation waits at most this long: it is advice, and the batch is worth more than the advice. */
export const SIMULATION_TIMEOUT_MS = 5_000;

/** JSON-RPC "method not found" and EIP-1474 "method not supported": the node lacks eth_simulateV1. */
const UNSUPPORTED_CODES = new Set([-32601, -32004]);

/** Kept by the client a view was made of (originOf): a route reads through a per-request view of it. */
const unsupportedNodes = new WeakMap<RpcClient, true>();

/** Whether this client's node is already known to lack eth_simulateV1 (tests and benches read it). */
export function knownUnsupported(rpc: RpcClient): boolean {
  return unsupportedNodes.has(originOf(rpc));
}

const HEX_QUANTITY = /^0x[0-9a-fA-F]{1,64}$/;
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;

export function revertError(returnData: Hex): SimulatedError {
  const decoded = decodeRevert(returnData);
  const selector = returnData.length >= 10 ? (returnData.slice(0, 10).toLowerCase() as Hex) : null;
  return decoded ? { name: decoded.name, args: decoded.args, selector } : { name: null, args: [], selector };
}

type RawCall = { status?: unknown; gasUsed?: unknown; returnData?: unknown; logs?: unknown };

/** The node's answer as steps, or null when it is not the shape eth_simulateV1 promises. */
function readAnswer(result: unknown, count: number): { blockNumber: bigint; steps: SimulatedStep[] } | null {
  if (!Array.isArray(result) || result.length !== 1) return null;
  const block = result[0] as { number?: unknown; calls?: unknown } | null;
  if (!block || typeof block.number !== "string" || !HEX_QUANTITY.test(block.number)) return null;
  if (!Array.isArray(block.calls) || block.calls.length !== count) return null;
  const steps: SimulatedStep[] = [];
  for (const raw of block.calls as RawCall[]) {
    if (!raw || (raw.status !== "0x1" && raw.status !== "0x0")) return null;
    if (typeof raw.gasUsed !== "string" || !HEX_QUANTITY.test(raw.gasUsed)) return null;
    const returnData = typeof raw.returnData === "string" && HEX_DATA.test(raw.returnData) ? raw.returnData : "0x";
    const ok = raw.status === "0x1";
    steps.push({
      ok,
      gasUsed: BigInt(raw.gasUsed),
      ...(ok ? {} : { error: revertError(returnData as Hex) }),
      ...(Array.isArray(raw.logs) ? { logs: raw.logs.length } : {}),
    });
  }
  return { blockNumber: BigInt(block.number), steps };
}

function isUnsupported(error: RpcError): boolean {
  return error.kind === "rpc" && error.info.code !== undefined && UNSUPPORTED_CODES.has(error.info.code);
}

/** Never throws: every failure of the node is an outcome, so a prepare can still answer. */
export async function simulateCalls(
  rpc: RpcClient,
  from: Address,
  calls: readonly SimulatedCall[],
  timeoutMs = SIMULATION_TIMEOUT_MS,
): Promise<SimulationOutcome> {
  if (unsupportedNodes.has(originOf(rpc))) return { kind: "unsupported" };
  const payload = {
    blockStateCalls: [{ calls: calls.map((c) => ({ from, to: c.to, data: c.data })) }],
    validation: false,
  };
  let answer: NonNullable<ReturnType<typeof readAnswer>>;
  try {
    answer = await rpc.request(
      { method: "eth_simulateV1", params: [payload, "latest"] },
      {
        signal: AbortSignal.timeout(timeoutMs),
        // Read inside the call, so an answer that is not a simulation is counted as malformed (api/chain/rpc.ts).
        decode: (result) => {
          const read = readAnswer(result, calls.length);
          if (!read) throw new RpcError("invalid", "RPC eth_simulateV1: not a simulation of the calls");
          return read;
        },
      },
    );
  } catch (error) {
    if (error instanceof RpcError && isUnsupported(error)) {
      unsupportedNodes.set(originOf(rpc), true);
      return { kind: "unsupported" };
    }
    const kind = error instanceof RpcError ? error.kind : "unreachable";
    // Our own deadline surfaces as a cancellation; to the caller it is the node being too slow.
    return { kind: "failed", reason: kind === "aborted" ? "timeout" : kind };
  }
  return { kind: "ran", ...answer };
}
