import type { Address, Hex } from "viem";
import { decodeRevert } from "./revert";
import { originOf, type RpcClient, RpcError, type RpcFailureKind } from "./rpc";

/**
 * Runs a batch of calls from one sender with `eth_simulateV1` (one round trip): state carries from call
 * to call, so an approve is seen by the call after it. `validation: false` runs the calls without
 * nonce, fee or balance checks (all calls here carry no value), which is what "would this revert?"
 * asks. A node that answers without the method is remembered for SIMULATION_REPROBE_MS, so such a node
 * costs one probe a minute, not one per request; then it is asked again (a load-balanced fleet with one
 * node lacking the method, or a provider answering -32601 for a plan limit, does not turn simulation off
 * for the life of the process).
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

/**
 * How long a node's "method not found" for eth_simulateV1 is believed before it is asked again: 60 s (the RPC
 * back-off's windows are 2–4 s for an outage; an answer saying the method is missing is a slower fact, so a minute).
 */
export const SIMULATION_REPROBE_MS = 60_000;

/**
 * What the node last said of eth_simulateV1, kept by the client a view was made of (originOf: a route reads through a
 * per-request view of it): `unsupportedAt` is when it answered without the method (or when that was last re-asked,
 * so concurrent requests after the interval send one probe, not one each).
 */
const support = new WeakMap<RpcClient, { supported: true } | { supported: false; unsupportedAt: number }>();

/** Whether this client's node is known, as of now, to lack eth_simulateV1 (within SIMULATION_REPROBE_MS of it saying so). */
export function knownUnsupported(rpc: RpcClient, now = Date.now()): boolean {
  const known = support.get(originOf(rpc));
  return known !== undefined && !known.supported && now - known.unsupportedAt < SIMULATION_REPROBE_MS;
}

/**
 * The api_simulation_supported gauge's value: 1 when the node's last answer to eth_simulateV1 was a simulation, 0 when
 * it was "method not found" (until a probe after SIMULATION_REPROBE_MS is answered with a simulation; a probe that
 * times out or errors otherwise changes nothing), undefined before the node ever answered one.
 */
export function simulationSupported(rpc: RpcClient): 0 | 1 | undefined {
  const known = support.get(originOf(rpc));
  if (known === undefined) return undefined;
  return known.supported ? 1 : 0;
}

/** Seconds until a node believed to lack eth_simulateV1 is asked again (0: it will be on the next request). */
export function reprobeInSec(rpc: RpcClient, now = Date.now()): number {
  const known = support.get(originOf(rpc));
  if (known === undefined || known.supported) return 0;
  return Math.max(0, Math.ceil((known.unsupportedAt + SIMULATION_REPROBE_MS - now) / 1000));
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
  const origin = originOf(rpc);
  if (knownUnsupported(rpc)) return { kind: "unsupported" };
  const known = support.get(origin);
  // The interval passed: this request asks again, and the others wait for its answer's verdict another interval.
  if (known !== undefined && !known.supported) support.set(origin, { supported: false, unsupportedAt: Date.now() });
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
      support.set(origin, { supported: false, unsupportedAt: Date.now() });
      return { kind: "unsupported" };
    }
    const kind = error instanceof RpcError ? error.kind : "unreachable";
    // Our own deadline surfaces as a cancellation; to the caller it is the node being too slow.
    return { kind: "failed", reason: kind === "aborted" ? "timeout" : kind };
  }
  support.set(origin, { supported: true });
  return { kind: "ran", ...answer };
}
