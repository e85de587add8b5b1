/**
 * Backing off a node in an outage, for the routes that read it per request (state, quote, prepare and the launch
 * gate; issue 30, 7): supply and the gate each remember a failed read, but a route whose every request reads
 * something else (a user's state, a quote of an amount) has nothing to remember — without this, every request of
 * an outage is one more call to a node that is down (124 in 10 s, measured).
 *
 * A call that fails as an outage does (unreachable, timed out, an HTTP error status) opens the back-off: 2 s, then
 * doubled at each failure in a row up to 4 s. While it is open no call reaches the node (`wrap`'s client fails at
 * once) and the routes answer 503 UPSTREAM_UNAVAILABLE with Retry-After (api/http/upstreamBackoff.ts). When it
 * ends one request is let through as the probe; the others wait out its answer (503 again). The probe sends one
 * `eth_blockNumber` before its own calls (up to three in a batch): a success closes the back-off and its calls go on,
 * a failure opens the next window. An answer of the node — a revert, a JSON-RPC error, a malformed result — is no
 * outage. A 10 s outage thus costs a process the calls in flight when it began (one batch per request then in
 * flight), then one call at 2, 6 and 10 s: under load, as idle.
 */
import type { RpcCallOptions, RpcClient, RpcFailureKind, RpcRequest } from "./rpc";
import { RpcError } from "./rpc";

/** The first window is supply's (SUPPLY_FAILURE_BACKOFF_MS); doubled at each failure in a row, up to 4 s. */
export const RPC_BACKOFF = { firstMs: 2_000, maxMs: 4_000 } as const;

/** What opens the back-off: the node's own answers (a revert, a JSON-RPC error) do not. */
const OUTAGE: ReadonlySet<RpcFailureKind> = new Set(["unreachable", "timeout", "http"]);
/**
 * Calls whose failure the routes answer around (prepare's simulation: 200 with `skipped: "node-failed"`): a node
 * slow or failing at simulating may answer everything else, so they never open the back-off; they still wait out
 * an open one.
 */
const OPTIONAL: ReadonlySet<string> = new Set(["eth_simulateV1"]);
/** What is sent to find whether the node is back: one call any node answers at once, whatever the request needs. */
const PROBE: RpcRequest = { method: "eth_blockNumber", params: [] };

/** A failure that is the node's answer (a revert, a JSON-RPC error, a malformed result): the node is up. */
const answered = (error: unknown): boolean =>
  error instanceof RpcError && !OUTAGE.has(error.kind) && error.kind !== "aborted";

export type Admission = { admitted: true; release(): void } | { admitted: false; retryAfterMs: number };

export class RpcBackoff {
  readonly #now: () => number;
  readonly #firstMs: number;
  readonly #maxMs: number;
  /** Failures in a row; 0: closed. */
  #failures = 0;
  #openUntil = 0;
  #probing = false;
  /** A call is out to find whether the node is back: no other goes until it is answered. */
  #probeCall = false;

  /** Told each call that failed as an outage (the operator's warning, throttled by whoever gives it). */
  readonly #onOutage: (error: RpcError) => void;

  constructor(o: { firstMs?: number; maxMs?: number; now?: () => number; onOutage?: (error: RpcError) => void } = {}) {
    this.#now = o.now ?? (() => performance.now());
    this.#onOutage = o.onOutage ?? (() => {});
    this.#firstMs = o.firstMs ?? RPC_BACKOFF.firstMs;
    this.#maxMs = o.maxMs ?? RPC_BACKOFF.maxMs;
  }

  /** Whether the node is being backed off now. */
  get open(): boolean {
    return this.#failures > 0;
  }

  /**
   * Whether a request may read the node now. Admitted while closed; after a window, one request (the probe, until
   * `release` or its first call's outcome); refused with how long to wait otherwise.
   */
  admit(): Admission {
    if (this.#failures === 0) return { admitted: true, release: () => {} };
    const left = this.#openUntil - this.#now();
    if (left > 0) return { admitted: false, retryAfterMs: left };
    // One probe at a time: a request that is not admitted still runs (api/http/upstreamBackoff.ts) and its call may be
    // the one that went out as the probe; none is admitted until that call is answered.
    if (this.#probing || this.#probeCall) return { admitted: false, retryAfterMs: this.#firstMs };
    this.#probing = true;
    return {
      admitted: true,
      // A probe that made no call (bad input, a cache answer) frees the slot for the next request.
      release: () => {
        this.#probing = false;
      },
    };
  }

  /** `rpc` with every call refused while the back-off is open, and every outcome told to it. */
  wrap(rpc: RpcClient): RpcClient;
  wrap(rpc: RpcClient | null): RpcClient | null;
  wrap(rpc: RpcClient | null): RpcClient | null {
    if (!rpc) return null;
    const guard = <T>(
      call: () => Promise<T>,
      optional: boolean,
      options: RpcCallOptions | undefined,
      light = false,
    ): Promise<T> => {
      if (this.#failures > 0) {
        if (this.#openUntil > this.#now() || this.#probeCall) {
          return Promise.reject(new RpcError("unreachable", "The node is being backed off after failing."));
        }
        if (optional) return call();
        this.#probeCall = true;
        // A call as light as the probe is its own probe.
        if (light) return this.#observe(call(), true);
        // The probe is one light call, not the request's own (a batch of up to three): the call goes out only once
        // the node has answered it, so a 10 s outage costs one call a window after its first failure.
        // With the request's deadline and cancellation, not its decoders. Any answer of the node (an error object too)
        // says it is back.
        const probe = rpc
          .request(PROBE, { signal: options?.signal, deadline: options?.deadline })
          .catch((e: unknown) => {
            if (!answered(e)) throw e;
          });
        return this.#observe(probe, true).then(() => this.#observe(call(), false));
      }
      return optional ? call() : this.#observe(call(), false);
    };
    return {
      redactedUrl: rpc.redactedUrl,
      origin: rpc.origin ?? rpc,
      request: (req, options) =>
        guard(() => rpc.request(req, options), OPTIONAL.has(req.method), options, req.method === PROBE.method),
      batch: (reqs, options) =>
        guard(
          () => rpc.batch(reqs, options),
          reqs.every((r) => OPTIONAL.has(r.method)),
          options,
        ),
    };
  }

  /** A call's outcome told to the back-off: an outage's failure opens it, the node's answer closes it. */
  #observe<T>(pending: Promise<T>, probe: boolean): Promise<T> {
    return pending.then(
      (value) => {
        this.#succeeded();
        return value;
      },
      (error: unknown) => {
        if (error instanceof RpcError && OUTAGE.has(error.kind)) {
          this.#onOutage(error);
          this.#failed();
        } else if (answered(error)) this.#succeeded();
        else if (probe) this.#probeCall = this.#probing = false;
        throw error;
      },
    );
  }

  #succeeded(): void {
    this.#failures = 0;
    this.#openUntil = 0;
    this.#probing = this.#probeCall = false;
  }

  #failed(): void {
    // Calls that were in flight together fail together: one window for them, not one doubling each.
    if (this.#openUntil > this.#now()) return;
    this.#failures++;
    this.#openUntil = this.#now() + Math.min(this.#firstMs * 2 ** (this.#failures - 1), this.#maxMs);
    this.#probing = this.#probeCall = false;
  }
}
