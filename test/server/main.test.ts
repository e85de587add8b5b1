/**
 * The API process as operators run it (api/server/main.ts, `npm run serve:api`) in the production topology
 * on this machine: the seeded devnet behind the fault proxy, Postgres (a fresh database), Redis, ONE indexer
 * (`ponder start --schema asset_v1 --views-schema asset`) and the API process reading the views schema. The
 * HTTP contract (test/support/httpContract.ts, also run against `npm start`) is checked over real sockets
 * against this process, not against app.request.
 */

import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../devnet/anvil";
import { API_PROCESS_ARGS, API_PROCESS_ENV } from "../support/build";
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
async function startApi(databaseUrl?: string, env: Record<string, string> = {}): Promise<ServiceChild> {
  const p = await spawnService({
    command: "api",
    rpcUrl: proxy.url,
    manifestFile,
    databaseUrl,
    schema: "asset_v1",
    viewsSchema: "asset",
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: `servertest:${process.pid}:${randomUUID().slice(0, 8)}:`,
      LOG_LEVEL: "warn",
      ...env,
    },
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

describe("the API process's metrics of the index database", () => {
  /** The value of one series (`name{labels}` exactly as exposed), or undefined when absent. */
  const sample = (text: string, series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  const scrape = async () => (await fetch(`${api.url}/api/metrics`)).text();
  const count = (text: string, statement: string) =>
    sample(text, `api_index_db_query_duration_seconds_count{statement="${statement}",outcome="ok"}`) ?? 0;
  // A wallet no other test reads, so its first read has no hint and asks the index; then read again.
  const user = "0x000000000000000000000000000000000000a11c";

  it("the pool's gauges, read at scrape time, and each statement's duration by name", async () => {
    const before = await scrape();
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${api.url}/api/mcp/v1/state/${user}`);
      expect(res.status).toBe(200);
      expect((await res.json()).source).toBe("subgraph+rpc");
    }
    // The watermark polls every 250 ms: wait for a poll after `before`.
    let text = await scrape();
    for (let i = 0; i < 20 && count(text, "index_mark") <= count(before, "index_mark"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await scrape();
    }
    // The pool has opened connections (the watermark polls every 250 ms, state reads query) and none is queued.
    expect(sample(text, "api_index_db_pool_connections")).toBeGreaterThanOrEqual(1);
    expect(sample(text, "api_index_db_pool_connections")).toBeLessThanOrEqual(10);
    expect(sample(text, "api_index_db_pool_idle_connections")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "api_index_db_pool_waiting_queries")).toBe(0);
    expect(sample(text, "api_index_db_pool_max_connections")).toBe(10);
    // The first read asked the index for the user's ids; the watermark's poll runs all the time.
    expect(count(text, "lock_ids") - count(before, "lock_ids")).toBeGreaterThanOrEqual(1);
    expect(count(text, "index_mark")).toBeGreaterThan(count(before, "index_mark"));
    expect(
      sample(text, 'api_index_db_query_duration_seconds_sum{statement="index_mark",outcome="ok"}'),
    ).toBeGreaterThan(0);
    // Only fixed statement names label the histogram: the store's and the index API's read model's.
    const statements = new Set(
      [...text.matchAll(/api_index_db_query_duration_seconds_count\{statement="([^"]+)"/g)].map((m) => m[1]),
    );
    const named = ["lock_ids", "index_mark", "live_locks", "readiness", "index_probe", "index_lock", "index_locks_of"];
    const alsoNamed = [
      "index_events_of_lock",
      "index_events_of_account",
      "index_holders",
      "index_stats",
      "index_source",
      "index_final_event",
      "index_journal",
    ];
    expect([...statements].filter((s) => ![...named, ...alsoNamed].includes(s!))).toEqual([]);
    // The second read of the user used the first's hint, while the watermark was fresh.
    const hints = (t: string, what: string) => sample(t, `api_cache_${what}_total{cache="state_hints"}`) ?? 0;
    expect(hints(text, "hits") - hints(before, "hits")).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'api_cache_entries{cache="state_hints"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'api_cache_hits_total{cache="index_watermark"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'api_cache_entries{cache="index_watermark"}')).toBe(1);
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

  it("an index of another chain (its checkpoint names 8453, this deployment is 31337): /ready 503 saying so, a warning", async () => {
    const other = await createTestDatabase(PG_URL);
    const url = (other.forPonder("asset") as { url: string }).url;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    // The tables as Ponder 0.17 leaves them: the index's `lock` and its checkpoint, one row per chain.
    await c.query(`CREATE SCHEMA asset;
      CREATE TABLE asset.lock (token_id numeric(78) PRIMARY KEY);
      CREATE TABLE asset._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
        safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL);
      INSERT INTO asset._ponder_checkpoint VALUES ('base', 8453, '0', '0', '0');`);
    try {
      const p = await startApi(url);
      const ready = await fetch(`${p.url}/ready`);
      expect([ready.status, await ready.json()]).toEqual([
        503,
        { ok: false, status: "unready", reason: "index of another chain" },
      ]);
      await vi.waitFor(() => expect(p.log()).toMatch(/the index is of another chain/), { timeout: 5_000 });
      expect(p.log()).toMatch(/8453/);
      // The same index naming this deployment's chain is ready.
      await c.query("UPDATE asset._ponder_checkpoint SET chain_id = 31337");
      expect((await fetch(`${p.url}/ready`)).status).toBe(200);
      await p.stop();
    } finally {
      await c.end();
      await other.drop();
    }
  });

  it("SIGTERM drains and exits 0", async () => {
    const p = await startApi();
    expect(await p.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("SIGTERM with keep-alive clients mid-request: answers after it say `connection: close`, none is reset", async () => {
    // Red-team: 20 keep-alive clients looping /health; the answers in flight at the signal said keep-alive, the
    // clients reused their sockets and the drain's idle sweep reset 4 of those next requests.
    const p = await startApi();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    const seen: Record<string, number> = {};
    let signalled = false;
    const one = () =>
      new Promise<string>((resolve) => {
        const req = http.get(`${p.url}/health`, { agent }, (res) => {
          res.resume();
          res.on("end", () => resolve(`${res.statusCode} ${res.headers.connection}`));
        });
        req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
    const loops = Array.from({ length: 20 }, async () => {
      for (;;) {
        const outcome = await one();
        const key = `${signalled ? "after" : "before"}: ${outcome}`;
        seen[key] = (seen[key] ?? 0) + 1;
        if (signalled && outcome === "ECONNREFUSED") return;
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
    signalled = true;
    const stopped = p.stop("SIGTERM");
    await Promise.all(loops);
    agent.destroy();
    expect(await stopped).toEqual({ code: 0, signal: null });
    // "after" counts from the kill: answers written before the process took the signal still say keep-alive. Then
    // each connection's last answer says close, and its client's next request finds the listener gone — no reset.
    const after = Object.keys(seen).filter((k) => k.startsWith("after") && k !== "after: 200 keep-alive");
    expect(after.sort(), JSON.stringify(seen)).toEqual(["after: 200 close", "after: ECONNREFUSED"]);
    expect(seen["after: 200 close"], JSON.stringify(seen)).toBe(20);
  });

  it("a second signal during the drain ends it at once: the open connections closed, exit 1, a warning says so", async () => {
    // Its own RPC proxy, told to hold eth_call: a cache miss of /api/supply/circulating stays in flight.
    const slowRpc = await startRpcProxy({ upstream: devnet.rpcUrl });
    try {
      const p = await spawnService({
        command: "api",
        rpcUrl: slowRpc.url,
        manifestFile,
        schema: "asset_v1",
        viewsSchema: "asset",
        env: {
          REDIS_URL,
          REDIS_KEY_PREFIX: `servertest:${process.pid}:${randomUUID().slice(0, 8)}:`,
          LOG_LEVEL: "info",
          SHUTDOWN_DRAIN_MS: "20000",
        },
      });
      apis.push(p);
      await p.waitFor200("/health", 30_000);
      slowRpc.setFault({ kind: "delay", ms: 30_000 });
      slowRpc.reset();
      const held = fetch(`${p.url}/api/supply/circulating`).then(
        (res) => `answered ${res.status}`,
        () => "closed",
      );
      await vi.waitFor(() => expect(slowRpc.roundTrips()).toBeGreaterThan(0), { timeout: 10_000 });
      process.kill(p.pid, "SIGTERM");
      await vi.waitFor(() => expect(p.log()).toMatch(/shutdown: draining/), { timeout: 10_000 });
      await new Promise((r) => setTimeout(r, 300));
      expect(p.running(), "the drain waits for the held request").toBe(true);
      const second = performance.now();
      process.kill(p.pid, "SIGINT");
      const exit = await p.exited;
      expect([exit.code, exit.signal]).toEqual([1, null]);
      expect(exit.atMs - second).toBeLessThan(2_000);
      expect(await held).toBe("closed");
      expect(p.log()).toMatch(/shutdown: second signal, drain cut short/);
      expect(p.log()).not.toMatch(/shutdown: drained/);
    } finally {
      await slowRpc.stop();
    }
  }, 90_000);

  it("runs on the allocator serve:api preloads (jemalloc mapped into the process, no loader complaint)", async () => {
    expect(API_PROCESS_ENV.LD_PRELOAD).toBe("libjemalloc.so.2");
    const p = await startApi();
    const maps = readFileSync(`/proc/${p.pid}/maps`, "utf8");
    expect(maps).toMatch(/\/libjemalloc\.so\.2\b/);
    expect(p.log()).not.toMatch(/cannot be preloaded/);
    await p.stop();
  });

  it("keeps the V8 code cache serve:api names (NODE_COMPILE_CACHE): written once it serves, even if killed; the next start compiles the bundle from it", async () => {
    expect(API_PROCESS_ENV.NODE_COMPILE_CACHE).toBe(".cache/node-compile-cache");
    const folder = mkdtempSync(path.join(os.tmpdir(), "api-ncc-"));
    try {
      // Node's own account of its compile cache (NODE_DEBUG_NATIVE=COMPILE_CACHE), on stderr.
      const env = { NODE_COMPILE_CACHE: folder, NODE_DEBUG_NATIVE: "COMPILE_CACHE" };
      const first = await startApi(undefined, env);
      await vi.waitFor(() => expect(first.log()).toMatch(/writing cache for ESM \S*main\.js .*success/), 10_000);
      await first.stop("SIGKILL");
      const main = /ESM file:\/\/\S*dist\/server\/main\.js/;
      expect(first.log()).toMatch(new RegExp(`${main.source} was not initialized|no cache for ${main.source}`));
      const second = await startApi(undefined, env);
      expect(second.log()).toMatch(new RegExp(`V8 code cache for ${main.source} was accepted`));
      await second.stop("SIGKILL");
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("a configuration the API process cannot run with", () => {
  it("stops it with exit code 1 and one line naming every problem, no stack trace", () => {
    const run = spawnSync(process.execPath, API_PROCESS_ARGS, {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...API_PROCESS_ENV,
        NETWORK: "base",
        RPC_URL: "http://127.0.0.1:1",
        PORT: "0",
        DATABASE_URL: "",
      },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^invalid configuration: PORT: .*DATABASE_URL: required for NETWORK=base/),
    ]);
  });

  it("a manifest that cannot be read, and a port already taken, are one line naming the variable too", async () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, API_PROCESS_ARGS, {
        cwd: REPO_ROOT,
        // anvil itself, not this process's proxy: spawnSync holds this process's event loop.
        env: {
          ...process.env,
          ...API_PROCESS_ENV,
          NETWORK: "local",
          RPC_URL: devnet.rpcUrl,
          HOST: "127.0.0.1",
          ...env,
        },
        encoding: "utf8",
        timeout: 30_000,
      });
    const missing = run({ MANIFEST_FILE: "/nonexistent/manifest.json", PORT: String(await freePort()) });
    expect(missing.status).toBe(1);
    expect(missing.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^invalid configuration: MANIFEST_FILE \/ NETWORK: .*\/nonexistent\/manifest\.json/),
    ]);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const busy = run({ MANIFEST_FILE: manifestFile, PORT: String(port) });
      expect(busy.status).toBe(1);
      expect(busy.stderr.trim().split("\n")).toEqual([
        `invalid configuration: PORT / METRICS_PORT: 127.0.0.1:${port} is already in use`,
      ]);
    } finally {
      taken.close();
    }
    // .invalid never resolves (RFC 6761): the listener's HOST is named, nothing else.
    const nowhere = run({ MANIFEST_FILE: manifestFile, PORT: String(await freePort()), HOST: "nosuchhost.invalid" });
    expect(nowhere.status).toBe(1);
    expect(nowhere.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^invalid configuration: HOST \/ METRICS_HOST: nosuchhost\.invalid does not resolve/),
    ]);
  });
});

describe("what the production processes print", () => {
  // After the tests above: the API process has opened index connections under concurrent reads, the indexer has
  // backfilled and gone live. A Node warning line is `(node:<pid>) <Name>Warning: …` on stderr.
  it("neither the API process nor the indexer prints a Node warning (pg's deprecations included)", () => {
    for (const p of [api, indexer]) {
      expect(p.log()).not.toMatch(/\(node:\d+\) \w*Warning|will be removed in pg@/);
    }
  });
});
