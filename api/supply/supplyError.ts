/**
 * Supply failures. The supply API keeps its own envelope (spec §2.1/§7.1: `{ result: null, error }`,
 * or an empty body with `x-supply-error` in bare mode), so these are not ApiErrors.
 */
import { RecentFailureError } from "../cache/ttlCache";
import { ViewReadError } from "../chain/readView";
import { RpcError } from "../chain/rpc";

export const SUPPLY_ERROR_STATUS = {
  /** No RPC endpoint is configured (spec §7.1). */
  SUPPLY_NO_RPC_URL: 502,
  /**
   * The node answered, but not with exactly 0x + 64 hex: `0x`, short, long, non-hex, null, an error object, a 2xx
   * body that is not JSON, an answer under another id (spec §7.1).
   */
  SUPPLY_RPC_INVALID_UINT256: 502,
  /** No answer: refused, reset, timed out, or a non-2xx HTTP status (design.md). */
  SUPPLY_RPC_UNREACHABLE: 502,
  /** The manifest lacks AssetToken / VeLockNFT, or holds the zero address (design.md). */
  SUPPLY_NOT_DEPLOYED: 502,
  /**
   * A total, or total − locked at one block, below 0.01 token (0, locked ≥ total included): fail closed rather than
   * answer a figure of 0.00 or a negative one (design.md); or a total above SUPPLY_TOTAL_CEILING_WEI
   * (api/supply/reads.ts): a garbled word, not a supply.
   */
  SUPPLY_INCONSISTENT: 502,
  /**
   * The node's head is behind: below the block of the figures already served (a node behind a load balancer, one
   * restarted from an old snapshot), or its timestamp more than SUPPLY_MAX_HEAD_AGE_SECONDS behind the wall clock, or
   * no block at the height eth_blockNumber just named (twice: the batch went to a backend behind the one that named
   * it), and no figure is held to answer instead (docs/api.md "Supply API"). Temporary: ask again.
   */
  SUPPLY_RPC_LAGGING: 502,
} as const;

export type SupplyErrorCode = keyof typeof SUPPLY_ERROR_STATUS;

export class SupplyError extends Error {
  override name = "SupplyError";
  readonly status: (typeof SUPPLY_ERROR_STATUS)[SupplyErrorCode];
  constructor(
    readonly code: SupplyErrorCode,
    message: string = code,
  ) {
    super(message);
    this.status = SUPPLY_ERROR_STATUS[code];
  }
}

/**
 * An HTTP 2xx answer whose body is not JSON (an HTML page, a truncated text): the RPC layer counts it
 * "unreachable" (for its metrics and the v1 routes' back-off, it is a broken node), but the node answered.
 */
const answeredNotJson = (error: unknown): boolean =>
  (error instanceof RpcError && error.info.notJson === true) ||
  (error instanceof ViewReadError && answeredNotJson(error.cause));

/**
 * Maps a failed upstream read onto a supply code. A node that answered with a JSON-RPC error, a body
 * that is not JSON, or anything else than exactly 0x + 64 hex did answer, so that is an invalid payload
 * (spec §7.1: SUPPLY_RPC_INVALID_UINT256 is "anything other than exactly 0x + 64 hex characters");
 * no answer at all (refused, reset, timed out) or a non-2xx HTTP status is unreachable.
 */
export function toSupplyError(error: unknown): SupplyError {
  if (error instanceof SupplyError) return error;
  // A failure remembered by the backoff (here or on another replica) answers with the code it had.
  if (error instanceof RecentFailureError && error.code in SUPPLY_ERROR_STATUS)
    return new SupplyError(error.code as SupplyErrorCode, error.message);
  if (answeredNotJson(error)) return new SupplyError("SUPPLY_RPC_INVALID_UINT256", (error as Error).message);
  if (error instanceof ViewReadError) {
    if (error.kind === "malformed" || error.kind === "rpc" || error.kind === "invalid")
      return new SupplyError("SUPPLY_RPC_INVALID_UINT256", error.message);
    if (error.kind === "unconfigured") return new SupplyError("SUPPLY_NO_RPC_URL", error.message);
    return new SupplyError("SUPPLY_RPC_UNREACHABLE", error.message);
  }
  if (error instanceof RpcError) {
    if (error.kind === "rpc" || error.kind === "invalid")
      return new SupplyError("SUPPLY_RPC_INVALID_UINT256", error.message);
    return new SupplyError("SUPPLY_RPC_UNREACHABLE", error.message);
  }
  // Anything else (a bug, a method refused by the allowlist) must still fail closed, never as a figure.
  return new SupplyError("SUPPLY_RPC_UNREACHABLE", error instanceof Error ? error.message : String(error));
}

/** A supply route (spec §4.1): its own envelope `{ result }`, `?format=bare` for text/plain, its own codes. */
export type SupplyRouteDefinition = {
  path: string;
  operationId: string;
  summary: string;
  description: string;
  /** The `result` of the example (a 2-decimal string, or null for max). */
  example: string | null;
  errors: readonly SupplyErrorCode[];
  /** Cache-Control max-age of a success, in seconds (spec §8). */
  maxAgeSec: number;
};
