/**
 * A 2025-era tools/call is schema-parsed once: the gatekeeper (api/mcp/gatekeeper.ts screen) parses it with SDK 1.x's
 * CallToolRequestSchema before forwarding it, and the SDK's Server, which parsed it twice more (its tools/call wrapper,
 * then Protocol's handler) and its result once, takes it as parsed (api/mcp/server.ts SCREENED_TOOL_CALL). Counted
 * on the SDK's own schema objects (each parse of a tools/call runs CallToolRequestParamsSchema once), through real
 * requests to the app over a synthetic index (PGlite); the answer's bytes are the tool's route's envelope.
 */
import { PGlite } from "@electric-sql/pglite";
import { CallToolRequestParamsSchema, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { generateSyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

let app: ReturnType<typeof createApp>;
const runs = { params: 0, result: 0 };

/** Counts the runs of a zod 4 schema (the SDK's): every parse of it, or of a schema holding it, goes through run. */
function count(schema: unknown, key: keyof typeof runs) {
  const z = (schema as { _zod: { run: (...a: unknown[]) => unknown } })._zod;
  const run = z.run.bind(z);
  z.run = (...a: unknown[]) => {
    runs[key]++;
    return run(...a);
  };
}

beforeAll(async () => {
  const index = generateSyntheticIndex({ events: 50, owners: 5, seed: 3, startBlock: 46_183_959n });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "synthetic", index);
  app = createApp({
    config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: "synthetic" }) },
    logger: silentLogger,
  });
  count(CallToolRequestParamsSchema, "params");
  count(CallToolResultSchema, "result");
}, 60_000);

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const call = (id: number, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "get_lock_stats", arguments: args },
});

async function post(body: unknown) {
  runs.params = 0;
  runs.result = 0;
  const res = await app.request("/api/mcp", { method: "POST", headers: HEADERS, body: JSON.stringify(body) });
  // biome-ignore lint/suspicious/noExplicitAny: the JSON-RPC answer is asserted on as parsed
  return { status: res.status, json: (await res.json()) as any, runs: { ...runs } };
}

describe("a 2025-era tools/call is schema-parsed once", () => {
  it("one call: its params parsed once, its result not re-parsed; the route's envelope as the answer", async () => {
    const { status, json, runs } = await post(call(1));
    expect(status).toBe(200);
    expect(runs).toEqual({ params: 1, result: 0 });
    const envelope = JSON.parse(json.result.content[0].text);
    expect([json.id, json.result.isError, envelope.ok]).toEqual([1, false, true]);
    expect(json.result.structuredContent).toEqual(envelope);
    const rest = (await (await app.request("/api/index/v1/stats")).json()) as { totalLockedWei: string };
    expect(envelope.totalLockedWei).toBe(rest.totalLockedWei);
  });

  it("a batch of three: three parses; a refused argument is still the route's BAD_PARAMS envelope", async () => {
    const { json, runs } = await post([call(1), call(2, { nope: 1 }), call(3)]);
    expect(runs.params).toBe(3);
    expect(json.map((a: { id: number }) => a.id)).toEqual([1, 2, 3]);
    const refused = JSON.parse(json[1].result.content[0].text);
    expect([json[1].result.isError, refused.error, refused.detail.param]).toEqual([true, "BAD_PARAMS", "nope"]);
  });

  it("a call that does not fit the schema is refused by the gatekeeper's one parse, never reaching the SDK", async () => {
    const { json, runs } = await post({ ...call(4), params: { name: "get_lock_stats", arguments: {}, task: 5 } });
    expect(runs.params).toBe(1);
    expect(json.error.code).toBe(-32602);
    expect(json.error.message).toMatch(/^Invalid params: /);
  });
});

describe("a 2026-07-28 tools/call is schema-parsed once by SDK v2", () => {
  it("its arguments are walked by the gatekeeper's parse, SDK v2's tools/call wrapper and the call's path: 3 reads", async () => {
    // Each schema parse of the call reads every argument once: one argument, a getter, counts them (JSON.parse wrapped
    // for this request only, so the getter is on the message as the endpoint parsed it).
    let reads = 0;
    const parse = JSON.parse;
    JSON.parse = ((text: string, reviver?: never) => {
      const value = parse(text, reviver);
      const args = value?.params?.arguments;
      if (args && typeof args === "object" && "counted" in args) {
        delete args.counted;
        Object.defineProperty(args, "counted", {
          enumerable: true,
          get: () => {
            reads++;
            return "1";
          },
        });
      }
      return value;
    }) as typeof JSON.parse;
    let json: { id: number; result: { isError: boolean; content: { text: string }[] } };
    try {
      const meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
      };
      const res = await app.request("/api/mcp", {
        method: "POST",
        headers: {
          ...HEADERS,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "get_lock_stats",
        },
        body: JSON.stringify({
          ...call(5, { counted: "1" }),
          params: { ...call(5).params, arguments: { counted: "1" }, _meta: meta },
        }),
      });
      json = await res.json();
    } finally {
      JSON.parse = parse;
    }
    // It reached its route, which refused the argument as unknown (no counting getter without the call's path).
    const refused = JSON.parse(json.result.content[0]!.text);
    expect([json.id, json.result.isError, refused.error, refused.detail.param]).toEqual([
      5,
      true,
      "BAD_PARAMS",
      "counted",
    ]);
    expect(reads).toBe(3);
  });
});
