import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { Redis } from "ioredis";
import type { Address } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";
import { ethCallSelector, type RpcProxy, startRpcProxy } from "../support/rpcProxy";

// The production shape on one machine, with the real parts: Postgres (a fresh database), Redis (a unique key
// prefix), the seeded devnet behind the fault proxy, ONE indexer (`ponder start --schema asset_v1
// --views-schema asset`) and TWO API processes (`npm run serve:api`, api/server/main.ts, reading the stable views
// schema). The RPC URL carries a key in its path; every line any process prints and every response body is
// checked for it.

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const SECRET = `SECRETKEY123${randomUUID().slice(0, 8)}`;
const PREFIX = `prodtest:${process.pid}:${Date.now()}:`;
const DRAIN_MS = Number(process.env.DRAIN_MS_OVERRIDE ?? 6_000);

let devnet: TestDevnet;
let proxy: RpcProxy;
let database: TestDatabase;
let indexer: ServiceChild;
let a: ServiceChild;
let b: ServiceChild;
const bodies: string[] = [];

type Reply = { status: number; body: string; headers: Headers };
async function get(base: ServiceChild, path: string): Promise<Reply> {
  const res = await fetch(`${base.url}${path}`, { signal: AbortSignal.timeout(20_000) });
  const body = await res.text();
  let headers = "";
  res.headers.forEach((v, k) => {
    headers += `${k}: ${v}\n`;
  });
  bodies.push(body, headers);
  return { status: res.status, body, headers: res.headers };
}
const json = (r: Reply) => JSON.parse(r.body);

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  // Ponder treats the last 30 blocks as unfinalized: mine past them so /ready means every seeded event is in.
  await devnet.clients.testClient.mine({ blocks: 32 });
  proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
  database = await createTestDatabase(PG_URL);
  const common = {
    rpcUrl: `${proxy.url}/v1/${SECRET}`,
    manifestFile: writeManifest(devnet.deployment.manifest),
    databaseUrl: (database.forPonder("asset_v1") as { url: string }).url,
    logLevel: "info" as const,
    env: {
      REDIS_URL,
      REDIS_KEY_PREFIX: PREFIX,
      RPC_TIMEOUT_MS: "4000",
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      LOG_LEVEL: "debug",
    },
  };
  indexer = await spawnService({ ...common, command: "start", schema: "asset_v1", viewsSchema: "asset" });
  // The views schema appears once historical indexing is done; the API processes serve it.
  await indexer.waitFor200("/ready", 120_000);
  [a, b] = await Promise.all([
    spawnService({ ...common, command: "api", schema: "asset_v1", viewsSchema: "asset" }),
    spawnService({ ...common, command: "api", schema: "asset_v1", viewsSchema: "asset" }),
  ]);
  await Promise.all([a.waitFor200("/ready", 60_000), b.waitFor200("/ready", 60_000)]);
}, 240_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), indexer?.stop()]);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await database?.drop();
  await proxy?.stop();
  await devnet?.stop();
});

describe("one indexer, two API processes", () => {
  const users: Address[] = [
    DEVNET_ACCOUNTS.alice.address,
    DEVNET_ACCOUNTS.bob.address,
    DEVNET_ACCOUNTS.carol.address,
    DEVNET_ACCOUNTS.capped.address,
    DEVNET_ACCOUNTS.idle.address,
  ];

  it("both replicas return identical lock lists from the index", async () => {
    for (const user of users) {
      const [ra, rb] = await Promise.all([get(a, `/api/mcp/v1/state/${user}`), get(b, `/api/mcp/v1/state/${user}`)]);
      expect(ra.status, ra.body).toBe(200);
      expect(rb.status, rb.body).toBe(200);
      expect(json(ra).source).toBe("subgraph+rpc");
      expect(json(rb).source).toBe("subgraph+rpc");
      expect(json(ra).user.veLocks).toEqual(json(rb).user.veLocks);
    }
    const capped = json(await get(a, `/api/mcp/v1/state/${DEVNET_ACCOUNTS.capped.address}`));
    expect(capped.user.veLocks).toHaveLength(32);
  });

  it("holds the rate limit across replicas: 300 per prefix in total, then 429 on both", async () => {
    // preflight with an unknown parameter: counted, answered BAD_PARAMS without touching the node.
    const path = "/api/mcp/v1/preflight?probe=1";
    const statuses: number[] = [];
    for (let round = 0; round < 30; round++) {
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 ? b : a, path)));
      statuses.push(...replies.map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    expect(new Set(statuses)).toEqual(new Set([400]));
    const [overA, overB] = await Promise.all([get(a, path), get(b, path)]);
    expect(overA.status).toBe(429);
    expect(overB.status).toBe(429);
    expect(json(overA).error).toBe("RATE_LIMITED");
    expect(Number(overB.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("shares the supply cache: one upstream read for both figures across both replicas", async () => {
    proxy.reset();
    const paths = ["/api/supply/total?format=json", "/api/supply/circulating?format=json"];
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => get(i % 4 < 2 ? b : a, paths[i % 2]!)));
    for (const r of burst) expect(r.status, r.body).toBe(200);
    for (const path of paths)
      expect(new Set(burst.filter((_, i) => paths[i % 2] === path).map((r) => r.body)).size).toBe(1);
    // eth_call only: the indexer asks the node too. totalSupply() and totalLockedClaim() once each, for both routes.
    const reads = proxy.calls.filter((c) => c.method === "eth_call");
    const perValue = new Map<string, number>();
    for (const c of reads) {
      const key = `${(c.params[0] as { to?: string }).to}:${ethCallSelector(c.method, c.params)}`;
      perValue.set(key, (perValue.get(key) ?? 0) + 1);
    }
    expect([...perValue.values()], JSON.stringify([...perValue])).toEqual([1, 1]);
    // Inside the window, neither replica reads again, for either figure.
    proxy.reset();
    await Promise.all(paths.flatMap((path) => [get(a, path), get(b, path)]));
    expect(proxy.count("eth_call")).toBe(0);
  });

  it("keeps the key out of every failure answer (down, timeout, HTTP 500, RPC error)", async () => {
    const onlyReads = (method: string) => method === "eth_call";
    const faults = [
      { kind: "down", match: onlyReads },
      { kind: "delay", ms: 5_000, match: onlyReads },
      { kind: "http", status: 500, match: onlyReads },
      { kind: "rpcError", message: `invalid key ${SECRET}`, data: SECRET, match: onlyReads },
    ] as const;
    for (const fault of faults) {
      proxy.setFault(fault);
      try {
        // Uncached routes and a fresh user per fault, so each request reaches the node.
        const replies = await Promise.all([
          get(a, `/api/mcp/v1/state/${DEVNET_ACCOUNTS.dave.address}`),
          get(b, "/api/mcp/v1/preflight"),
          get(a, `/api/mcp/v1/quote/${DEVNET_ACCOUNTS.fresh.address}?amount=1000`),
        ]);
        for (const r of replies) {
          expect(r.status, `${fault.kind}: ${r.body}`).toBeGreaterThanOrEqual(400);
          expect(r.body).not.toContain(SECRET);
        }
      } finally {
        proxy.setFault(null);
      }
    }
    // The same faults on every call, for a moment: the indexer's realtime sync and Ponder's own logging meet them.
    for (const fault of [{ kind: "down" }, { kind: "http", status: 500 }, { kind: "rpcError" }] as const) {
      proxy.setFault(fault);
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.setFault(null);
    }
    await indexer.waitFor200("/ready", 10_000);
  });

  it("SIGTERM drains in-flight requests, refuses new connections, exits in bounded time; the other replica loses nothing", async () => {
    // Steady traffic on A for the whole episode.
    let stopLoad = false;
    const loadResults: number[] = [];
    const load = (async () => {
      while (!stopLoad) {
        const replies = await Promise.all([
          get(a, "/api/supply/max?format=json").then(
            (r) => r.status,
            () => -1,
          ),
          get(a, "/api/supply/total?format=json").then(
            (r) => r.status,
            () => -1,
          ),
          get(a, "/health").then(
            (r) => r.status,
            () => -1,
          ),
        ]);
        loadResults.push(...replies);
      }
    })();

    // Three slow requests in flight on B: each eth_call waits 2 s.
    proxy.setFault({ kind: "delay", ms: 2_000, match: (m) => m === "eth_call" });
    proxy.reset();
    const inFlight = [DEVNET_ACCOUNTS.alice, DEVNET_ACCOUNTS.bob, DEVNET_ACCOUNTS.carol].map((u) =>
      get(b, `/api/mcp/v1/state/${u.address}`),
    );
    const deadline = Date.now() + 5_000;
    while (proxy.count("eth_call") < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(proxy.count("eth_call")).toBeGreaterThanOrEqual(3);

    const signalledAt = performance.now();
    process.kill(b.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    // A new connection is refused while the old ones finish.
    const fresh = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: "127.0.0.1", port: b.port, path: "/health", agent: false }, (res) => {
        res.resume();
        resolve(`answered ${res.statusCode}`);
      });
      req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      req.end();
    });
    expect(fresh).toBe("ECONNREFUSED");

    const done = await Promise.all(inFlight);
    for (const r of done) {
      expect(r.status, r.body).toBe(200);
      expect(json(r).user.address).toBeDefined();
    }
    const exit = await b.exited;
    const exitMs = exit.atMs - signalledAt;
    expect(exit.code).toBe(0);
    // It waited for the 2 s requests, then exited without waiting out the drain bound: the idle keep-alive
    // connections this test's client still held were closed as soon as they fell idle.
    expect(exitMs).toBeGreaterThan(1_500);
    expect(exitMs).toBeLessThan(DRAIN_MS);
    proxy.setFault(null);

    await new Promise((r) => setTimeout(r, 500));
    stopLoad = true;
    await load;
    expect(loadResults.length).toBeGreaterThan(10);
    expect(loadResults.filter((s) => s !== 200)).toEqual([]);
  });

  it("no process printed the RPC key, and no response carried it", () => {
    for (const p of [indexer, a, b]) {
      expect(p.log().length).toBeGreaterThan(0);
      expect(p.log(), `${p.command} log`).not.toContain(SECRET);
    }
    // The failure paths were really printed: the indexer's outage gate (indexer/outageGate.ts) logs the node going
    // away and coming back, with the failure's reason, where Ponder once logged each failed round trip's URL.
    expect(indexer.log()).toMatch(/rpc node not answering; requests wait for it.*"reason":"[^"]+"/);
    expect(indexer.log()).toContain("rpc node answering again");
    expect(bodies.length).toBeGreaterThan(600);
    for (const body of bodies) expect(body).not.toContain(SECRET);
    // The drain is logged by the API process that was stopped.
    expect(b.log()).toContain("shutdown: drained");
  });
});
