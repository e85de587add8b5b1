/**
 * POST /api/mcp before the SDK (api/mcp/gatekeeper.ts), over real HTTP against the seeded devnet: every
 * message spends budget, batches and bodies are bounded, tools/list is precomputed, and each malformed
 * shape gets its JSON-RPC code with a short message.
 */
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../api/app";
import { MCP_MAX_BATCH, MCP_MAX_BODY_BYTES, MCP_MAX_RESPONSE_BYTES } from "../../api/mcp/gatekeeper";
import { mcpTools } from "../../api/mcp/server";
import { V1_OPERATIONS } from "../../api/routes";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

type App = ReturnType<typeof createApp>;
let d: ReadsDevnet;
const servers: Server[] = [];

function listen(app: App): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
      resolve(`http://127.0.0.1:${info.port}`),
    ) as Server;
    servers.push(server);
  });
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function post(base: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/mcp`, {
    method: "POST",
    headers: { ...HEADERS, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on the parsed JSON-RPC shape themselves
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

const req = (id: number, method: string, params?: unknown) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };

let base: string;
beforeAll(async () => {
  d = await startReadsDevnet();
  base = await listen(d.app());
});
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await d?.stop();
});

describe("malformed messages get the right JSON-RPC error, with a short message", () => {
  it.each([
    ["tools/call without name", req(1, "tools/call", { arguments: {} }), -32602],
    ["tools/call with a numeric name", req(1, "tools/call", { name: 7 }), -32602],
    ["tools/call with array arguments", req(1, "tools/call", { name: "get_preflight", arguments: [] }), -32602],
    ["tools/call with null arguments", req(1, "tools/call", { name: "get_preflight", arguments: null }), -32602],
    ["tools/call of an unknown tool", req(1, "tools/call", { name: "drain_wallet" }), -32602],
    ["initialize without params", req(1, "initialize"), -32602],
    [
      "initialize without clientInfo",
      req(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {} }),
      -32602,
    ],
    ["params an array", req(1, "tools/list", [1, 2]), -32602],
    ["an unknown method", req(1, "completion/complete"), -32601],
    ["jsonrpc 1.0", { jsonrpc: "1.0", id: 1, method: "ping" }, -32600],
    ["not an object", 42, -32600],
    ["an id that is an object", { jsonrpc: "2.0", id: {}, method: "ping" }, -32600],
  ] as const)("%s → %i", async (_name, message, code) => {
    const res = await post(base, message);
    expect(res.json.error.code).toBe(code);
    expect(res.json.jsonrpc).toBe("2.0");
    expect(res.json.error.message.length).toBeLessThan(120);
    expect(res.text).not.toMatch(/zod|Expected|invalid_type|"path"/);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("a malformed member answers alone: the others of the batch are served, in order, with their ids", async () => {
    const res = await post(base, [req(1, "ping"), req(2, "tools/call", { name: 3 }), req(3, "no/such")]);
    expect(res.status).toBe(200);
    expect(res.json.map((a: { id: number }) => a.id)).toEqual([1, 2, 3]);
    expect(res.json[0].result).toEqual({});
    expect(res.json[1].error.code).toBe(-32602);
    expect(res.json[2].error.code).toBe(-32601);
  });

  it("requests sharing an id in a batch are each refused with -32600 alike; the others are answered", async () => {
    const call = req(1, "tools/call", { name: "get_preflight", arguments: {} });
    const twice = req(4, "tools/call", { name: "get_preflight", arguments: {} });
    const batch = [call, req(1, "ping"), req(2, "ping"), { ...req(0, "tools/list"), id: "1" }, twice, twice];
    const res = await post(base, batch);
    expect(res.status).toBe(200);
    expect(res.json.map((a: { id: unknown }) => a.id)).toEqual([1, 1, 2, "1", 4, 4]);
    for (const i of [0, 1, 4, 5]) {
      expect(res.json[i].error.code).toBe(-32600);
      expect(res.json[i].error.message).toMatch(/^Invalid Request: id .* is used by more than one request/);
    }
    // Never one answer of each kind under one id: the client reads the same refusal whichever it takes.
    expect(res.json[0]).toEqual(res.json[1]);
    expect(res.json[2].result).toEqual({});
    expect(res.json[3].result.tools.length).toBe(mcpTools(V1_OPERATIONS).length);
  });

  it("invalid JSON → -32700; an empty or oversized batch → -32600; a body over the limit → 413", async () => {
    expect((await post(base, "{nope")).json.error.code).toBe(-32700);
    expect((await post(base, [])).json.error.code).toBe(-32600);
    const big = Array.from({ length: MCP_MAX_BATCH + 1 }, (_, i) => req(i, "ping"));
    const over = await post(base, big);
    expect([over.status, over.json.error.code]).toEqual([400, -32600]);
    const huge = await post(base, { ...req(1, "ping"), pad: "x".repeat(MCP_MAX_BODY_BYTES) });
    expect(huge.status).toBe(413);
  });

  it("a notification alone is accepted with 202 and no body", async () => {
    const res = await post(base, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
  });
});

describe("tools/list", () => {
  it("is the precomputed list of the tools, the same for every request", async () => {
    const a = await post(base, req(1, "tools/list"));
    const b = await post(base, req(2, "tools/list"));
    expect(a.json.result.tools.map((t: { name: string }) => t.name)).toEqual(
      mcpTools(V1_OPERATIONS).map((t) => t.name),
    );
    expect(JSON.stringify(a.json.result)).toBe(JSON.stringify(b.json.result));
  });

  it("the largest batch there is (all tools/list) stays under the response bound", async () => {
    const res = await post(
      base,
      Array.from({ length: MCP_MAX_BATCH }, (_, i) => req(i, "tools/list")),
    );
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(MCP_MAX_BATCH);
    expect(Buffer.byteLength(res.text)).toBeLessThanOrEqual(MCP_MAX_RESPONSE_BYTES);
  });
});

describe("every message costs budget", () => {
  it("batch members count one by one; over budget is a 429 with Retry-After and one error per message", async () => {
    const limited = await listen(d.app({ config: { ...d.config, rateLimit: { max: 5, windowSec: 60 } } }));
    const first = await post(limited, [req(1, "tools/list"), req(2, "ping"), req(3, "initialize", INIT)]);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe('"mcp";q=5;w=60');
    expect(first.headers.get("ratelimit")).toMatch(/^"mcp";r=2;t=\d+$/);
    const second = await post(limited, [req(4, "ping"), req(5, "tools/list"), req(6, "ping")]);
    expect(second.status).toBe(429);
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(second.json.map((a: { id: number }) => a.id)).toEqual([4, 5, 6]);
    for (const a of second.json) {
      expect(a.error.code).toBe(-32000);
      expect(a.error.data).toMatchObject({ error: "RATE_LIMITED" });
      expect(a.error.data.retryAfterSec).toBeGreaterThan(0);
    }
    // Malformed messages are not free either.
    expect((await post(limited, "{nope")).status).toBe(429);
  });

  it("a well-formed tool call spends its REST route's budget instead, like the REST request it makes", async () => {
    const limited = await listen(d.app({ config: { ...d.config, rateLimit: { max: 2, windowSec: 60 } } }));
    const call = (id: number) => req(id, "tools/call", { name: "get_preflight", arguments: {} });
    const batch = await post(limited, [call(1), call(2), call(3)]);
    expect(batch.status).toBe(200);
    const bodies = batch.json.map((a: { result: { content: { text: string }[] } }) =>
      JSON.parse(a.result.content[0]!.text),
    );
    expect(bodies.map((b: { ok: boolean; error?: string }) => b.error ?? "ok")).toEqual(["ok", "ok", "RATE_LIMITED"]);
    expect((await fetch(`${limited}/api/mcp/v1/preflight`)).status).toBe(429);
    // Arguments that cannot become a request are refused without reaching the route, and still pay for it.
    const state = await listen(d.app({ config: { ...d.config, rateLimit: { max: 1, windowSec: 60 } } }));
    const bad = req(1, "tools/call", { name: "get_state", arguments: { address: { x: 1 } } });
    expect(JSON.parse((await post(state, bad)).json.result.content[0].text).error).toBe("BAD_PARAMS");
    const after = await fetch(`${state}/api/mcp/v1/state/${`0x${"1".repeat(40)}`}`);
    expect(after.status).toBe(429);
  });

  it("2026-07-28 requests pay the same: 1 a message from `mcp`, a tool call its route's budget", async () => {
    const limited = await listen(d.app({ config: { ...d.config, rateLimit: { max: 2, windowSec: 60 } } }));
    const modern = (id: number, method: string, params: Record<string, unknown> = {}, name?: string) =>
      post(
        limited,
        {
          jsonrpc: "2.0",
          id,
          method,
          params: {
            ...params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        { "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}) },
      );
    expect((await modern(1, "server/discover")).status).toBe(200);
    expect((await modern(2, "tools/list")).status).toBe(200);
    const over = await modern(3, "prompts/list");
    expect(over.status).toBe(429);
    expect(over.json.error).toMatchObject({ code: -32000, data: { error: "RATE_LIMITED" } });
    // The mcp budget is spent; a tool call still answers, from its route's budget (2 here), then that one is spent.
    const call = (id: number) => modern(id, "tools/call", { name: "get_preflight", arguments: {} }, "get_preflight");
    const answers = [await call(4), await call(5), await call(6)].map(
      (r) => JSON.parse(r.json.result.content[0].text).error ?? "ok",
    );
    expect(answers).toEqual(["ok", "ok", "RATE_LIMITED"]);
  });
});
