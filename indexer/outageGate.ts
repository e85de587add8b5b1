/**
 * The indexer's RPC transport (Ponder's `rpc` option takes a viem Transport): viem's http transport behind a gate
 * that waits out node outages instead of failing every request into Ponder's own retry.
 *
 * Why: Ponder (0.16, 0.17) retries a failed request 9 times with exponential backoff (125 ms × 2^i, up to 32 s between tries;
 * ponder/dist/esm/rpc/index.js), holding one of its 25 request slots meanwhile, and every 429 or timeout lowers its
 * request-rate limit by 5 % (to 3 requests/s at least), which climbs back by 5 % per ~5 s of saturated success.
 * After a minute of mixed faults (resets, 5xx, 429, answers past the timeout) its realtime sync ran at 3 requests/s
 * with polls queued ahead of the catch-up: 300 s after the node came back the index was still behind
 * (test/indexer/recovery.test.ts, measured before this transport).
 *
 * With the gate: the first request that fails the way an outage does (no answer, a timeout, HTTP 5xx / 408 / 429,
 * a JSON-RPC error 429) closes it; requests then wait instead of failing, and ONE probe (eth_blockNumber) asks the
 * node every `probeEveryMs`. The probe's first well-formed answer opens the gate and every waiting request is sent
 * again at once. Ponder sees slow answers, not errors: no backoff ladder, no lowered rate, nothing to catch up but
 * the blocks. A request that keeps failing while the node otherwise answers (a gateway refusing this one request)
 * goes to Ponder after `maxTriesWhileUp` tries, so Ponder's own handling (eth_getLogs range splitting, rate-limit
 * adaptation) still runs for what is not an outage. Every other error (a JSON-RPC error, a 4xx) goes to Ponder at once.
 */
import { BaseError, custom, HttpRequestError, http, TimeoutError, type Transport } from "viem";

export type OutageGateOptions = {
  /** One try of one request; Ponder's own HTTP client uses 10 s. */
  attemptTimeoutMs?: number;
  /** How often the probe asks a node that is down. */
  probeEveryMs?: number;
  probeTimeoutMs?: number;
  /** Tries of one request that fails like an outage while the probe says the node is up, before Ponder gets it. */
  maxTriesWhileUp?: number;
  /**
   * Awaited once, before the transport sends its first request (ponder.config.ts: the start-up check of the node's
   * chain id, which exits the process when the node does not answer). While it runs every request waits; if it
   * rejects, every request rejects with its error.
   */
  beforeFirstRequest?: () => Promise<void>;
  /** Told when the gate closes (the node stopped answering) and opens again (with how long it was closed). */
  onChange?: (event: { state: "down"; reason: string } | { state: "up"; downMs: number }) => void;
};

export const OUTAGE_GATE_DEFAULTS = {
  attemptTimeoutMs: 10_000,
  probeEveryMs: 500,
  probeTimeoutMs: 2_000,
  maxTriesWhileUp: 3,
} as const;

/** Whether an error is the node (or its gateway) not answering, as opposed to an answer. */
export function isOutage(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true; // not even a viem error: the transport itself failed
  const outage = error.walk((e) => {
    if (e instanceof TimeoutError) return true;
    if (e instanceof HttpRequestError) {
      const status = e.status;
      // No status: the connection failed (refused, reset, DNS) or the body was not JSON-RPC.
      return status === undefined || status >= 500 || status === 408 || status === 429;
    }
    return (e as { code?: unknown }).code === 429;
  });
  return outage !== null && outage !== undefined;
}

type Gate = { opened: Promise<void>; open(): void; since: number; reason: string };

/** viem's http transport to `url` behind the outage gate. */
export function outageGatedTransport(url: string, options: OutageGateOptions = {}): Transport {
  const o = { ...OUTAGE_GATE_DEFAULTS, ...options };
  const node = http(url, {
    retryCount: 0,
    timeout: o.attemptTimeoutMs,
    // Ponder's own client sets no limit; a block of a busy chain with its transactions can be large.
    maxResponseBodySize: false,
  });
  const probeNode = http(url, { retryCount: 0, timeout: o.probeTimeoutMs });
  // One check for every client Ponder makes of this transport, started by the first request of any of them.
  let checked: Promise<void> | undefined;
  const firstRequest = () => (checked ??= o.beforeFirstRequest?.() ?? Promise.resolve());
  return (params) => {
    const send = node({ ...params, retryCount: 0 }).request;
    const probe = probeNode({ ...params, retryCount: 0 }).request;
    let closed: Gate | undefined;

    async function probeUntilUp(gate: Gate): Promise<void> {
      for (;;) {
        await new Promise((r) => setTimeout(r, o.probeEveryMs));
        try {
          const head = await probe({ method: "eth_blockNumber" });
          if (typeof head === "string" && /^0x[0-9a-fA-F]+$/.test(head)) break;
        } catch {
          // still down
        }
      }
      closed = undefined;
      o.onChange?.({ state: "up", downMs: Math.round(performance.now() - gate.since) });
      gate.open();
    }

    function close(error: unknown): Gate {
      if (closed) return closed;
      let open = () => {};
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      const reason = error instanceof BaseError ? error.shortMessage : String(error);
      const gate: Gate = { opened, open, since: performance.now(), reason };
      closed = gate;
      o.onChange?.({ state: "down", reason });
      void probeUntilUp(gate);
      return gate;
    }

    const request = async ({ method, params: args }: { method: string; params?: unknown }) => {
      await firstRequest();
      let triesWhileUp = 0;
      for (;;) {
        if (closed) await closed.opened;
        try {
          return await send({ method, params: args } as never);
        } catch (error) {
          if (!isOutage(error)) throw error;
          // The gate was open when this failed: count it, so a request the node keeps refusing reaches Ponder.
          if (!closed && ++triesWhileUp >= o.maxTriesWhileUp) throw error;
          close(error);
        }
      }
    };
    return custom({ request })({ ...params, retryCount: 0 });
  };
}
