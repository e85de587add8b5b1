import type { Hono } from "hono";
import type { AppDeps } from "../../app";
import { parseQuery } from "../../http/params";
import { PREFLIGHT_BITS, preflightBitsSet } from "./gate";

/**
 * GET /preflight (spec §4.2, protocol.md §5): LaunchController.preflight() through the shared gate,
 * so after finalization this route answers from the cache without touching the RPC. Reads are not
 * gated: this route reports the gate, it never refuses on it.
 */
export function registerPreflightRoutes(v1: Hono, deps: AppDeps): void {
  v1.get("/preflight", async (c) => {
    parseQuery(c.req.url, {}); // the route takes no parameters; any given one is BAD_PARAMS
    const p = await deps.gate.read();
    const bitsSet = preflightBitsSet(p.statusBitmask);
    c.header("cache-control", "no-store");
    return c.json({
      ok: true,
      finalized: p.finalized,
      statusBitmask: p.statusBitmask.toString(),
      requiredSeedEth: p.requiredSeedEth.toString(),
      bitsSet,
      bitsMissing: PREFLIGHT_BITS.map((_, i) => i).filter((i) => !bitsSet.includes(i)),
      // Which of the 11 conditions hold (ready to finalize = all 11 set; finalized = bit 0 clear).
      bits: PREFLIGHT_BITS.map((condition, bit) => ({ bit, condition, set: bitsSet.includes(bit) })),
    });
  });
}
