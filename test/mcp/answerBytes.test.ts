/**
 * The MCP answers the API process serves are byte for byte the JSON of their messages, as they were before
 * tools/list's result was pre-encoded and answers spliced from shared bytes (api/mcp/gatekeeper.ts): every
 * answer is compared with JSON.stringify of the answer object (the tools/list result is mcpTools(V1_OPERATIONS) as listed,
 * the errors errorAnswer's), across ids whose text needs escaping or is not ASCII, single messages and batches
 * mixing every kind of answer. Against the served process (dist/server/main.js), over HTTP.
 */

import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorAnswer, JSON_RPC, MCP_MAX_BATCH } from "../../api/mcp/gatekeeper";
import { mcpTools } from "../../api/mcp/server";
import { V1_OPERATIONS } from "../../api/routes";
import { childEnv, startApiChild } from "../support/apiProcess";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

let d: ReadsDevnet;
let dir: string;
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "mcp-bytes-"));
  ({ child, base } = await startApiChild({ ...childEnv(d, dir), RATE_LIMIT_MAX: "1000000" }));
}, 120_000);
afterAll(async () => {
  child?.kill("SIGTERM");
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** The raw bytes of the answer to `body`, with its status and declared length. */
async function post(body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/mcp`, { method: "POST", headers: { ...HEADERS, ...headers }, body });
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    length: Number(res.headers.get("content-length")),
    bytes,
  };
}

const utf8 = (text: string) => Buffer.from(text, "utf8");
const listed = mcpTools(V1_OPERATIONS).map(({ operation: _operation, ...tool }) => tool);
const listAnswer = (id: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result: { tools: listed } });
const request = (id: unknown, method: string, params?: unknown) =>
  ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) as const;
const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };

/** Ids whose JSON text needs escaping or is not ASCII, and the extreme integers (an id is a string or a safe integer). */
const IDS = [
  0,
  -1,
  2 ** 53 - 1,
  -(2 ** 53 - 1),
  12345678901234,
  "",
  "é☃😀",
  '"\\\n\u2028\u0007',
  "</script>",
  "x".repeat(200),
];

describe("tools/list", () => {
  it("a single request: the JSON of its answer, with its byte length declared", async () => {
    for (const id of [7, "é☃😀"]) {
      const res = await post(JSON.stringify(request(id, "tools/list")));
      expect(res.status).toBe(200);
      expect(res.type).toBe("application/json");
      expect(res.bytes.equals(utf8(listAnswer(id)))).toBe(true);
      expect(res.length).toBe(res.bytes.byteLength);
    }
  });

  it(`a batch of ${MCP_MAX_BATCH}: the JSON array of the answers, in order, each under its own id`, async () => {
    expect(IDS).toHaveLength(MCP_MAX_BATCH);
    const res = await post(JSON.stringify(IDS.map((id) => request(id, "tools/list"))));
    expect(res.status).toBe(200);
    const expected = utf8(`[${IDS.map(listAnswer).join(",")}]`);
    expect(res.bytes.byteLength).toBe(expected.byteLength);
    expect(res.bytes.equals(expected)).toBe(true);
    expect(res.length).toBe(expected.byteLength);
    // The same bytes on the next request: the shared parts are not changed by sending them.
    const again = await post(JSON.stringify(IDS.map((id) => request(id, "tools/list"))));
    expect(again.bytes.equals(expected)).toBe(true);
  });
});

describe("initialize, ping and errors", () => {
  it("a batch mixing every kind of answer: each answer's JSON, in message order, none for a notification", async () => {
    const messages = [
      request(1, "ping"),
      request("two", "tools/list"),
      request(3, "completion/complete"),
      request(4, "tools/list", { cursor: 5 }),
      { id: 5, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      request(9, "ping"),
      request(9, "tools/list"),
      request(10, "tools/call", { name: "no_such_tool" }),
    ];
    const res = await post(JSON.stringify(messages));
    expect(res.status).toBe(200);
    const dup = "Invalid Request: id 9 is used by more than one request of this batch.";
    const expected = [
      JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} }),
      listAnswer("two"),
      errorAnswer(3, JSON_RPC.METHOD_NOT_FOUND, "Method not found: completion/complete"),
      errorAnswer(4, JSON_RPC.INVALID_PARAMS, "Invalid params: cursor must be a string."),
      errorAnswer(5, JSON_RPC.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message."),
      errorAnswer(9, JSON_RPC.INVALID_REQUEST, dup),
      errorAnswer(9, JSON_RPC.INVALID_REQUEST, dup),
      errorAnswer(10, JSON_RPC.INVALID_PARAMS, "Unknown tool: no_such_tool"),
    ];
    expect(res.bytes.toString("utf8")).toBe(`[${expected.join(",")}]`);
    expect(res.length).toBe(res.bytes.byteLength);
  });

  it("initialize (the SDK's answer): the same bytes for the same request, its length declared", async () => {
    const first = await post(JSON.stringify(request(10, "initialize", INIT)));
    expect(first.status).toBe(200);
    const answer = JSON.parse(first.bytes.toString("utf8")) as { id: number; result: { protocolVersion: string } };
    expect(answer.id).toBe(10);
    expect(answer.result.protocolVersion).toBe(INIT.protocolVersion);
    expect(first.bytes.toString("utf8")).toBe(JSON.stringify(answer));
    expect(first.length).toBe(first.bytes.byteLength);
    const again = await post(JSON.stringify(request(10, "initialize", INIT)));
    expect(again.bytes.equals(first.bytes)).toBe(true);
  });

  it("a single ping, and refusals of the whole request: the JSON-RPC error as before", async () => {
    const ping = await post(JSON.stringify(request("p", "ping")));
    expect(ping.bytes.toString("utf8")).toBe('{"jsonrpc":"2.0","id":"p","result":{}}');
    const cases: [string, Record<string, string>, number, string][] = [
      ["{", {}, 400, errorAnswer(null, JSON_RPC.PARSE_ERROR, "Parse error: invalid JSON.")],
      [
        "[]",
        {},
        400,
        errorAnswer(null, JSON_RPC.INVALID_REQUEST, `Invalid Request: a batch holds 1 to ${MCP_MAX_BATCH} messages.`),
      ],
      [
        JSON.stringify(request(1, "ping")),
        { origin: "not an origin" },
        403,
        errorAnswer(null, JSON_RPC.SERVER_ERROR, "Forbidden: malformed Origin header"),
      ],
      [
        JSON.stringify(request(1, "ping")),
        { "content-type": "text/plain" },
        415,
        errorAnswer(null, JSON_RPC.SERVER_ERROR, "Unsupported Media Type: Content-Type must be application/json"),
      ],
    ];
    for (const [body, headers, status, answer] of cases) {
      const res = await post(body, headers);
      expect(res.status).toBe(status);
      expect(res.bytes.toString("utf8")).toBe(answer);
    }
  });

  it("notifications only: 202 with no body", async () => {
    const res = await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(res.status).toBe(202);
    expect(res.bytes.byteLength).toBe(0);
  });
});
