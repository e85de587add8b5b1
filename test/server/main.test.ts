/**
 * The API process as operators run it (api/server/main.ts, `npm run serve:api`) in the production topology
 * on this machine: the seeded devnet behind the fault proxy, Postgres (a fresh database), Redis, ONE indexer
 * (`ponder start --schema asset_v1 --views-schema asset`) and the API process reading the views schema. The
 * HTTP contract (test/support/httpContract.ts, also run against `npm start`) is checked over real sockets
 * against this process, not against app.request.
 */

import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { API_PROCESS_ARGS } from "../support/build";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { httpContract } from "../support/httpContract";
import { createTestDatabase, REPO_ROOT, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let devnet: TestDevnet;
let proxy: RpcProxy;
let database: TestDatabase;
let indexer: ServiceChild;
let manifestFile: string;
let api: ServiceChild;
const apis: ServiceChild[] = [];

/** The API process on the views schema `asset` of `databaseUrl` (none: no index), once it answers /health. */
async function startApi(databaseUrl?: string): Promise<ServiceChild> {
  const p = await spawnService({
    command: "api",
    rpcUrl: proxy.url,
    manifestFile,
    databaseUrl,
    schema: "asset_v1",
    viewsSchema: "asset",
    env: { REDIS_URL, REDIS_KEY_PREFIX: `servertest:${process.pid}:${randomUUID().slice(0, 8)}:`, LOG_LEVEL: "warn" },
  });
  apis.push(p);
  await p.waitFor200("/health", 30_000);
  return p;
}

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  await devnet.clients.testClient.mine({ blocks: 32 });
  proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
  database = await createTestDatabase(PG_URL);
  manifestFile = writeManifest(devnet.deployment.manifest);
  const databaseUrl = (database.forPonder("asset_v1") as { url: string }).url;
  indexer = await spawnService({
    command: "start",
    rpcUrl: proxy.url,
    manifestFile,
    databaseUrl,
    schema: "asset_v1",
    viewsSchema: "asset",
  });
  await indexer.waitFor200("/ready", 120_000);
  api = await startApi(databaseUrl);
}, 240_000);

afterAll(async () => {
  await Promise.all(apis.map((p) => p.stop("SIGKILL")));
  await indexer?.stop();
  await database?.drop();
  await proxy?.stop();
  await devnet?.stop();
});

describe("the API process on the index's views schema: the HTTP contract", () => {
  httpContract(() => api.url);
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
    const p = await startApi(await url());
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const health = await fetch(`${p.url}/health`);
      expect(health.status).toBe(200);
      const ready = await fetch(`${p.url}/ready`);
      const body = await ready.text();
      expect(performance.now() - t0).toBeLessThan(1_000);
      expect(ready.status).toBe(503);
      expect(JSON.parse(body)).toEqual({ ok: false, status: "unready", reason });
      expect(body).not.toMatch(/pg-pool|Error|node_modules|ECONN/);
    }
    await p.stop();
  });

  it("SIGTERM drains and exits 0", async () => {
    const p = await startApi();
    expect(await p.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  });
});

describe("a configuration the API process cannot run with", () => {
  it("stops it with exit code 1 and one line naming every problem, no stack trace", () => {
    const run = spawnSync(process.execPath, API_PROCESS_ARGS, {
      cwd: REPO_ROOT,
      env: { ...process.env, NETWORK: "base", RPC_URL: "http://127.0.0.1:1", PORT: "0", DATABASE_URL: "" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^invalid configuration: PORT: .*DATABASE_URL: required for NETWORK=base/),
    ]);
  });
});
