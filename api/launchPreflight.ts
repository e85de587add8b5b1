/**
 * LaunchController.preflight() as the API reads it (spec §3, §7.2; protocol.md §1): its 11 status bits and the gate
 * every prepare endpoint asks first. The gate's contract lives here, below the features, so the routes' deps
 * (api/deps.ts) can name it; the MCP feature builds it (api/mcp/v1/gate.ts) and the OpenAPI catalogue reads the bits.
 */
import type { CacheSource } from "./observability/cacheStats";

/** The 11 preflight bits, LSB first; a bit is 1 when its condition holds (protocol.md §1). */
export const PREFLIGHT_BITS = [
  "genesis not finalized",
  "accrual duration > 0",
  "emission start > 0",
  "accrual window complete",
  "takeovers paused",
  "vault pool matches",
  "router WETH matches",
  "pool derivation matches",
  "pool LP supply empty",
  "pool balances clean",
  "expected pool is not self",
] as const;

/** Ready to finalize = all 11 bits set (0x7FF); this is the "expected" side of the diagnostic. */
export const READY_TO_FINALIZE_BITS: readonly number[] = PREFLIGHT_BITS.map((_, i) => i);

export type Preflight = {
  statusBitmask: bigint;
  requiredSeedEth: bigint;
  /** Only bit 0 decides: finalized = (statusBitmask & 1) == 0. */
  finalized: boolean;
};

/** The indices (0..10) of the known preflight bits that are set in the mask. */
export function preflightBitsSet(statusBitmask: bigint): number[] {
  return READY_TO_FINALIZE_BITS.filter((i) => (statusBitmask >> BigInt(i)) & 1n);
}

export interface Gate {
  /** The current preflight, from the cache or one shared upstream read; throws PreflightReadFailedError / ChainUnreadyError. */
  read(): Promise<Preflight>;
  /** Resolves when genesis is finalized; else throws GenesisNotFinalizedError (or the read's error: the gate fails closed). */
  assertFinalized(): Promise<void>;
  /**
   * For the metrics: a hit is a read answered from memory (the cached preflight, or a failure still within its
   * backoff); a miss needed the node (a read started or joined). Entries: 1 while a preflight is cached.
   */
  readonly cache?: CacheSource;
}
