import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../api/app";
import { buildOpenApiDocument, type OpenApiDocument } from "../../api/openapi/document";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type DocOperation, openApiValidator } from "../support/openApiValidator";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

// The MCP endpoint with the SDK's own client over real HTTP (@hono/node-server on 127.0.0.1), against
// the seeded devnet: the tools are the documented v1 operations, each answers exactly its REST route's
// envelope, a prepared batch is sent with a viem wallet, and tool calls spend the REST routes' budgets.

type App = ReturnType<typeof createApp>;
type Served = { base: string; close(): Promise<void> };
type Envelope = { ok: boolean; error?: string; detail?: { param?: string }; [k: string]: unknown };

let d: ReadsDevnet;
let doc: OpenApiDocument;
let served: Served;
let client: Client;
const open: { close(): Promise<void> }[] = [];

function listen(app: App): Promise<Served> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      const s: Served = {
        base: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise((done) => {
            (server as Server).closeAllConnections();
            server.close(() => done());
          }),
      };
      open.push(s);
      resolve(s);
    });
  });
}

async function connect(base: string, headers: Record<string, string> = {}): Promise<Client> {
  const c = new Client({ name: "mcp-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers } }));
  open.unshift(c);
  return c;
}

beforeAll(async () => {
  d = await startReadsDevnet();
  doc = await buildOpenApiDocument();
  served = await listen(d.app());
  client = await connect(served.base);
});
afterAll(async () => {
  for (const o of open) await o.close();
  await d?.stop();
});

const operationsUnder = (...prefixes: string[]) =>
  Object.entries(doc.paths)
    // The reads; the operators' webhook routes are no tools.
    .filter(([path]) => prefixes.some((p) => path.startsWith(p)) && !path.startsWith("/api/index/v1/webhooks"))
    .map(([path, item]) => ({ path, op: item.get as unknown as DocOperation }));
const v1Operations = () => operationsUnder("/api/mcp/v1/");
/** Every operation that is a tool: v1 and the index API (whose tools run over an index in test/index/chain.test.ts). */
/** The event stream is no tool: a tool call answers once (api/index/stream.ts). */
const toolOperations = () =>
  operationsUnder("/api/mcp/v1/", "/api/index/v1/").filter(({ path }) => path !== "/api/index/v1/stream");

/** Tool arguments = the operation's documented parameter examples. */
const exampleArgs = (op: DocOperation) =>
  Object.fromEntries(op.parameters.filter((p) => p.example !== undefined).map((p) => [p.name, p.example!]));

function restUrl(path: string, op: DocOperation, args: Record<string, string>) {
  const query = new URLSearchParams();
  let url = path;
  for (const [name, value] of Object.entries(args)) {
    if (op.parameters.some((p) => p.in === "path" && p.name === name)) url = url.replace(`{${name}}`, value);
    else query.append(name, value);
  }
  const q = query.toString();
  return q ? `${url}?${q}` : url;
}

async function rest(base: string, url: string, headers: Record<string, string> = {}) {
  const res = await fetch(base + url, { headers });
  return { status: res.status, body: (await res.json()) as Envelope };
}

async function call(c: Client, name: string, args: Record<string, unknown>) {
  const result = await c.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe("text");
  return { isError: result.isError === true, body: JSON.parse(content[0]!.text) as Envelope };
}

describe("tools", () => {
  it("lists one tool per documented v1 operation, with that operation's parameters as its input schema", async () => {
    const { tools } = await client.listTools();
    const ops = toolOperations();
    expect(tools.map((t) => t.name).sort()).toEqual(ops.map(({ op }) => op["x-mcp-tool"] as string).sort());
    expect(tools).toHaveLength(25);
    for (const { op } of ops) {
      const tool = tools.find((t) => t.name === op["x-mcp-tool"])!;
      const schema = tool.inputSchema as unknown as {
        properties: Record<string, { type: string; pattern?: string }>;
        required: string[];
        additionalProperties: boolean;
      };
      expect(schema.additionalProperties).toBe(false);
      expect(Object.keys(schema.properties)).toEqual(op.parameters.map((p) => p.name));
      expect(schema.required.sort()).toEqual(
        op.parameters
          .filter((p) => p.required)
          .map((p) => p.name)
          .sort(),
      );
      for (const p of op.parameters) {
        expect(schema.properties[p.name]!.type).toBe("string");
        expect(schema.properties[p.name]!.pattern, `${tool.name} ${p.name}`).toBe(p.schema.pattern);
      }
      expect(tool.annotations?.readOnlyHint).toBe(true);
      const verb = op["x-user-facing-verb"] as string | undefined;
      if (verb) expect(tool.description).toContain(`"${verb}"`);
      const narration = tool.description!.replace(/`[^`]*`/g, "").replace(/never use "claim" as a verb/gi, "");
      expect(narration, tool.name).not.toMatch(/\bclaim(s|ed|ing)?\b/i);
    }
    // Tools with a fixed documented answer carry it as their output example, and its request as their input one.
    for (const name of ["get_state", "get_lock_stats", "get_ve_rank", "get_account_history", "get_lock_history"]) {
      const tool = tools.find((t) => t.name === name)!;
      const op = ops.find(({ op: o }) => o["x-mcp-tool"] === name)!.op;
      const out = tool.outputSchema as { examples?: unknown[] };
      expect(out.examples, name).toEqual([op.responses["200"]!.content!["application/json"]!.example]);
      expect((tool.inputSchema as { examples?: unknown[] }).examples, name).toHaveLength(1);
    }
    expect(client.getInstructions()).toMatch(/never use "claim" as a verb/);
  });

  it("every tool answers exactly the envelope of its REST route", async () => {
    const v = openApiValidator(doc);
    for (const { path, op } of v1Operations()) {
      const args = exampleArgs(op);
      const viaMcp = await call(client, op["x-mcp-tool"] as string, args);
      const viaRest = await rest(served.base, restUrl(path, op, args));
      expect(viaRest.status, path).toBe(200);
      expect(viaMcp.isError, path).toBe(false);
      expect(viaMcp.body, path).toEqual(viaRest.body);
      expect(v.check(v.media(path, 200).schema, viaMcp.body), path).toBeNull();
    }
  });

  it("a failure is the REST route's error envelope, with isError", async () => {
    const op = doc.paths["/api/mcp/v1/prepare/stake-lp"]!.get as unknown as DocOperation;
    const user = DEVNET_ACCOUNTS.fresh.address;
    const cases: Record<string, string>[] = [
      { user, amountWei: "1e18" }, // not canonical decimal
      { user, amountWei: "1000000000000000000", memo: "hi" }, // unknown parameter
      { user: user.toLowerCase().replace("0x", "0X"), amountWei: "1" }, // not an address
    ];
    for (const args of cases) {
      const viaMcp = await call(client, "prepare_stake_lp", args);
      const viaRest = await rest(served.base, restUrl("/api/mcp/v1/prepare/stake-lp", op, args));
      expect(viaRest.status).toBe(400);
      expect(viaMcp.isError).toBe(true);
      expect(viaMcp.body).toEqual(viaRest.body);
      expect(viaMcp.body.error).toBe("BAD_PARAMS");
    }
    // What a URL cannot carry as given is refused before the route, in the same envelope.
    const numeric = await call(client, "prepare_stake_lp", { user, amountWei: 1000 });
    expect(numeric).toMatchObject({
      isError: true,
      body: { ok: false, error: "BAD_PARAMS", detail: { param: "amountWei" } },
    });
    const missing = await call(client, "get_state", {});
    expect(missing).toMatchObject({ isError: true, body: { error: "BAD_PARAMS", detail: { param: "address" } } });
    // An on-chain failure: the quoter's revert reason, as the REST route gives it.
    const small = await call(client, "quote_lock_via_furnace", {
      user,
      claimAmountWei: "1",
      durationSeconds: "604800",
    });
    expect(small).toMatchObject({
      isError: true,
      body: { error: "QUOTE_FAILED", detail: { reason: "MinLockAmountNotMet" } },
    });
    await expect(client.callTool({ name: "prepare_claim_all", arguments: {} })).rejects.toThrow(/Unknown tool/);
  });
});

describe("a prepared batch, sent on the devnet", () => {
  const fresh = DEVNET_ACCOUNTS.fresh;
  const A = () => d.deployment.addresses;
  const read = (address: Hex, abi: readonly unknown[], functionName: string, args: readonly unknown[]) =>
    d.chain.publicClient.readContract({ address, abi, functionName, args } as never) as Promise<bigint>;
  const staked = () => read(A().LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "stakedBalance", [fresh.address]);
  const lpBalance = () => read(A().LpToken, DEVNET_ABIS.LpToken, "balanceOf", [fresh.address]);

  async function send(envelope: Envelope) {
    const wallet = d.chain.walletFor(fresh.privateKey);
    const txs = envelope.transactions as { step: string; to: Hex; data: Hex; value: Hex; chainId: number }[];
    for (const tx of txs) {
      expect(tx.chainId).toBe(d.chain.chain.id);
      const hash = await wallet.sendTransaction({
        to: tx.to,
        data: tx.data,
        value: BigInt(tx.value),
        chain: d.chain.chain,
      });
      const receipt = await d.chain.publicClient.waitForTransactionReceipt({ hash });
      expect(receipt.status, tx.step).toBe("success");
    }
    return txs.map((t) => t.step);
  }

  it("stake (approve + stake), unbond, and after 7 days withdraw: the LP goes in and comes back", async () => {
    const amount = 25n * 10n ** 18n;
    const [lp0, staked0] = [await lpBalance(), await staked()];
    expect(staked0).toBe(0n); // `fresh` has never staked

    const stake = await call(client, "prepare_stake_lp", { user: fresh.address, amountWei: String(amount) });
    expect(stake.isError).toBe(false);
    expect(await send(stake.body)).toEqual(["approve", "stake"]); // `fresh` approved nothing
    expect(await staked()).toBe(amount);
    expect(await lpBalance()).toBe(lp0 - amount);
    const state = await call(client, "get_state", { address: fresh.address });
    expect((state.body.user as { lpStakedWei: string }).lpStakedWei).toBe(String(amount));

    const unbond = await call(client, "prepare_unbond_lp", { amountWei: String(amount) });
    expect(await send(unbond.body)).toEqual(["unbond"]);
    expect(await staked()).toBe(0n);

    await d.chain.testClient.increaseTime({ seconds: 7 * 86_400 + 1 });
    await d.chain.testClient.mine({ blocks: 1 });
    const withdraw = await call(client, "prepare_withdraw_lp", {});
    expect(await send(withdraw.body)).toEqual(["withdraw"]);
    expect(await lpBalance()).toBe(lp0);
  });
});

describe("rate limits", () => {
  it("tool calls spend the same per-client, per-prefix budgets as the REST routes", async () => {
    const limited = await listen(d.app({ config: { ...d.config, rateLimit: { max: 2, windowSec: 60 } } }));
    const mcp = await connect(limited.base);
    // REST spends the preflight budget; the tool call is the third request of the same client.
    expect((await rest(limited.base, "/api/mcp/v1/preflight")).status).toBe(200);
    expect((await rest(limited.base, "/api/mcp/v1/preflight")).status).toBe(200);
    const over = await call(mcp, "get_preflight", {});
    expect(over.isError).toBe(true);
    expect(over.body).toMatchObject({ ok: false, error: "RATE_LIMITED" });
    expect(over.body.retryAfterSec).toBeGreaterThan(0);
    // The other way round, in another bucket: tools spend the state budget, REST finds it empty.
    const address = DEVNET_ACCOUNTS.alice.address;
    expect((await call(mcp, "get_state", { address })).isError).toBe(false);
    expect((await call(mcp, "get_state", { address })).isError).toBe(false);
    expect((await rest(limited.base, `/api/mcp/v1/state/${address}`)).status).toBe(429);
    // Every other message spends the client's `mcp` budget: connecting (initialize + the initialized
    // notification) used both of its 2, so listing the tools is over budget, a 429 at the HTTP level.
    await expect(mcp.listTools()).rejects.toThrow(/429|RATE_LIMITED|Too many requests/);
  });

  it("the client is the one the app resolves: X-Forwarded-For counts only from a trusted proxy", async () => {
    // A budget of 2: connecting (initialize + initialized notification) spends a client's whole `mcp` budget.
    const config = { ...d.config, rateLimit: { max: 2, windowSec: 60 }, trustedProxies: ["127.0.0.1"] };
    const proxied = await listen(d.app({ config }));
    // Behind our proxy (127.0.0.1 is trusted): each forwarded client has its own budgets.
    const first = await connect(proxied.base, { "x-forwarded-for": "198.51.100.7" });
    const second = await connect(proxied.base, { "x-forwarded-for": "198.51.100.8" });
    expect((await call(first, "get_preflight", {})).isError).toBe(false);
    expect((await call(first, "get_preflight", {})).isError).toBe(false);
    expect((await call(first, "get_preflight", {})).body.error).toBe("RATE_LIMITED");
    expect((await call(second, "get_preflight", {})).isError).toBe(false);
    // And REST from the first forwarded client finds that budget spent.
    const restFirst = await rest(proxied.base, "/api/mcp/v1/preflight", { "x-forwarded-for": "198.51.100.7" });
    expect(restFirst.status).toBe(429);

    // Not behind a trusted proxy: the header buys nothing, every caller is the socket peer, whose `mcp`
    // budget the first connection spent: the second cannot even connect.
    const direct = await listen(d.app({ config: { ...config, trustedProxies: [] } }));
    await connect(direct.base, { "x-forwarded-for": "198.51.100.7" });
    await expect(connect(direct.base, { "x-forwarded-for": "198.51.100.8" })).rejects.toThrow(/429|Too many/);
  });
});

describe("the HTTP surface of /api/mcp", () => {
  it("POST only (stateless): GET and DELETE are 405 envelopes with CORS; OPTIONS allows POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${served.base}/api/mcp`, { method, headers: { accept: "text/event-stream" } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST, OPTIONS");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(await res.json()).toMatchObject({ ok: false, error: "METHOD_NOT_ALLOWED" });
    }
    const preflight = await fetch(`${served.base}/api/mcp`, {
      method: "OPTIONS",
      headers: { origin: "https://assistant.example", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
  });

  it("carves out exactly /api/mcp: every other path still refuses POST", async () => {
    for (const path of ["/api/mcp/", "/api/mcp/v1/preflight", "/api/mcp/tools", "/api/supply/total"]) {
      const res = await fetch(`${served.base}${path}`, { method: "POST", body: "{}" });
      expect(res.status, path).toBe(405);
      expect((await res.json()).error).toBe("METHOD_NOT_ALLOWED");
    }
  });

  it("answers malformed JSON-RPC with a protocol error, and carries the request id", async () => {
    const res = await fetch(`${served.base}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-request-id": "mcp-test-1",
      },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("x-request-id")).toBe("mcp-test-1");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect((await res.json()).error.code).toBe(-32700);
  });
});

describe("MCP 2025-06-18 clients: output schemas, numeric arguments, Origin", () => {
  it("every tool declares an outputSchema and a success returns structuredContent (validated by the SDK client)", async () => {
    // A fresh client lists the tools first, so its callTool validates structuredContent against them.
    const c = await connect(served.base);
    const { tools } = await c.listTools();
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    for (const { op } of v1Operations()) {
      const name = op["x-mcp-tool"] as string;
      const result = await c.callTool({ name, arguments: exampleArgs(op) });
      expect(result.isError, name).toBe(false);
      const text = (result.content as { text: string }[])[0]!.text;
      expect(result.structuredContent, name).toEqual(JSON.parse(text));
    }
    // An error envelope is text with isError, never structuredContent the output schema would refuse.
    const bad = await c.callTool({ name: "prepare_stake_lp", arguments: { user: "0x1", amountWei: "1" } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toBeUndefined();
  });

  it("a prepare tool's structuredContent carries the simulation, as the REST route does", async () => {
    const user = DEVNET_ACCOUNTS.fresh.address;
    const args = { user, amountWei: "1000000000000000000000", durationSecs: "604800" };
    const result = await client.callTool({ name: "prepare_lock", arguments: args });
    type Sim = { ok: unknown; steps: { step: string; ok: boolean; error?: { name: string } }[]; hint?: unknown };
    const body = result.structuredContent as { simulation: Sim; transactions: { gas?: string }[] };
    // As on Base: the wallet's createLockFor reverts NotAuthorized (Furnace-only); the hint names lock-via-furnace.
    expect(body.simulation.ok).toBe(false);
    expect(body.simulation.steps.map((s) => [s.step, s.ok, s.error?.name])).toEqual([
      ["approve", true, undefined],
      ["lock", false, "NotAuthorized"],
    ]);
    expect(JSON.stringify(body.simulation.hint)).toContain("lock-via-furnace");
    for (const t of body.transactions) expect(t.gas).toMatch(/^0x[0-9a-f]+$/);
    const rest = await fetch(`${served.base}/api/mcp/v1/prepare/lock?${new URLSearchParams(args)}`);
    expect(await rest.json()).toEqual(body);
  });

  it("integers sent as JSON numbers are accepted when safe; floats, unsafe integers and negatives are BAD_PARAMS", async () => {
    const user = DEVNET_ACCOUNTS.fresh.address;
    const amount = 2 ** 52; // ≥ the vault's minimum stake, and a safe integer
    const asNumber = await call(client, "prepare_stake_lp", { user, amountWei: amount, simulate: false });
    const asString = await call(client, "prepare_stake_lp", { user, amountWei: String(amount), simulate: "false" });
    expect(asNumber.isError).toBe(false);
    expect(asNumber.body).toEqual(asString.body);
    // Flags as JSON booleans too.
    const harvest = await call(client, "prepare_harvest_rewards", { compound: false });
    expect(harvest.isError).toBe(false);
    for (const amountWei of [1.5, 2 ** 53, 1e21, -1]) {
      const refused = await call(client, "prepare_stake_lp", { user, amountWei });
      expect(refused, String(amountWei)).toMatchObject({
        isError: true,
        body: { ok: false, error: "BAD_PARAMS", detail: { param: "amountWei" } },
      });
    }
    const object = await call(client, "prepare_stake_lp", { user, amountWei: { n: 1 } });
    expect(object.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "amountWei" } });
  });

  it("Origin: any well-formed origin is served (public, CORS *, no credentials); a malformed one is 403", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "origin-test", version: "1" } },
    });
    const post = (origin?: string) =>
      fetch(`${served.base}/api/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(origin === undefined ? {} : { origin }),
        },
        body: initialize,
      });
    for (const origin of [
      undefined,
      "https://assistant.example",
      "http://localhost:6274",
      "null",
      "http://[::1]:8080",
    ]) {
      const res = await post(origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect((await res.json()).result.protocolVersion).toBe("2025-06-18");
    }
    for (const origin of ["not an origin", "https://a.example/path", "https://a.example, https://b.example", ""]) {
      const res = await post(origin);
      expect(res.status, origin).toBe(403);
      expect((await res.json()).error.message).toMatch(/Origin/);
    }
  });
});
