/**
 * Issue 24 item 6 against the API process as operators run it (api/server/main.ts), behind a trusted proxy
 * (TRUSTED_PROXIES=127.0.0.1) and with its index database down:
 * - X-Forwarded-For entries with a port or IPv6 brackets name the client, so two clients keep two budgets instead of
 *   sharing the proxy's;
 * - requests sharing an id in one MCP batch are each refused with -32600, never answered with a mix;
 * - a database outage under many requests (and the index's watermark polling it 4 times a second) is one warning
 *   line each with its cause, not one per request or poll.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

let devnet: TestDevnet;
let api: ServiceChild;

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  api = await spawnService({
    command: "api",
    rpcUrl: devnet.rpcUrl,
    manifestFile: writeManifest(devnet.deployment.manifest),
    // Nothing listens there: every index query fails at once (connection refused). Port 1, not a free port picked
    // now: nothing holds a picked port, and a CI run once saw a process started after the pick listening on it (the
    // first cause "Connection terminated unexpectedly" instead of ECONNREFUSED); nothing here binds port 1.
    databaseUrl: "postgresql://postgres@127.0.0.1:1/none",
    schema: "none",
    env: { TRUSTED_PROXIES: "127.0.0.1", RATE_LIMIT_MAX: "3", LOG_LEVEL: "warn", REDIS_URL: "" },
  });
  await api.waitFor200("/health", 30_000);
}, 120_000);

afterAll(async () => {
  await api?.stop("SIGKILL");
  await devnet?.stop();
});

const state = (n: number) => `/api/mcp/v1/state/${Object.values(DEVNET_ACCOUNTS)[n % 4]!.address}`;

describe("the API process behind a proxy, its index down", () => {
  it("X-Forwarded-For with a port or IPv6 brackets: each client its own budget, not the proxy's", async () => {
    const get = (xff: string, n: number) =>
      fetch(`${api.url}${state(n)}`, { headers: { "x-forwarded-for": xff } }).then((r) => r.status);
    const a = [];
    for (let i = 0; i < 4; i++) a.push(await get("198.51.100.7:5678", i));
    expect(a).toEqual([200, 200, 200, 429]);
    // Another client behind the same proxy still has its whole budget.
    expect(await get("[2001:db8::7]:443", 0)).toBe(200);
    expect(await get("6.6.6.6, [2001:db8::8]", 0)).toBe(200);
    expect(await get("198.51.100.9:80, 127.0.0.1:1234", 0)).toBe(200);
  });

  it("requests sharing an id in an MCP batch are each refused with -32600", async () => {
    const res = await fetch(`${api.url}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-forwarded-for": "203.0.113.50",
      },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 7, method: "ping" },
        { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get_preflight", arguments: {} } },
        { jsonrpc: "2.0", id: 8, method: "ping" },
      ]),
    });
    const answers = (await res.json()) as { id: number; error?: { code: number }; result?: unknown }[];
    expect(answers.map((a) => [a.id, a.error?.code ?? "result"])).toEqual([
      [7, -32600],
      [7, -32600],
      [8, "result"],
    ]);
  });

  it("a database outage under many requests: one warning line, with its cause", async () => {
    const n = 20;
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${api.url}${state(i)}`, { headers: { "x-forwarded-for": `192.0.2.${i + 1}:4000` } });
      expect(await res.json()).toMatchObject({ ok: true, source: "rpc" });
    }
    const lines = api
      .log()
      .split("\n")
      .filter((l) => l.includes('"lock index unavailable; state answers source rpc"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(String(lines[0]!.cause)).toMatch(/ECONNREFUSED|connect/);
    // The watermark polls the index 4 times a second, traffic or not: one line too, with its cause.
    const polls = api
      .log()
      .split("\n")
      .filter((l) => l.includes('"index database not answering; state reads ask it per request"'));
    expect(polls).toHaveLength(1);
    expect(polls[0]).toMatch(/"cause":"ECONNREFUSED/);
  });
});
