/**
 * The API process as operators run it (api/server/main.ts, `npm run serve:api`) in the production topology
 * on this machine: the seeded devnet behind the fault proxy, Postgres (a fresh database), Redis, ONE indexer
 * (`ponder start --schema asset_v1 --views-schema asset`) and the API process reading the views schema. The
 * HTTP contract is checked over real sockets against this process, not against app.request.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, REPO_ROOT, type TestDatabase, writeManifest } from "../support/ponder";
import { type PonderChild, spawnPonder } from "../support/replica";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const MAIN = path.join(REPO_ROOT, "api", "server", "main.ts");

let devnet: TestDevnet;
let proxy: RpcProxy;
let database: TestDatabase;
let indexer: PonderChild;
let manifestFile: string;
let api: { child: ChildProcess; base: string; output: () => string };
const children: ChildProcess[] = [];

async function startApi(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      ...process.env,
      NETWORK: "local",
      MANIFEST_FILE: manifestFile,
      RPC_URL: proxy.url,
      REDIS_URL,
      REDIS_KEY_PREFIX: `servertest:${process.pid}:${randomUUID().slice(0, 8)}:`,
      LOG_LEVEL: "warn",
      PORT: String(port),
      HOST: "127.0.0.1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stderr!.on("data", (c) => {
    out += c;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      out += c;
      if (out.includes('"listening"')) resolve();
    });
    child.once("exit", (code) => reject(new Error(`api exited ${code}: ${out}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, output: () => out };
}

/** One raw exchange on a fresh socket: what a client that does not speak HTTP properly gets back. */
function raw(base: string, bytes: string): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve) => {
    let answer = "";
    const socket: Socket = connect({ host: "127.0.0.1", port: Number(port) }, () => socket.write(bytes));
    socket.on("data", (c) => {
      answer += c;
    });
    socket.on("close", () => resolve(answer));
    socket.on("error", () => resolve(answer));
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  await devnet.clients.testClient.mine({ blocks: 32 });
  proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
  database = await createTestDatabase(PG_URL);
  manifestFile = writeManifest(devnet.deployment.manifest);
  const databaseUrl = (database.forPonder("asset_v1") as { url: string }).url;
  indexer = await spawnPonder({
    command: "start",
    rpcUrl: proxy.url,
    manifestFile,
    databaseUrl,
    schema: "asset_v1",
    viewsSchema: "asset",
  });
  await indexer.waitFor200("/ready", 120_000);
  api = await startApi({ DATABASE_URL: databaseUrl, DATABASE_SCHEMA: "asset_v1", DATABASE_VIEWS_SCHEMA: "asset" });
}, 240_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await indexer?.stop();
  await database?.drop();
  await proxy?.stop();
  await devnet?.stop();
});

describe("the API process on the index's views schema", () => {
  it("is live and ready, and answers state from the index, exact at its block", async () => {
    expect(await (await fetch(`${api.base}/health`)).json()).toEqual({ ok: true, status: "up" });
    const ready = await fetch(`${api.base}/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, { ok: true, status: "ready" }]);
    const state = await (await fetch(`${api.base}/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`)).json();
    expect(state.source).toBe("subgraph+rpc");
    expect(state.indexedBlock).toMatch(/^[0-9]+$/);
    expect(state.user.veLocks.length).toBeGreaterThan(0);
  });

  it("answers the HTTP contract: envelopes, CORS, request ids, budgets, supply bytes, MCP", async () => {
    const notFound = await fetch(`${api.base}/no/such`, { headers: { "x-request-id": "served-1" } });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("access-control-allow-origin")).toBe("*");
    expect(notFound.headers.get("x-request-id")).toBe("served-1");
    expect(await notFound.json()).toMatchObject({ ok: false, error: "NOT_FOUND" });

    const post = await fetch(`${api.base}/api/supply/total`, { method: "POST" });
    expect([post.status, (await post.json()).error, post.headers.get("allow")]).toEqual([
      405,
      "METHOD_NOT_ALLOWED",
      "GET, HEAD, OPTIONS",
    ]);

    const preflight = await fetch(`${api.base}/api/mcp/v1/preflight`, {
      method: "OPTIONS",
      headers: { origin: "https://assistant.example", "access-control-request-method": "GET" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const limited = await fetch(`${api.base}/api/mcp/v1/preflight`);
    expect(limited.headers.get("ratelimit-policy")).toBe('"preflight";q=300;w=60');

    const bare = await fetch(`${api.base}/api/supply/total?format=bare`);
    expect(bare.status).toBe(200);
    expect(bare.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(bare.headers.get("cache-control")).toBe("public, max-age=300");
    expect(await bare.text()).toMatch(/^(0|[1-9][0-9]*)\.[0-9]{2}$/);

    const mcp = await fetch(`${api.base}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(200);
    expect((await mcp.json()).result.tools.length).toBeGreaterThan(10);

    const docs = await fetch(`${api.base}/docs`);
    expect([docs.status, (await docs.text()).includes("/docs/assets/scalar.js")]).toEqual([200, true]);
    const metrics = await (await fetch(`${api.base}/api/metrics`)).text();
    expect(metrics).toContain("api_http_request_duration_seconds_bucket");
  });

  it.each([
    [
      "a URL over 16 KiB",
      431,
      "HEADERS_TOO_LARGE",
      `GET /api/supply/total?x=${"a".repeat(17_000)} HTTP/1.1\r\nhost: x\r\n\r\n`,
    ],
    [
      "a header flood",
      431,
      "HEADERS_TOO_LARGE",
      `GET / HTTP/1.1\r\nhost: x\r\n${"x-pad: aaaaaaaaaaaaaaaaaaaa\r\n".repeat(800)}\r\n`,
    ],
    ["a bad request line", 400, "BAD_REQUEST", "GARBAGE\r\n\r\n"],
    ["an unknown method", 400, "BAD_REQUEST", "FROB / HTTP/1.1\r\nhost: x\r\n\r\n"],
    [
      "Content-Length with Transfer-Encoding (smuggling)",
      400,
      "BAD_REQUEST",
      "POST /api/mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
  ] as const)("%s → %i %s in the envelope, with CORS and a request id", async (_name, status, code, bytes) => {
    const answer = await raw(api.base, bytes);
    expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(answer.toLowerCase()).toContain("access-control-allow-origin: *");
    expect(answer.toLowerCase()).toMatch(/x-request-id: [0-9a-f-]{36}/);
    expect(envelopeOf(answer)).toMatchObject({ ok: false, error: code });
    // The server still serves.
    expect((await fetch(`${api.base}/health`)).status).toBe(200);
  });
});

describe("probes never hang", () => {
  let silent: Server;
  let silentPort: number;
  const sockets = new Set<Socket>();
  let emptyDb: TestDatabase;
  beforeAll(async () => {
    // A TCP listener that accepts and never says a word: a hung database.
    silent = createServer((socket) => {
      sockets.add(socket);
    });
    emptyDb = await createTestDatabase(PG_URL);
    silentPort = await new Promise((r) =>
      silent.listen(0, "127.0.0.1", () => r((silent.address() as { port: number }).port)),
    );
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
    await emptyDb?.drop();
  });

  it.each([
    [
      "down (connection refused)",
      async () => `postgresql://postgres@127.0.0.1:${await freePort()}/x`,
      "database unreachable",
    ],
    [
      "silent (accepts, never answers)",
      async () => `postgresql://postgres@127.0.0.1:${silentPort}/x`,
      "database unreachable",
    ],
    ["up, without the index", async () => (emptyDb.forPonder("nothing_here") as { url: string }).url, "index missing"],
  ])("Postgres %s: /health 200 and /ready 503 within 1 s, no internals", async (_name, url, reason) => {
    const p = await startApi({
      DATABASE_URL: await url(),
      DATABASE_SCHEMA: "asset_v1",
      DATABASE_VIEWS_SCHEMA: "asset",
    });
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const health = await fetch(`${p.base}/health`);
      expect(health.status).toBe(200);
      const ready = await fetch(`${p.base}/ready`);
      const body = await ready.text();
      expect(performance.now() - t0).toBeLessThan(1_000);
      expect(ready.status).toBe(503);
      expect(JSON.parse(body)).toEqual({ ok: false, status: "unready", reason });
      expect(body).not.toMatch(/pg-pool|Error|node_modules|ECONN/);
    }
    p.child.kill("SIGTERM");
  });

  it("SIGTERM drains and exits 0", async () => {
    const p = await startApi({});
    const exited = new Promise<number | null>((r) => p.child.once("exit", (code) => r(code)));
    p.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
