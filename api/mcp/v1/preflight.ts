import type { Hono } from "hono";
import type { AppDeps } from "../../deps";
import type { AppEnv } from "../../http/env";
import { parseQuery } from "../../http/params";
import { PREFLIGHT_BITS, preflightBitsSet } from "../../launchPreflight";
import type { RouteDefinition } from "../../route/definition";
import { array, boolean, constant, integer, object, uintString } from "../../route/jsonSchema";

/**
 * GET /preflight (spec §4.2, protocol.md §5): LaunchController.preflight() through the shared gate,
 * so after finalization this route answers from the cache without touching the RPC. Reads are not
 * gated: this route reports the gate, it never refuses on it.
 */
/** Finalized, with every other condition holding: bits 1..10 set, bit 0 clear. */
const EXAMPLE_BITS = preflightBitsSet(0x7fen);

/** The route's documented face (api/openapi, the MCP tool get_preflight); the handler below uses its path and params. */
export const preflightRoute = {
  path: "/preflight",
  operationId: "get_preflight",
  summary: "Read the launch preflight (is genesis finalized?)",
  description:
    "LaunchController.preflight(): the 11-bit status mask and the seed ETH genesis requires. Only bit 0 decides " +
    "`finalized` (bit 0 set = genesis not finalized); every prepare action answers 503 GENESIS_NOT_FINALIZED " +
    "until it clears. `bits` names each condition. Once finalized the answer is served from memory.",
  query: {},
  errors: ["BAD_PARAMS", "CHAIN_UNREADY", "PREFLIGHT_READ_FAILED", "UPSTREAM_UNAVAILABLE"],
  exampleRequest: {},
  response: {
    schema: object({
      ok: constant(true),
      finalized: boolean("True once genesis is finalized (bit 0 of statusBitmask is clear)."),
      statusBitmask: uintString("The preflight status mask, decimal; bit i set = condition i holds."),
      requiredSeedEth: uintString("ETH (wei) genesis requires as seed."),
      bitsSet: array(integer("A bit index.", { minimum: 0, maximum: 10 }), "The indices of the set bits."),
      bitsMissing: array(integer("A bit index.", { minimum: 0, maximum: 10 }), "The indices of the clear bits."),
      bits: array(
        object({
          bit: integer("Bit index, LSB first.", { minimum: 0, maximum: 10 }),
          condition: { type: "string", enum: [...PREFLIGHT_BITS], description: "What the bit means when set." },
          set: boolean("Whether the condition holds."),
        }),
        "All 11 conditions in bit order.",
        { minItems: PREFLIGHT_BITS.length },
      ),
    }),
    example: {
      ok: true,
      finalized: true,
      statusBitmask: String(0x7fe),
      requiredSeedEth: "10000000000000000000",
      bitsSet: EXAMPLE_BITS,
      bitsMissing: PREFLIGHT_BITS.map((_, i) => i).filter((i) => !EXAMPLE_BITS.includes(i)),
      bits: PREFLIGHT_BITS.map((condition, bit) => ({ bit, condition, set: EXAMPLE_BITS.includes(bit) })),
    },
  },
} as const satisfies RouteDefinition;

export function registerPreflightRoutes(v1: Hono<AppEnv>, deps: AppDeps): void {
  v1.get(preflightRoute.path, async (c) => {
    parseQuery(c.req.url, preflightRoute.query); // the route takes no parameters; any given one is BAD_PARAMS
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
