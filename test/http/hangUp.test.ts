/**
 * A hang-up stops the work (api/http/cancellation.ts, issue 24 item 4), against the API process as operators run it
 * (api/server/main.ts) on a seeded devnet behind the fault proxy and a Postgres index:
 * - a client that hangs up mid-simulation: the node's connection for eth_simulateV1 is closed (the proxy sees it
 *   abandoned), api_aborted_work_total{kind="simulation"} moves, the request is recorded as 499;
 * - a client that hangs up during an earlier read: the simulation is never sent;
 * - a client that hangs up while its index query waits: the query's backend is gone from Postgres at once, not at
 *   statement_timeout, and api_aborted_work_total{kind="db"} moves;
 * - two clients sharing one single-flight read (the gate's preflight, a supply figure): one hangs up, the read goes on
 *   and the other gets its answer.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { encodeFunctionData } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LaunchControllerAbi } from "../../abis";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";
import { ethCallSelector, type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SCHEMA = "hangup";
/** LaunchController.preflight(): the gate's read. */
const PREFLIGHT = encodeFunctionData({ abi: LaunchControllerAbi, functionName: "preflight" });

let devnet: TestDevnet;
let proxy: RpcProxy;
let database: TestDatabase;
let databaseUrl: string;
let manifestFile: string;
const children: ServiceChild[] = [];

const user = DEVNET_ACCOUNTS.alice.address;
const PREPARE = `/api/mcp/v1/prepare/stake-lp?user=${user}&amountWei=1000000000000000000`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startApi(): Promise<ServiceChild> {
  const p = await spawnService({
    command: "api",
    rpcUrl: proxy.url,
    manifestFile,
    databaseUrl,
    schema: SCHEMA,
    env: { LOG_LEVEL: "error", REDIS_URL: "" },
  });
  children.push(p);
  await p.waitFor200("/health", 30_000);
  return p;
}

/** One series of /api/metrics (0 when absent). */
async function metric(base: string, series: string): Promise<number> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** GETs `path` and hangs up (closes the connection) once `when` holds; resolves when it has. */
async function hangUpWhen(url: string, when: () => boolean, timeoutMs = 10_000): Promise<void> {
  const controller = new AbortController();
  const answered = fetch(url, { signal: controller.signal }).then(
    () => "answered",
    () => "aborted",
  );
  const until = performance.now() + timeoutMs;
  while (!when()) {
    if (performance.now() > until) throw new Error("the condition to hang up on never held");
    await sleep(10);
  }
  controller.abort();
  expect(await answered).toBe("aborted");
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 3_000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
  return performance.now() - started;
}

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
  manifestFile = writeManifest(devnet.deployment.manifest);
  database = await createTestDatabase(PG_URL);
  databaseUrl = (database.forPonder(SCHEMA) as { url: string }).url;
  // The relations the API reads of Ponder's index (api/read/store.ts), empty: enough to be waited on.
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${SCHEMA};
    CREATE TABLE ${SCHEMA}.lock (token_id numeric(78) PRIMARY KEY, owner text, burned boolean NOT NULL DEFAULT false,
      amount numeric(78), lock_end numeric(78), auto_max boolean);
    CREATE TABLE ${SCHEMA}._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint,
      safe_checkpoint varchar(75), latest_checkpoint varchar(75))`);
  await admin.end();
}, 120_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop("SIGKILL")));
  await database?.drop();
  await proxy?.stop();
  await devnet?.stop();
  if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
});

describe("a hang-up stops the work of its request", () => {
  it("two clients share the gate's preflight read: one hangs up, the read goes on, the other is answered", async () => {
    // A fresh process: its gate has never read the preflight, so both requests wait on one read.
    const api = await startApi();
    proxy.reset();
    proxy.setFault({ kind: "delay", ms: 1_500, match: (m, p) => ethCallSelector(m, p) === PREFLIGHT });
    try {
      const other = fetch(`${api.url}/api/mcp/v1/preflight`);
      await hangUpWhen(`${api.url}/api/mcp/v1/preflight`, () => proxy.calls.length > 0);
      const res = await other;
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ ok: true, finalized: true });
      expect(proxy.calls.filter((c) => ethCallSelector(c.method, c.params) === PREFLIGHT)).toHaveLength(1);
      expect(proxy.abandoned()).toBe(0);
      expect(await metric(api.url, 'api_aborted_work_total{kind="rpc"}')).toBe(0);
    } finally {
      proxy.setFault(null);
    }
  });

  it("two clients share a supply figure's load: one hangs up, the other is answered", async () => {
    const api = children[0]!;
    proxy.reset();
    proxy.setFault({ kind: "delay", ms: 1_000 });
    try {
      const other = fetch(`${api.url}/api/supply/circulating`);
      await hangUpWhen(`${api.url}/api/supply/circulating`, () => proxy.calls.length > 0);
      const res = await other;
      expect(res.status).toBe(200);
      expect(proxy.abandoned()).toBe(0);
    } finally {
      proxy.setFault(null);
    }
  });

  it("mid-simulation: the simulation's call to the node is cut off, counted, and the request recorded as 499", async () => {
    const api = children[0]!;
    expect((await fetch(`${api.url}${PREPARE}`)).status).toBe(200); // the gate is open from here on
    proxy.reset();
    proxy.setFault({ kind: "delay", ms: 3_000, match: (m) => m === "eth_simulateV1" });
    try {
      const before = await metric(api.url, 'api_aborted_work_total{kind="simulation"}');
      await hangUpWhen(`${api.url}${PREPARE}`, () => proxy.count("eth_simulateV1") > 0);
      // Closed by the API well before the node would have answered.
      const ms = await until("the simulation's connection closed", () => proxy.abandoned() === 1);
      console.log(
        `hang-up → simulation's connection to the node closed: ${Math.round(ms)} ms (the node held it 3000 ms)`,
      );
      expect(ms).toBeLessThan(1_000);
      expect(await metric(api.url, 'api_aborted_work_total{kind="simulation"}')).toBe(before + 1);
      const route = 'route="/api/mcp/v1/prepare/:action",status="499"';
      expect(await metric(api.url, `api_http_requests_total{method="GET",${route}}`)).toBe(1);
    } finally {
      proxy.setFault(null);
    }
  });

  it("an MCP client hanging up mid-tool-call stops the tool call's simulation too", async () => {
    const api = children[0]!;
    proxy.reset();
    proxy.setFault({ kind: "delay", ms: 3_000, match: (m) => m === "eth_simulateV1" });
    try {
      const before = await metric(api.url, 'api_aborted_work_total{kind="simulation"}');
      const controller = new AbortController();
      const call = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "prepare_stake_lp", arguments: { user, amountWei: "1000000000000000000" } },
      };
      const answered = fetch(`${api.url}/api/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(call),
        signal: controller.signal,
      }).catch(() => "aborted");
      await until("the simulation sent", () => proxy.count("eth_simulateV1") > 0);
      controller.abort();
      expect(await answered).toBe("aborted");
      expect(await until("the simulation's connection closed", () => proxy.abandoned() === 1)).toBeLessThan(1_000);
      expect(await metric(api.url, 'api_aborted_work_total{kind="simulation"}')).toBe(before + 1);
    } finally {
      proxy.setFault(null);
    }
  });

  it("during an earlier read: the simulation is never sent", async () => {
    const api = children[0]!;
    proxy.reset();
    proxy.setFault({ kind: "delay", ms: 1_500, match: (m) => m === "eth_call" });
    try {
      const before = await metric(api.url, 'api_aborted_work_total{kind="rpc"}');
      await hangUpWhen(`${api.url}${PREPARE}`, () => proxy.count("eth_call") > 0);
      await until("the read's connection closed", () => proxy.abandoned() === 1);
      await sleep(1_800); // past the read's delay: nothing of the request may follow it
      expect(proxy.count("eth_simulateV1")).toBe(0);
      expect(proxy.count("eth_call")).toBe(1);
      expect(await metric(api.url, 'api_aborted_work_total{kind="rpc"}')).toBe(before + 1);
    } finally {
      proxy.setFault(null);
    }
  });

  it("while its index query waits: the query's backend stops at once, not at statement_timeout", async () => {
    const api = children[0]!;
    // Another session holds the table, so the state route's lock query waits on it (up to statement_timeout, 2 s).
    const holder = new pg.Client({ connectionString: databaseUrl });
    await holder.connect();
    // This database's backends only: the API processes of other test files on the same server send the statement too.
    const stmt =
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%string_agg(token_id::text%' AND pid <> pg_backend_pid()";
    const probe = new pg.Client({ connectionString: databaseUrl });
    await probe.connect();
    const waiting = async () => (await probe.query(stmt)).rows[0].n as number;
    try {
      await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.lock IN ACCESS EXCLUSIVE MODE`);
      const before = await metric(api.url, 'api_aborted_work_total{kind="db"}');
      // A user never read before: no hint, so the route asks the index first.
      const fresh = `0x${randomUUID().replaceAll("-", "").slice(0, 32)}00000000`;
      let seen = false;
      const watch = (async () => {
        while (!seen) {
          seen = (await waiting()) > 0;
          await sleep(20);
        }
      })();
      await hangUpWhen(`${api.url}/api/mcp/v1/state/${fresh}`, () => seen);
      await watch;
      const hungUp = performance.now();
      const ms = await until("the query's backend gone", async () => (await waiting()) === 0, 1_500);
      expect(performance.now() - hungUp).toBeLessThan(1_000);
      console.log(`hang-up → index query's backend gone: ${Math.round(ms)} ms (statement_timeout 2000 ms)`);
      expect(await metric(api.url, 'api_aborted_work_total{kind="db"}')).toBe(before + 1);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
      await probe.end();
    }
  });
});
