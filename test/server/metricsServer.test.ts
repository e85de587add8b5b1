/**
 * The metrics as an operator scrapes them from the API process (api/server/main.ts, `npm run serve:api`, its
 * own process over the devnet behind the fault proxy): prom-client's process metrics beside ours, caches that
 * count, a contract's revert counted apart from the node failing, open connections; and who may read them —
 * METRICS_TOKEN (401 in the envelope without it) and METRICS_PORT (a listener of their own; the public port
 * then answers 404). The index database's pool is checked where there is one: test/server/main.test.ts.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilHandle, freePort, startAnvil } from "../../devnet/anvil";
import { type DevnetDeployment, deployDevnet } from "../../devnet/deploy";
import { childEnv, startApiChild } from "../support/apiProcess";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const TOKEN = "s3cret-metrics-token-0123456789";
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

let anvil: AnvilHandle;
let proxy: RpcProxy;
let deployment: DevnetDeployment;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
  dir = mkdtempSync(path.join(tmpdir(), "metrics-served-"));
}, 120_000);
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await proxy?.stop();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The API process over the devnet, with `env` added. */
async function startApi(env: Record<string, string> = {}): Promise<string> {
  const { child, base } = await startApiChild({ ...childEnv({ deployment, proxy }, dir), ...env });
  children.push(child);
  return base;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function scrape(url: string, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return res.text();
}

/** The value of one series (`name{labels}` exactly as exposed), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("on the public port, open (the default)", () => {
  let base: string;
  beforeAll(async () => {
    base = await startApi();
  });

  it("carries prom-client's default process metrics under prom-client's names", async () => {
    const text = await scrape(`${base}/api/metrics`);
    for (const [name, type] of [
      ["process_resident_memory_bytes", "gauge"],
      ["process_cpu_seconds_total", "counter"],
      ["process_open_fds", "gauge"],
      ["process_start_time_seconds", "gauge"],
      ["nodejs_eventloop_lag_seconds", "gauge"],
      ["nodejs_eventloop_lag_p99_seconds", "gauge"],
      ["nodejs_heap_size_used_bytes", "gauge"],
      ["nodejs_gc_duration_seconds", "histogram"],
      ["nodejs_active_handles_total", "gauge"],
    ]) {
      expect(text, name).toContain(`# TYPE ${name} ${type}\n`);
    }
    // Real readings of this process, not placeholders: tens of MB resident, some CPU spent, fds open.
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(20 * 1024 * 1024);
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "process_open_fds")).toBeGreaterThan(5);
    // Ours are there too, each name once (no family exposed twice).
    expect(text).toContain("# TYPE api_http_requests_total counter\n");
    const types = text.split("\n").filter((l) => l.startsWith("# TYPE "));
    expect(new Set(types).size).toBe(types.length);
  });

  it("counts the supply cache: a miss that reads the chain, then a hit that does not", async () => {
    const before = await scrape(`${base}/api/metrics`);
    const series = (name: string) => `${name}{cache="supply"}`;
    expect(sample(before, series("api_cache_hits_total"))).toBe(0);
    expect(sample(before, series("api_cache_misses_total"))).toBe(0);
    expect(sample(before, series("api_cache_entries"))).toBe(0);
    proxy.reset();
    for (let i = 0; i < 2; i++) expect((await fetch(`${base}/api/supply/total`)).status).toBe(200);
    // One read for both figures: eth_blockNumber, then totalSupply() and totalLockedClaim() in one batch.
    expect([proxy.count("eth_blockNumber"), proxy.count("eth_call")]).toEqual([1, 2]);
    const after = await scrape(`${base}/api/metrics`);
    expect(sample(after, series("api_cache_misses_total"))).toBe(1);
    expect(sample(after, series("api_cache_hits_total"))).toBe(1);
    expect(sample(after, series("api_cache_entries"))).toBe(1);
    // /max is a constant, not a cache lookup.
    expect((await fetch(`${base}/api/supply/max`)).status).toBe(200);
    expect(sample(await scrape(`${base}/api/metrics`), series("api_cache_hits_total"))).toBe(1);
  });

  it("counts the preflight gate's cache and the state route's hints", async () => {
    for (let i = 0; i < 2; i++) expect((await fetch(`${base}/api/mcp/v1/preflight`)).status).toBe(200);
    expect((await fetch(`${base}/api/mcp/v1/state/${USER}`)).status).toBe(200);
    const text = await scrape(`${base}/api/metrics`);
    expect(sample(text, 'api_cache_misses_total{cache="preflight"}')).toBe(1);
    expect(sample(text, 'api_cache_hits_total{cache="preflight"}')).toBe(1);
    expect(sample(text, 'api_cache_entries{cache="preflight"}')).toBe(1);
    // Without an index nothing is remembered: the lookup misses, nothing is held.
    expect(sample(text, 'api_cache_misses_total{cache="state_hints"}')).toBe(1);
    expect(sample(text, 'api_cache_entries{cache="state_hints"}')).toBe(0);
    // No index database: its pool's gauges are announced without a value, no watermark is registered.
    expect(text).toContain("# TYPE api_index_db_pool_connections gauge\n");
    expect(text).not.toMatch(/^api_index_db_pool_connections /m);
    expect(text).not.toContain('cache="index_watermark"');
  });

  it("counts a contract's revert as revert, not as an RPC failure", async () => {
    const before = await scrape(`${base}/api/metrics`);
    const revert = 'api_rpc_calls_total{method="eth_call",outcome="revert"}';
    const failed = 'api_rpc_calls_total{method="eth_call",outcome="rpc"}';
    // The devnet's quoter refuses a 1 wei lock (MinLockAmountNotMet): a real revert, code 3 with its data.
    const res = await fetch(
      `${base}/api/mcp/v1/quote/lock-via-furnace?user=${USER}&claimAmountWei=1&durationSeconds=604800`,
    );
    expect(res.status).toBe(502);
    expect((await res.json()).detail.reason).toBe("MinLockAmountNotMet");
    const after = await scrape(`${base}/api/metrics`);
    // A new lock's quote batches the wallet's lock count (MCP F7); a member's revert has each read asked again alone:
    // the quoter's revert is counted twice (as test/observability/metrics.test.ts).
    expect((sample(after, revert) ?? 0) - (sample(before, revert) ?? 0)).toBe(2);
    expect(sample(after, failed)).toBe(sample(before, failed));
  });

  it("reports the open connections of the listener, read from the server at scrape time", async () => {
    const { Agent, request } = await import("node:http");
    const agent = new Agent({ keepAlive: true, maxSockets: 3 });
    const get = (p: string) =>
      new Promise<string>((resolve, reject) => {
        request(`${base}${p}`, { agent }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            body += c;
          });
          res.on("end", () => resolve(body));
        })
          .on("error", reject)
          .end();
      });
    const open = (text: string) => sample(text, 'api_http_open_connections{listener="api"}');
    const alone = open(await scrape(`${base}/api/metrics`))!;
    expect(alone).toBeGreaterThanOrEqual(1);
    // Three idle keep-alive connections of our own, then one of them asks: at least three more than alone.
    await Promise.all([get("/health"), get("/health"), get("/health")]);
    expect(open(await get("/api/metrics"))).toBeGreaterThanOrEqual(3);
    agent.destroy();
  });
});

describe("METRICS_TOKEN on the public port", () => {
  let base: string;
  beforeAll(async () => {
    base = await startApi({ METRICS_TOKEN: TOKEN });
  });

  it.each([
    ["no Authorization", {}],
    ["another token", bearer(`${TOKEN}x`)],
    ["a prefix of the token", bearer(TOKEN.slice(0, -1))],
    ["another scheme", { authorization: `Basic ${TOKEN}` }],
  ])("%s → 401 UNAUTHORIZED in the envelope, with a Bearer challenge", async (_name, headers) => {
    const res = await fetch(`${base}/api/metrics`, { headers });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await res.json();
    expect(body).toEqual({ ok: false, error: "UNAUTHORIZED", message: expect.any(String) });
    expect(JSON.stringify(body)).not.toContain(TOKEN.slice(0, 8));
  });

  it("the token → 200 (the scheme in any case); the API's routes need none", async () => {
    expect(await scrape(`${base}/api/metrics`, bearer(TOKEN))).toContain("process_resident_memory_bytes ");
    expect((await fetch(`${base}/api/metrics`, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${base}/api/supply/max`)).status).toBe(200);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});

describe("METRICS_PORT: a listener of the metrics' own", () => {
  let base: string;
  let metricsBase: string;
  beforeAll(async () => {
    const port = await freePort();
    base = await startApi({ METRICS_PORT: String(port), METRICS_HOST: "127.0.0.1", METRICS_TOKEN: TOKEN });
    metricsBase = `http://127.0.0.1:${port}`;
  });

  it("serves /metrics there, with this process's counts; the public port answers /api/metrics 404", async () => {
    expect((await fetch(`${base}/api/supply/max`)).status).toBe(200);
    const text = await scrape(`${metricsBase}/metrics`, bearer(TOKEN));
    expect(sample(text, 'api_http_requests_total{method="GET",route="/api/supply/max",status="200"}')).toBe(1);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sample(text, 'api_http_open_connections{listener="metrics"}')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^api_http_open_connections\{listener="api"\} \d+$/m);

    const publicAnswer = await fetch(`${base}/api/metrics`, { headers: bearer(TOKEN) });
    expect(publicAnswer.status).toBe(404);
    expect((await publicAnswer.json()).error).toBe("NOT_FOUND");
  });

  it("the token applies there too; nothing else is served", async () => {
    const refused = await fetch(`${metricsBase}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect((await refused.json()).error).toBe("UNAUTHORIZED");
    for (const p of ["/api/metrics", "/health", "/api/supply/max", "/metrics/x"]) {
      const res = await fetch(`${metricsBase}${p}`, { headers: bearer(TOKEN) });
      expect(res.status, p).toBe(404);
      expect((await res.json()).error).toBe("NOT_FOUND");
    }
    const post = await fetch(`${metricsBase}/metrics`, { method: "POST", headers: bearer(TOKEN) });
    expect([post.status, (await post.json()).error]).toEqual([405, "METHOD_NOT_ALLOWED"]);
    // A query string is not a different path.
    expect((await fetch(`${metricsBase}/metrics?x=1`, { headers: bearer(TOKEN) })).status).toBe(200);
  });
});
