/**
 * Both eras of POST /api/mcp on the API process as operators run it (dist/server/main.js over a synthetic index on
 * Postgres, test/support/servedIndex.ts), through the official clients: `@modelcontextprotocol/client@2` pinned to
 * 2026-07-28 (stateless, server/discover), the same client in its default legacy mode (initialize → 2025-11-25), and
 * the 1.x client (`@modelcontextprotocol/sdk`). Each era lists the same tools, resources and prompts and reads the same
 * answers; the modern era's wire carries what 2026-07-28 requires (resultType, cache hints, the standard headers
 * checked against the body, an unsupported revision refused naming the supported ones).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildInfo } from "../../api/buildInfo";
import { TOOL_GROUPS } from "../../api/mcp/guide";
import type { ServiceChild } from "../support/replica";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";
import type { SyntheticIndex } from "../support/syntheticIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const MODERN = "2026-07-28";
const PV = "io.modelcontextprotocol/protocolVersion";
const CAPS = "io.modelcontextprotocol/clientCapabilities";

let served: ServedIndex;
let api: ServiceChild;
let index: SyntheticIndex;
const open: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: "mcperas",
    synthetic: { events: 400, owners: 3, seed: 7 },
  });
  ({ api, index } = served);
}, 180_000);
afterAll(async () => {
  for (const c of open) await c.close().catch(() => {});
  await served?.stop();
});

type AnyClient = {
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(p: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResources(): Promise<{ resources: { uri: string; mimeType?: string }[] }>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(p: { uri: string }): Promise<{ contents: { uri: string; mimeType?: string; text?: string }[] }>;
  listPrompts(): Promise<{ prompts: { name: string; arguments?: { name: string; required?: boolean }[] }[] }>;
  getPrompt(p: {
    name: string;
    arguments?: Record<string, string>;
  }): Promise<{ messages: { content: { type: string; text?: string } }[] }>;
  getServerVersion(): { version: string } | undefined;
  getInstructions(): string | undefined;
};

const url = () => new URL(`${api.url}/api/mcp`);

async function modernClient(): Promise<ClientV2> {
  const c = new ClientV2({ name: "eras-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
  await c.connect(new TransportV2(url()));
  open.push(c);
  return c;
}
async function v2LegacyClient(): Promise<ClientV2> {
  const c = new ClientV2({ name: "eras-test", version: "1.0.0" });
  await c.connect(new TransportV2(url()));
  open.push(c);
  return c;
}
async function v1Client(): Promise<ClientV1> {
  const c = new ClientV1({ name: "eras-test", version: "1.0.0" });
  await c.connect(new TransportV1(url()));
  open.push(c);
  return c;
}

const firstLock = () => [...index.locks.values()].find((l) => !l.burned && l.owner)!;

/** What every era must answer alike: the lists, every resource, a prompt, a tool call. */
/** An index answer without its lag (seconds since the head's block, which moves with the wall clock between reads). */
function atBlock<T extends Record<string, unknown> | undefined>(answer: T): T {
  if (!answer) return answer;
  const { indexLagSeconds: _lag, ...rest } = answer;
  return rest as T;
}

async function surfaceOf(c: AnyClient) {
  const lock = firstLock();
  const tools = (await c.listTools()).tools.map((t) => t.name).sort();
  const resources = (await c.listResources()).resources.map((r) => `${r.uri} ${r.mimeType}`).sort();
  const templates = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
  const prompts = (await c.listPrompts()).prompts.map((p) => ({
    name: p.name,
    args: (p.arguments ?? []).map((a) => `${a.name}${a.required ? "!" : ""}`),
  }));
  const reads: Record<string, Record<string, unknown>> = {};
  for (const uri of [
    "asset://stats",
    "asset://leaderboards/ve",
    "asset://guide",
    `asset://locks/${lock.tokenId}`,
    `asset://accounts/${lock.owner}/locks`,
  ]) {
    const { contents } = await c.readResource({ uri });
    expect(contents).toHaveLength(1);
    expect(contents[0]!.uri).toBe(uri);
    expect(contents[0]!.mimeType).toBe("application/json");
    reads[uri] = atBlock(JSON.parse(contents[0]!.text!) as Record<string, unknown>);
  }
  const prompt = await c.getPrompt({
    name: "lock_via_furnace",
    arguments: { address: lock.owner!, amountWei: "1000000000000000000", slippageBps: "100" },
  });
  const call = (await c.callTool({ name: "get_lock_stats", arguments: {} })) as {
    structuredContent?: Record<string, unknown>;
  };
  return { tools, resources, templates, prompts, reads, prompt, stats: atBlock(call.structuredContent) };
}

describe("both eras on POST /api/mcp, through the official clients", () => {
  it("client v2 pinned to 2026-07-28: no initialize, server/discover, the same surface as the 2025 era", async () => {
    const modern = await modernClient();
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    const discover = modern.getDiscoverResult()!;
    expect(discover.supportedVersions).toEqual(expect.arrayContaining([MODERN, "2025-11-25", "2025-06-18"]));
    expect(Object.keys(discover.capabilities)).toEqual(expect.arrayContaining(["tools", "resources", "prompts"]));
    expect(modern.getServerVersion()?.version).toBe(buildInfo().version);
    for (const group of TOOL_GROUPS) expect(discover.instructions, group).toMatch(new RegExp(`\\b${group}:`, "i"));

    const m = await surfaceOf(modern as unknown as AnyClient);
    const l = await surfaceOf((await v2LegacyClient()) as unknown as AnyClient);
    const v1 = await surfaceOf((await v1Client()) as unknown as AnyClient);
    expect(m.tools.length).toBeGreaterThanOrEqual(20);
    expect(m.resources).toEqual([
      "asset://guide application/json",
      "asset://leaderboards/ve application/json",
      "asset://stats application/json",
    ]);
    expect(m.templates).toEqual(["asset://accounts/{address}/locks", "asset://locks/{tokenId}"]);
    expect(m.prompts.map((p) => p.name)).toEqual(["review_my_locks", "lock_via_furnace", "collect_everything"]);
    expect(m.prompts[1]!.args).toEqual(["address!", "amountWei!", "durationSeconds", "targetTokenId", "slippageBps"]);
    // The eras agree on everything (the index does not move during the test).
    for (const other of [l, v1]) {
      expect(other.tools).toEqual(m.tools);
      expect(other.resources).toEqual(m.resources);
      expect(other.templates).toEqual(m.templates);
      expect(other.prompts).toEqual(m.prompts);
      expect(other.reads).toEqual(m.reads);
      // (a 2026-07-28 result also names the server in _meta)
      expect(other.prompt.messages).toEqual(m.prompt.messages);
      expect(other.stats).toEqual(m.stats);
    }
    // Every index resource is read at one block, the index's head, and is its REST route's answer there.
    const head = index.head.block.toString();
    const lock = firstLock();
    for (const [uri, body] of Object.entries(m.reads)) {
      if (uri === "asset://guide") continue;
      expect(body.blockNumber, uri).toBe(head);
    }
    const rest = async (path: string) =>
      atBlock((await (await fetch(`${api.url}/api/index/v1${path}?block=${head}`)).json()) as Record<string, unknown>);
    expect(m.reads[`asset://locks/${lock.tokenId}`]).toEqual(await rest(`/locks/${lock.tokenId}`));
    expect(m.reads[`asset://accounts/${lock.owner}/locks`]).toEqual(await rest(`/accounts/${lock.owner}/locks`));
    expect(m.reads["asset://stats"]).toEqual(await rest("/stats"));
    expect(m.reads["asset://leaderboards/ve"]).toEqual(await rest("/leaderboards/ve"));
    expect(m.stats).toEqual(m.reads["asset://stats"]);
    // The guide: every tool, its group, the units, what the service never does.
    const guide = m.reads["asset://guide"] as { tools: { name: string; group: string | null }[]; units: object };
    expect(guide.tools.map((t) => t.name).sort()).toEqual(m.tools);
    for (const t of guide.tools) expect(TOOL_GROUPS, t.name).toContain(t.group);
    expect(Object.keys(guide.units)).toEqual(expect.arrayContaining(["amounts", "wei", "durations", "autoMax"]));
    expect(m.reads["asset://guide"]).toHaveProperty("neverDoes");
    // The prompt chains the tools with the arguments given.
    const text = m.prompt.messages[0]!.content.text!;
    expect(text).toContain("quote_lock_via_furnace");
    expect(text).toContain("prepare_lock_via_furnace");
    expect(text).toContain("slippageBps=100");
    expect(text).toContain(lock.owner!);
  });

  it("the 2025 handshake is answered as before: 2025-11-25, with resources and prompts beside the tools", async () => {
    const c = await v1Client();
    expect(c.getServerVersion()?.version).toBe(buildInfo().version);
    expect(c.getServerCapabilities()).toEqual({
      tools: { listChanged: false },
      resources: { listChanged: false, subscribe: false },
      prompts: { listChanged: false },
    });
    const l = await v2LegacyClient();
    expect(l.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    // client v2's "auto" mode probes server/discover and takes the modern era it offers.
    const auto = new ClientV2({ name: "eras-test", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await auto.connect(new TransportV2(url()));
    open.push(auto);
    expect(auto.getNegotiatedProtocolVersion()).toBe(MODERN);
    await expect(c.readResource({ uri: "asset://locks/999999999" })).rejects.toMatchObject({ code: -32002 });
    await expect(c.getPrompt({ name: "review_my_locks", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});

type Wire = {
  result?: Record<string, unknown> & { _meta: Record<string, { version: string }> };
  error?: { code: number; message: string; data: { supported?: string[] } };
};

/** One raw 2026-07-28 POST: the envelope in _meta and the standard headers (overridable). */
async function modernPost(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  version = MODERN,
) {
  const res = await fetch(url(), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": version,
      "mcp-method": method,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method,
      params: { ...params, _meta: { [PV]: version, [CAPS]: {} } },
    }),
  });
  return { status: res.status, body: (await res.json()) as Wire };
}

describe("the 2026-07-28 wire", () => {
  it("server/discover and every list carry resultType and the public cache hints", async () => {
    for (const method of [
      "server/discover",
      "tools/list",
      "prompts/list",
      "resources/list",
      "resources/templates/list",
    ]) {
      const { status, body } = await modernPost(method);
      expect(status, method).toBe(200);
      expect(body.result, method).toMatchObject({ resultType: "complete", ttlMs: 600_000, cacheScope: "public" });
      expect(body.result!._meta["io.modelcontextprotocol/serverInfo"]?.version).toBe(buildInfo().version);
    }
  });

  it("a block-pinned resource says how long it holds: one block at the head (the route's max-age)", async () => {
    const { body } = await modernPost("resources/read", { uri: "asset://stats" }, { "mcp-name": "asset://stats" });
    expect(body.result).toMatchObject({ resultType: "complete", ttlMs: 2000, cacheScope: "public" });
  });

  it("a header that disagrees with the body is refused: 400, -32020", async () => {
    const wrongMethod = await modernPost("tools/list", {}, { "mcp-method": "prompts/list" });
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.body.error!.code).toBe(-32020);
    const wrongVersion = await modernPost("tools/list", {}, { "mcp-protocol-version": "2025-11-25" });
    expect(wrongVersion.status).toBe(400);
    expect(wrongVersion.body.error!.code).toBe(-32020);
    const wrongName = await modernPost(
      "tools/call",
      { name: "get_lock_stats", arguments: {} },
      { "mcp-name": "get_lock" },
    );
    expect(wrongName.status).toBe(400);
    expect(wrongName.body.error!.code).toBe(-32020);
  });

  it("an unsupported revision is refused naming the supported ones: -32022", async () => {
    const { status, body } = await modernPost("tools/list", {}, {}, "2099-01-01");
    expect(status).toBe(400);
    expect(body.error!.code).toBe(-32022);
    expect(body.error!.data.supported).toContain(MODERN);
  });

  it("no batches, and no subscription streams (nothing here changes while the process runs)", async () => {
    const batch = await fetch(url(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify(
        [1, 2].map((id) => ({
          jsonrpc: "2.0",
          id,
          method: "tools/list",
          params: { _meta: { [PV]: MODERN, [CAPS]: {} } },
        })),
      ),
    });
    expect(batch.status).toBe(400);
    expect(((await batch.json()) as Wire).error!.code).toBe(-32600);
    const listen = await modernPost("subscriptions/listen", { notifications: { toolsListChanged: true } });
    expect(listen.status).toBe(200);
    expect(listen.body.error!.code).toBe(-32603);
  });

  it("params of the wrong shape are a short -32602, as in the 2025 era (no validator's dump)", async () => {
    for (const [method, params, headers] of [
      ["resources/read", {}, {}],
      ["prompts/get", { name: "review_my_locks", arguments: { address: 5 } }, { "mcp-name": "review_my_locks" }],
      ["tools/call", { name: "get_lock", arguments: [] }, { "mcp-name": "get_lock" }],
    ] as const) {
      const { status, body } = await modernPost(method, params, headers);
      expect(status, method).toBe(200);
      expect(body.error?.code, method).toBe(-32602);
      expect(body.error?.message, method).toMatch(/^Invalid params: [^[\n]+$/);
    }
  });
});

/** One raw 2025-era POST (no envelope: api/mcp/server.ts's own path over SDK 1.x). */
async function legacyPost(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(url(), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method, params }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Wire & { result?: { isError?: boolean; content?: { text: string }[] } },
  };
}

describe("the 2025 transport's revision header", () => {
  it("a revision this server does not speak is 400 (ping included, which is answered without the SDK)", async () => {
    // Not a date (garbage > "2026" as a string, which once routed it to the 2026 era and its envelope refusal).
    for (const revision of ["1999-01-01", "2025-07-01", "garbage", "banana", "2026-7-28"]) {
      const { status, body } = await legacyPost("ping", {}, { "mcp-protocol-version": revision });
      expect(status, revision).toBe(400);
      expect(body.error?.message, revision).toMatch(/^Bad Request: Unsupported protocol version/);
    }
    // 2024-10-07 included: SDK 1.x agrees to it in initialize, so a request naming it after is answered.
    for (const revision of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]) {
      const { status, body } = await legacyPost("ping", {}, { "mcp-protocol-version": revision });
      expect([status, body.result], revision).toEqual([200, {}]);
    }
  });
});

describe("arguments are judged as the REST route judges its parameters, in both eras", () => {
  const lockId = () => String(firstLock().tokenId);

  it("an argument named like an Object member (toString, valueOf) is an unknown parameter, not ignored", async () => {
    for (const name of ["toString", "valueOf"]) {
      const args = JSON.parse(`{"tokenId":"${lockId()}",${JSON.stringify(name)}:"1"}`) as Record<string, unknown>;
      const legacy = await legacyPost("tools/call", { name: "get_lock", arguments: args });
      const modern = await modernPost("tools/call", { name: "get_lock", arguments: args }, { "mcp-name": "get_lock" });
      for (const [era, answer] of [
        ["2025", legacy.body.result as { isError?: boolean; content?: { text: string }[] }],
        ["2026", modern.body.result as { isError?: boolean; content?: { text: string }[] }],
      ] as const) {
        expect(answer?.isError, `${era} ${name}`).toBe(true);
        const envelope = JSON.parse(answer!.content![0]!.text) as { error: string; message: string };
        expect(envelope.error, `${era} ${name}`).toBe("BAD_PARAMS");
        expect(envelope.message, `${era} ${name}`).toBe(`Unknown parameter ${name}.`);
      }
    }
  });

  it("`constructor` and `__proto__` are answered as any unknown argument is: the tool's BAD_PARAMS, in both eras", async () => {
    for (const era of ["2025", "2026"] as const) {
      for (const value of ['"x"', "1", "{}"]) {
        // As it comes off the wire: JSON.parse makes `__proto__` an own member.
        const answerFor = async (name: string) => {
          const args = `{"tokenId":"${lockId()}",${JSON.stringify(name)}:${value}}`;
          const { status, body } = await rawPost(callText(era, "get_lock", args), era);
          expect([status, (body as ToolAnswer).result?.isError], `${era} ${args}`).toEqual([200, true]);
          return envelopeOf(body);
        };
        const unknown = JSON.stringify(await answerFor("nope"));
        for (const name of ["constructor", "__proto__"]) {
          const envelope = await answerFor(name);
          expect(envelope, `${era} ${name}: ${value}`).toMatchObject({ error: "BAD_PARAMS", detail: { param: name } });
          expect(envelope, `${era} ${name}: ${value}`).toEqual(JSON.parse(unknown.replaceAll("nope", name)));
        }
      }
    }
  });

  it("a prompt's argument with few values takes only those: collect_everything's mode 2 is -32602, not mode 0", async () => {
    const address = firstLock().owner!;
    const { body } = await legacyPost("prompts/get", { name: "collect_everything", arguments: { address, mode: "2" } });
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toMatch(/mode must be 0 or 1/);
    const ok = await legacyPost("prompts/get", { name: "collect_everything", arguments: { address, mode: "1" } });
    expect(ok.body.result).toBeDefined();
    // Mode 1 swaps ETH with minVeOut as its only bound: the service quotes it; the assistant must not ask for one.
    const text = JSON.stringify(ok.body.result);
    expect(text).toContain("without minVeOutWei: the service quotes the pending royalties");
    expect(text).not.toContain("and a minVeOutWei");
    const listed = await legacyPost("prompts/list", {});
    expect(JSON.stringify(listed.body.result)).not.toContain("oneOf");
  });

  it("a prompt's arguments are strings: another type is a short -32602 in the 2025 era too", async () => {
    const { body } = await legacyPost("prompts/get", { name: "review_my_locks", arguments: { address: 5 } });
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toBe("Invalid params: prompt argument address must be a string.");
  });
});

/** A raw POST of `text` as it is (a member twice, a number as written, bytes): the era is the headers'. */
async function rawPost(
  text: string | Uint8Array<ArrayBuffer>,
  era: "2025" | "2026",
  method = "tools/call",
  name = "get_lock",
) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (era === "2026")
    Object.assign(headers, { "mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": name });
  const res = await fetch(url(), { method: "POST", headers, body: text, signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  return { status: res.status, body: body === "" ? undefined : (JSON.parse(body) as unknown) };
}
const meta = (era: "2025" | "2026") =>
  era === "2026" ? `,"_meta":${JSON.stringify({ [PV]: MODERN, [CAPS]: {} })}` : "";
/** A tool call's text with the arguments written as given. */
const callText = (era: "2025" | "2026", name: string, argsText: string) =>
  `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"${name}","arguments":${argsText}${meta(era)}}}`;
type ToolAnswer = {
  result?: { isError?: boolean; content?: { text: string }[] };
  error?: { code: number; message: string };
};
const envelopeOf = (answer: unknown) =>
  JSON.parse((answer as ToolAnswer).result!.content![0]!.text) as {
    error?: string;
    message?: string;
    detail?: { param?: string };
  };

describe("what a message's text says and JSON.parse hides, in both eras (the API process)", () => {
  const lockId = () => String(firstLock().tokenId);

  it("an argument given twice is BAD_PARAMS naming it, as a repeated REST parameter (never the last one encoded)", async () => {
    for (const era of ["2025", "2026"] as const) {
      for (const args of [`{"tokenId":"${lockId()}","tokenId":"1"}`, `{"tokenId":"1","tokenId":"${lockId()}"}`]) {
        const { status, body } = await rawPost(callText(era, "get_lock", args), era);
        expect(status, `${era} ${args}`).toBe(200);
        expect((body as ToolAnswer).result?.isError, `${era} ${args}`).toBe(true);
        expect(envelopeOf(body), `${era} ${args}`).toMatchObject({
          error: "BAD_PARAMS",
          message: "Parameter tokenId is given more than once.",
          detail: { param: "tokenId" },
        });
      }
    }
    // Any other member twice: which one the sender meant cannot be known.
    const twice = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_lock","name":"get_lock_stats","arguments":{}}}`;
    expect((await rawPost(twice, "2025")).body).toMatchObject({ id: 5, error: { code: -32602 } });
    const methodTwice = `{"jsonrpc":"2.0","id":5,"method":"ping","method":"tools/list"}`;
    expect((await rawPost(methodTwice, "2025")).body).toMatchObject({ id: 5, error: { code: -32600 } });
  });

  it("a number written with a fraction, an exponent or as -0 is BAD_PARAMS even where it parses to an integer", async () => {
    const id = lockId();
    for (const era of ["2025", "2026"] as const) {
      for (const written of [`${id}.0`, `${id}.0000000000000000001`, `${id}e0`, "-0", `${Number(id) * 10}E-1`]) {
        const { body } = await rawPost(callText(era, "get_lock", `{"tokenId":${written}}`), era);
        expect((body as ToolAnswer).result?.isError, `${era} ${written}`).toBe(true);
        expect(envelopeOf(body), `${era} ${written}`).toMatchObject({
          error: "BAD_PARAMS",
          detail: { param: "tokenId" },
        });
      }
      // A plain integer still is the number it says.
      const plain = await rawPost(callText(era, "get_lock", `{"tokenId":${id}}`), era);
      expect((plain.body as ToolAnswer).result?.isError, era).toBe(false);
    }
  });

  it("a path argument that would name another route (`..`, `.`, a board `ve`, empty) is BAD_PARAMS for it", async () => {
    const address = firstLock().owner!;
    for (const era of ["2025", "2026"] as const) {
      for (const [tool, args, param] of [
        ["get_leaderboard_rank", { board: "..", address: "stats" }, "board"],
        ["get_leaderboard_rank", { board: "ve", address }, "board"],
        ["get_leaderboard", { board: "ve" }, "board"],
        ["get_lock", { tokenId: ".." }, "tokenId"],
        ["get_account_locks", { address: "." }, "address"],
        ["get_lock", { tokenId: "" }, "tokenId"],
      ] as const) {
        const { body } = await rawPost(callText(era, tool, JSON.stringify(args)), era, "tools/call", tool);
        expect((body as ToolAnswer).result?.isError, `${era} ${tool} ${JSON.stringify(args)}`).toBe(true);
        expect(envelopeOf(body), `${era} ${tool} ${JSON.stringify(args)}`).toMatchObject({
          error: "BAD_PARAMS",
          detail: { param },
        });
      }
    }
  });

  it("a message nested 5,000 deep is a -32600 of its own, never a 500 or a lost batch", async () => {
    const deep = `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`;
    const modern = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"${PV}":"${MODERN}","${CAPS}":{"experimental":{"x":${deep}}}}}}`;
    const m = await rawPost(modern, "2026", "tools/list", "");
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({
      id: 3,
      error: { code: -32600, message: "Invalid Request: nested deeper than 32 levels." },
    });
    const legacy = `[{"jsonrpc":"2.0","id":1,"result":{"x":${deep}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`;
    const l = await rawPost(legacy, "2025");
    expect(l.status).toBe(200);
    expect(l.body).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32600, message: "Invalid Request: nested deeper than 32 levels." } },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });

  it("2025: a request and its own notifications/cancelled in one batch are answered (the request was never answered)", async () => {
    const batch = `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_lock_stats"}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","id":2,"method":"resources/list"}]`;
    const { status, body } = await rawPost(batch, "2025");
    expect(status).toBe(200);
    const answers = body as { id: number; result?: { isError?: boolean } }[];
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[0]!.result?.isError).toBe(false);
  });

  it("2025: a message the SDK's transport refuses is answered on its own; the rest of the batch is answered", async () => {
    const batch = `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_lock_stats","_meta":5}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":5},{"jsonrpc":"2.0","id":9},{"jsonrpc":"2.0","id":1.5,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","extra":1},{"jsonrpc":"2.0","id":3,"method":"ping"}]`;
    const { status, body } = await rawPost(batch, "2025");
    expect(status).toBe(200);
    const answers = body as { id: unknown; error?: { code: number; message: string }; result?: unknown }[];
    expect(answers.map((a) => [a.id, a.error?.code ?? "ok"])).toEqual([
      [1, -32602],
      [null, -32600],
      [9, -32600],
      [null, -32600],
      [2, -32600],
      [3, "ok"],
    ]);
    for (const a of answers) if (a.error) expect(a.error.message).toMatch(/^Invalid (params|Request): [^\n]{1,200}$/);
    // A well-formed response (this server asks nothing) is taken: 202, no body.
    expect(await rawPost(`{"jsonrpc":"2.0","id":4,"result":{}}`, "2025")).toEqual({ status: 202, body: undefined });
  });

  it("2025: initialize with a capability of the wrong type is a short -32602 naming it (not -32603 and zod's dump)", async () => {
    const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":5},"clientInfo":{"name":"x","version":"1"}}}`;
    const { body } = await rawPost(init, "2025");
    expect(body).toMatchObject({ id: 1, error: { code: -32602 } });
    const message = (body as ToolAnswer).error!.message;
    expect(message).toContain("params.capabilities.roots");
    expect(message).not.toContain("\n");
    expect(message.length).toBeLessThan(200);
  });

  it("a list's cursor this server never handed out (its lists come whole) is -32602, in both eras", async () => {
    for (const method of ["tools/list", "resources/list", "prompts/list", "resources/templates/list"]) {
      const legacy = await legacyPost(method, { cursor: "abc" });
      const modern = await modernPost(method, { cursor: "abc" });
      for (const body of [legacy.body, modern.body]) {
        expect(body.error?.code, method).toBe(-32602);
        expect(body.error?.message, method).toMatch(/^Invalid params: cursor is not one this server handed out/);
      }
    }
  });

  it("2026-07-28: a body that is not JSON-RPC is answered as such, not as an unsupported revision", async () => {
    const bad = await rawPost("{bad json", "2026", "tools/list", "");
    expect(bad).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    const big = await rawPost(
      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"${"x".repeat(70_000)}"}}`,
      "2026",
      "tools/list",
      "",
    );
    expect(big).toMatchObject({ status: 413, body: { error: { code: -32600 } } });
  });
});

describe("ids and bytes as sent, and the methods served, in both eras (the API process)", () => {
  /** A ping (2025) or a tools/list (2026) whose id is written as `idText`. */
  const idText = (era: "2025" | "2026", id: string) =>
    era === "2025"
      ? `{"jsonrpc":"2.0","id":${id},"method":"ping"}`
      : `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{${meta(era).slice(1)}}}`;

  it("a body that is not valid UTF-8 is -32700 with id null, never answered under an id the client did not send", async () => {
    for (const era of ["2025", "2026"] as const) {
      // An id string holding a lone continuation byte, an overlong `/`, and a truncated 3-byte sequence.
      for (const bad of [[0x80], [0xc0, 0xaf], [0xe2, 0x82]]) {
        const [head, tail] = idText(era, '"a@"').split("@") as [string, string];
        const bytes = Buffer.concat([Buffer.from(head), Buffer.from(bad), Buffer.from(tail)]);
        const { status, body } = await rawPost(new Uint8Array(bytes), era, "tools/list", "");
        expect([status, body], `${era} ${bad}`).toEqual([
          400,
          { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body is not valid UTF-8." } },
        ]);
      }
      // Valid UTF-8 beyond ASCII is the id as sent.
      const ok = await rawPost(Buffer.from(idText(era, '"é€😀"')), era, "tools/list", "");
      expect((ok.body as { id: unknown }).id, era).toBe("é€😀");
    }
  });

  it("an integer id beyond 2^53 − 1 is refused (-32600, id null), never echoed rounded; a safe one is echoed", async () => {
    const message =
      "Invalid Request: id must be a string or an integer within ±(2^53 − 1): a larger number cannot be echoed exactly (send it as a string).";
    for (const era of ["2025", "2026"] as const) {
      for (const id of ["9007199254740993", "9007199254740992", "-9007199254740993", "12345678901234567890123"]) {
        const { status, body } = await rawPost(idText(era, id), era, "tools/list", "");
        expect([status, body], `${era} ${id}`).toEqual([
          200,
          { jsonrpc: "2.0", id: null, error: { code: -32600, message } },
        ]);
      }
      for (const id of ["9007199254740991", "-9007199254740991", '"9007199254740993"']) {
        const { body } = await rawPost(idText(era, id), era, "tools/list", "");
        expect((body as { id: unknown }).id, `${era} ${id}`).toEqual(JSON.parse(id));
      }
    }
  });

  it("OPTIONS names only the methods /api/mcp serves: each of them is not a 405, the others are", async () => {
    const preflight = await fetch(url(), {
      method: "OPTIONS",
      headers: { origin: "https://assistant.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    const listed = preflight.headers.get("access-control-allow-methods")!.split(/,\s*/);
    expect(listed).toEqual(["POST", "OPTIONS"]);
    for (const method of ["GET", "HEAD", "DELETE", "PUT"]) {
      const res = await fetch(url(), { method, headers: { accept: "application/json, text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow"), method).toBe("POST, OPTIONS");
    }
    const post = await rawPost(idText("2025", "1"), "2025");
    expect(post.status).toBe(200);
  });
});
