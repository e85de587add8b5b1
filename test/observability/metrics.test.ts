import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { createRpcClient, READ_METHODS } from "../../api/chain/rpc";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";
import { createMetrics, type Metrics, PROMETHEUS_CONTENT_TYPE } from "../../api/observability/metrics";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import { deployDevnet } from "../../devnet/deploy";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

// Counters and logs against the real stack: anvil with the devnet contracts, behind the fault proxy,
// read through the app's RpcClient. The RPC URL carries a key in its path, as providers' URLs do.

const SECRET = "k3y-5ecret-0123456789";
const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const STATE = `/api/mcp/v1/state/${USER}`;

let anvil: AnvilHandle;
let proxy: RpcProxy;
let dir: string;
let manifestFile: string;

beforeAll(async () => {
  anvil = await startAnvil();
  dir = mkdtempSync(path.join(tmpdir(), "platform-obs-"));
  const { manifest } = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  manifestFile = path.join(dir, "local.json");
  writeFileSync(manifestFile, JSON.stringify(manifest));
  proxy = await startRpcProxy({ upstream: anvil.rpcUrl });
});
afterAll(async () => {
  await proxy?.stop();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  proxy.setFault(null);
  proxy.reset();
});

function stack(env: Record<string, string> = {}) {
  const config = loadConfig({
    NETWORK: "local",
    MANIFEST_FILE: manifestFile,
    RPC_URL: `${proxy.url}/v2/${SECRET}`,
    RPC_TIMEOUT_MS: "300",
    ...env,
  });
  const metrics = createMetrics();
  const raw: string[] = [];
  const logger = createLogger({ level: "debug", write: (l) => raw.push(l) });
  const rpc = createRpcClient({ url: config.rpcUrl!, timeoutMs: config.rpcTimeoutMs, onCall: metrics.onRpcCall });
  const app = createApp({ config, rpc, metrics, logger });
  const get = (p: string, peer = "198.51.100.77") =>
    app.request(p, {}, { incoming: { socket: { remoteAddress: peer } } });
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { app, get, metrics, raw, lines, config };
}

/** Parses the exposition into `name{labels} → value`. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function rpcSample(m: Metrics, method: string, outcome: string) {
  return m.rpcCalls.get({ method, outcome });
}

describe("metrics", () => {
  it("counts our routes by route pattern and status, and serves them in the Prometheus text format", async () => {
    const s = stack({ RATE_LIMIT_MAX: "3" });
    expect((await s.get(STATE)).status).toBe(200);
    expect((await s.get(STATE.toLowerCase().replace("/api/mcp/v1/state/0x", "/api/mcp/v1/state/0X"))).status).toBe(400);
    expect((await s.get(STATE)).status).toBe(200);
    expect((await s.get(STATE)).status).toBe(429);
    expect((await s.get("/api/supply/max")).status).toBe(200);
    expect((await s.get("/no/such/thing")).status).toBe(404);
    expect((await s.app.request("/api/supply/max", { method: "DELETE" })).status).toBe(405);

    const res = await s.get("/api/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(PROMETHEUS_CONTENT_TYPE);
    const text = await res.text();
    const m = samples(text);
    const route = "/api/mcp/v1/state/:address";
    expect(m.get(`api_http_requests_total{method="GET",route="${route}",status="200"}`)).toBe(2);
    expect(m.get(`api_http_requests_total{method="GET",route="${route}",status="400"}`)).toBe(1);
    expect(m.get(`api_http_requests_total{method="GET",route="${route}",status="429"}`)).toBe(1);
    expect(m.get(`api_http_requests_total{method="GET",route="/api/supply/max",status="200"}`)).toBe(1);
    expect(m.get(`api_http_requests_total{method="GET",route="unmatched",status="404"}`)).toBe(1);
    expect(m.get(`api_http_requests_total{method="DELETE",route="unmatched",status="405"}`)).toBe(1);
    expect(m.get(`api_rate_limited_total{prefix="state"}`)).toBe(1);
    expect(text).toContain("# TYPE api_http_requests_total counter");
    // Durations beside the counts: same labels, cumulative buckets, _count equal to the counter.
    expect(text).toContain("# TYPE api_http_request_duration_seconds histogram");
    const d = (suffix: string, extra = "") =>
      m.get(`api_http_request_duration_seconds${suffix}{method="GET",route="${route}",status="200"${extra}}`);
    expect(d("_count")).toBe(2);
    expect(d("_bucket", ',le="+Inf"')).toBe(2);
    expect(d("_bucket", ',le="10"')).toBe(2);
    expect(d("_sum")).toBeGreaterThan(0);
    expect(d("_bucket", ',le="0.001"')!).toBeLessThanOrEqual(d("_bucket", ',le="0.5"')!);
    expect(m.get('api_http_request_duration_seconds_count{method="GET",route="/api/supply/max",status="200"}')).toBe(1);
    // Each request's series found again by its route, method and status (api/http/requestLog.ts resolves them once).
    expect(m.get(`api_http_request_duration_seconds_count{method="GET",route="${route}",status="400"}`)).toBe(1);
    expect(m.get(`api_http_request_duration_seconds_count{method="GET",route="${route}",status="429"}`)).toBe(1);
    expect(m.get('api_http_request_duration_seconds_count{method="DELETE",route="unmatched",status="405"}')).toBe(1);
    // Only patterns, never the raw path: no user address in any label.
    expect(text.toLowerCase()).not.toContain(USER.toLowerCase().slice(2));
    // The scrape itself is counted on the next one.
    expect(
      samples(await (await s.get("/api/metrics")).text()).get(
        'api_http_requests_total{method="GET",route="/api/metrics",status="200"}',
      ),
    ).toBe(1);
  });

  it("counts every upstream RPC call by method and outcome, matching what the node received", async () => {
    const s = stack();
    expect((await s.get(STATE)).status).toBe(200);
    expect((await s.get("/api/supply/total")).status).toBe(200);
    const sent = new Map<string, number>();
    for (const c of proxy.calls) sent.set(c.method, (sent.get(c.method) ?? 0) + 1);
    expect(sent.size).toBeGreaterThan(0);
    for (const [method, n] of sent) expect(rpcSample(s.metrics, method, "ok"), method).toBe(n);
    for (const method of READ_METHODS) if (!sent.has(method)) expect(rpcSample(s.metrics, method, "ok")).toBe(0);

    // A stack per outage: after an outage's failure a stack backs the node off (api/chain/backoff.ts).
    const down = stack();
    proxy.setFault({ kind: "down" });
    expect((await down.get(`/api/mcp/v1/state/${"0x000000000000000000000000000000000000dEaD"}`)).status).toBe(502);
    expect(rpcSample(down.metrics, "eth_call", "unreachable")).toBeGreaterThanOrEqual(1);

    const slow = stack();
    proxy.setFault({ kind: "delay", ms: 600 });
    expect((await slow.get(`/api/mcp/v1/state/${"0x000000000000000000000000000000000000bEEF"}`)).status).toBe(502);
    expect(rpcSample(slow.metrics, "eth_call", "timeout")).toBeGreaterThanOrEqual(1);

    const limited = stack();
    proxy.setFault({ kind: "http", status: 429 });
    expect((await limited.get(`/api/mcp/v1/state/${"0x000000000000000000000000000000000000cafE"}`)).status).toBe(502);
    expect(rpcSample(limited.metrics, "eth_call", "http")).toBeGreaterThanOrEqual(1);

    proxy.setFault({ kind: "rpcError", code: -32000, message: "header not found" });
    expect((await s.get(`/api/mcp/v1/state/${"0x000000000000000000000000000000000000F00D"}`)).status).toBe(502);
    expect(rpcSample(s.metrics, "eth_call", "rpc")).toBeGreaterThanOrEqual(1);
    expect(rpcSample(s.metrics, "eth_call", "revert")).toBe(0);

    const text = await down.metrics.render();
    expect(text).toMatch(/api_rpc_calls_total\{method="eth_call",outcome="unreachable"\} \d+/);
    expect(text).not.toContain(SECRET);
  });

  it("counts a contract's revert apart from node failures, and a malformed answer as invalid, never ok", async () => {
    const s = stack();
    const quote = (amount: string) =>
      s.get(`/api/mcp/v1/quote/lock-via-furnace?user=${USER}&claimAmountWei=${amount}&durationSeconds=604800`);
    // A real revert of the devnet's quoter (1 wei is below the minimum lock): code 3 with the error's data.
    const refused = await quote("1");
    expect(refused.status).toBe(502);
    expect((await refused.json()).detail.reason).toBe("MinLockAmountNotMet");
    // A new lock's quote reads the wallet's lock count in the quoter call's batch (MCP F7); a member's revert has each
    // read asked again alone (api/mcp/v1/prepare/coalesce.ts): the quoter's revert is counted twice, the count ok.
    expect([rpcSample(s.metrics, "eth_call", "revert"), rpcSample(s.metrics, "eth_call", "rpc")]).toEqual([2, 0]);
    // A node that reports a revert without data the geth way (-32000, "execution reverted") is a revert too.
    proxy.setFault({ kind: "rpcError", code: -32000, message: "execution reverted" });
    expect((await quote("2")).status).toBe(502);
    // Both of the batch's calls refused so, then each alone again: four more.
    expect([rpcSample(s.metrics, "eth_call", "revert"), rpcSample(s.metrics, "eth_call", "rpc")]).toEqual([6, 0]);

    // An answer that is not the view's encoding: the read fails, and the call is counted invalid, not ok.
    proxy.setFault({ kind: "result", value: "0x1234", match: (method) => method === "eth_call" });
    const ok = rpcSample(s.metrics, "eth_call", "ok");
    // In a batch each member is counted by its own outcome: eth_blockNumber answers, the two eth_calls do not.
    expect((await s.get("/api/supply/total")).status).toBe(502);
    expect(rpcSample(s.metrics, "eth_call", "invalid")).toBe(2);
    expect(rpcSample(s.metrics, "eth_blockNumber", "ok")).toBe(1);
    expect((await s.get(`/api/mcp/v1/state/${"0x000000000000000000000000000000000000F00D"}`)).status).toBe(502);
    expect(rpcSample(s.metrics, "eth_call", "invalid")).toBe(3);
    expect(rpcSample(s.metrics, "eth_call", "ok")).toBe(ok);
    // Circulating is the same read as total: its failure is answered within the backoff, nothing is read again.
    expect((await s.get("/api/supply/circulating")).status).toBe(502);
    expect(rpcSample(s.metrics, "eth_call", "invalid")).toBe(3);
  });
});

describe("structured logs", () => {
  it("write one JSON line per request at info, with route, status, duration, request id and a truncated client IP", async () => {
    const s = stack();
    await s.app.request(
      STATE,
      { headers: { "x-request-id": "obs-1" } },
      { incoming: { socket: { remoteAddress: "203.0.113.77" } } },
    );
    await s.get("/api/supply/max", "2001:db8:aa:bb::1");
    const requests = s.lines().filter((l) => l.msg === "request");
    expect(requests).toHaveLength(2);
    expect(requests[0]).toEqual({
      time: expect.any(String),
      level: "info",
      msg: "request",
      requestId: "obs-1",
      method: "GET",
      route: "/api/mcp/v1/state/:address",
      status: 200,
      durationMs: expect.any(Number),
      clientIp: "203.0.113.0",
    });
    expect(requests[1]).toMatchObject({ route: "/api/supply/max", status: 200, clientIp: "2001:db8:aa::/48" });
    expect(requests[1]!.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("never contain the RPC URL's secret, nor a full user address above debug, even when reads fail", async () => {
    const s = stack();
    s.app.get("/api/test/leak", () => {
      throw new Error(`fetch ${s.config.rpcUrl} failed for ${USER}`);
    });
    await s.get(STATE);
    proxy.setFault({ kind: "down" });
    await s.get(STATE);
    proxy.setFault({ kind: "rpcError", code: 3, message: `execution reverted for ${USER}`, data: "0x08c379a0" });
    await s.get(`/api/mcp/v1/quote/lock-via-furnace?user=${USER}&claimAmountWei=1&durationSeconds=604800`);
    await s.get(`/api/mcp/v1/state/${USER}/extra`);
    await s.get("/api/test/leak");

    const all = s.raw.join("\n");
    expect(all).not.toContain(SECRET);
    const aboveDebug = s.lines().filter((l) => l.level !== "debug");
    expect(aboveDebug.length).toBeGreaterThanOrEqual(6);
    for (const line of aboveDebug) {
      const text = JSON.stringify(line).toLowerCase();
      expect(text).not.toContain(USER.toLowerCase());
      expect(text).not.toContain(USER.toLowerCase().slice(2));
    }
    // The leaked error is logged, scrubbed to scheme + host and a short address.
    const leak = aboveDebug.find((l) => l.msg === "unhandled error");
    expect(JSON.stringify(leak)).toContain(`${new URL(proxy.url).protocol}//${new URL(proxy.url).host}/***`);
    expect(JSON.stringify(leak)).toContain("0x7099…79C8");
    // Full addresses are allowed at debug (the raw path), still without the secret.
    expect(s.lines().some((l) => l.level === "debug" && JSON.stringify(l).includes(USER))).toBe(true);
  });

  it("log probe and metrics successes at debug, an unready /ready at info", async () => {
    const raw: string[] = [];
    const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: manifestFile });
    const logger = createLogger({ level: "debug", write: (l) => raw.push(l) });
    let ready = true;
    const readiness = async () =>
      ready ? { ready: true as const } : { ready: false as const, reason: "index missing" as const };
    const app = createApp({ config, rpc: null, logger, readiness });
    for (const path of ["/health", "/ready", "/api/metrics"]) await app.request(path);
    ready = false;
    await app.request("/ready");
    const requests = raw.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");
    expect(requests.map((l) => [l.route, l.status, l.level])).toEqual([
      ["/health", 200, "debug"],
      ["/ready", 200, "debug"],
      ["/api/metrics", 200, "debug"],
      ["/ready", 503, "info"],
    ]);
  });

  it("drop debug lines at the default level", async () => {
    const raw: string[] = [];
    const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: manifestFile });
    const app = createApp({ config, rpc: null, logger: createLogger({ level: "info", write: (l) => raw.push(l) }) });
    await app.request(`/api/mcp/v1/state/${USER}/extra`);
    expect(raw.map((l) => JSON.parse(l).level)).toEqual(["info"]);
    expect(raw.join("")).not.toContain(USER);
  });
});
