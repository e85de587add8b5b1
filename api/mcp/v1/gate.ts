import { LaunchControllerAbi } from "../../../abis";
import { readView, ViewReadError } from "../../chain/readView";
import type { RpcClient } from "../../chain/rpc";
import { ChainUnreadyError, GenesisNotFinalizedError, PreflightReadFailedError } from "../../http/errors";
import { type Gate, type Preflight, preflightBitsSet, READY_TO_FINALIZE_BITS } from "../../launchPreflight";
import { deployedAddress, type Manifest } from "../../manifest";
import { CacheStats } from "../../observability/cacheStats";

/**
 * The genesis gate (spec §3, §7.2; docs/api.md#preparation-api-v1--prepare): every prepare endpoint
 * first asks LaunchController.preflight() whether genesis is finalized. One gate instance lives in
 * AppDeps so the preflight route and the prepare routes share its cache.
 */

export type CreateGateOptions = {
  rpc: RpcClient | null;
  manifest: Manifest;
  /** How long a not-finalized answer may be reused; finalized answers are kept for the life of the process. */
  notFinalizedTtlMs?: number;
  /** How long a failed read is answered from memory before the node is asked again. */
  failureBackoffMs?: number;
  /**
   * The longest one upstream read may take (the app gives the v1 deadline). The read is shared by every
   * request waiting on it, so no one request's deadline cancels it; this bound ends it instead, a timeout.
   */
  readTimeoutMs?: number;
  /** Clock, for tests of the TTL. */
  now?: () => number;
};

export const DEFAULT_NOT_FINALIZED_TTL_MS = 3_000;

/**
 * A failed preflight read is answered (502 PREFLIGHT_READ_FAILED, the gate closed) from memory for this
 * long: a node in trouble is asked about once per interval per process, not once per request.
 */
export const DEFAULT_GATE_FAILURE_BACKOFF_MS = 1_000;

export function createGate(options: CreateGateOptions): Gate {
  const ttl = options.notFinalizedTtlMs ?? DEFAULT_NOT_FINALIZED_TTL_MS;
  const now = options.now ?? Date.now;
  const backoffMs = options.failureBackoffMs ?? DEFAULT_GATE_FAILURE_BACKOFF_MS;
  let cached: { value: Preflight; expiresAt: number } | null = null;
  let failed: { error: PreflightReadFailedError; until: number } | null = null;
  let inflight: Promise<Preflight> | null = null;

  async function fetchPreflight(): Promise<Preflight> {
    const controller = deployedAddress(options.manifest, "LaunchController");
    if (!controller) throw new ChainUnreadyError("LaunchController", options.manifest.chain);
    if (!options.rpc) throw new PreflightReadFailedError("No RPC endpoint is configured; the gate stays closed.");
    let statusBitmask: bigint;
    let requiredSeedEth: bigint;
    try {
      // Exactly two words, or the read is not trusted: a malformed answer must never open the gate.
      [statusBitmask, requiredSeedEth] = await readView(
        options.rpc,
        { address: controller, abi: LaunchControllerAbi, functionName: "preflight" },
        options.readTimeoutMs === undefined ? {} : { deadline: AbortSignal.timeout(options.readTimeoutMs) },
      );
    } catch (cause) {
      const kind = cause instanceof ViewReadError ? cause.kind : "error";
      const why = kind === "malformed" ? "the answer is malformed" : `${kind}`;
      throw new PreflightReadFailedError(`The launch preflight could not be read (${why}); the gate stays closed.`, {
        cause,
      });
    }
    return { statusBitmask, requiredSeedEth, finalized: (statusBitmask & 1n) === 0n };
  }

  const stats = new CacheStats();
  const fresh = () => cached !== null && (cached.value.finalized || now() < cached.expiresAt);

  async function read(): Promise<Preflight> {
    if (cached && fresh()) {
      stats.hits++;
      return cached.value;
    }
    if (failed && now() < failed.until) {
      stats.hits++;
      throw failed.error;
    }
    stats.misses++;
    // Concurrent misses share one upstream read; a failed read is remembered only for the backoff.
    inflight ??= fetchPreflight()
      .then((value) => {
        // Bit 0 clears once and never sets again, so a finalized answer never expires.
        cached = { value, expiresAt: value.finalized ? Number.POSITIVE_INFINITY : now() + ttl };
        failed = null;
        return value;
      })
      .catch((error: unknown) => {
        // Only upstream failures: a contract missing from the manifest is configuration, answered at once.
        if (error instanceof PreflightReadFailedError && backoffMs > 0) failed = { error, until: now() + backoffMs };
        throw error;
      })
      .finally(() => {
        inflight = null;
      });
    return inflight;
  }

  return {
    read,
    cache: { stats, entries: () => (fresh() ? 1 : 0) },
    async assertFinalized() {
      const p = await read();
      if (p.finalized) return;
      throw new GenesisNotFinalizedError({
        statusBitmask: p.statusBitmask.toString(),
        bitsSet: preflightBitsSet(p.statusBitmask),
        bitsExpected: [...READY_TO_FINALIZE_BITS],
      });
    },
  };
}
