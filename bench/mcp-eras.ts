/**
 * The two eras of POST /api/mcp, and who should answer the 2025 one, measured in one run over one synthetic index
 * on Postgres (test/support/servedIndex.ts):
 * - on the API process operators run (dist/server/main.js): a tools/list and ten get_lock_stats calls in the 2025
 *   era (this service's path: tools/list from shared bytes, calls through SDK 1.x; the ten as one JSON-RPC batch)
 *   against the same in the 2026-07-28 era (SDK v2's createMcpHandler; no batches in that revision, so ten POSTs
 *   at once);
 * - on a second process (bench/mcpLegacyChild.ts: the same app, two endpoints side by side) the same 2025-era
 *   requests answered by this service's path (/sdk1/mcp) and by SDK v2's stateless fallback (/sdk2/mcp).
 * Sequential requests, 5 alternating rounds; each figure is the median of the rounds' p50s, and the ratios are
 * against the 2025 path in the same process.
 * Usage: npx tsx bench/mcp-eras.ts
 */

import { buildOnce } from "../test/support/build";
import { REPO_ROOT, writeManifest } from "../test/support/ponder";
import { type ServiceChild, spawnService } from "../test/support/replica";
import { startServedIndex } from "../test/support/servedIndex";

const ROUNDS = 5;
const SINGLE = 200;
const BATCH = 40;
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const MODERN = "2026-07-28";
const env = { RATE_LIMIT_MAX: "1000000", LOG_LEVEL: "warn" };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const ACCEPT = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const legacyMessage = (id: number, method: string, params?: object) => ({ jsonrpc: "2.0", id, method, params });
const modernMessage = (id: number, method: string, params: object = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params: {
    ...params,
    _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} },
  },
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(url, { method: "POST", headers: { ...ACCEPT, ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  // JSON, or (SDK v2's 2025-era fallback) an SSE stream of JSON messages.
  const messages = text.startsWith("event:")
    ? text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)))
    : [JSON.parse(text)].flat();
  const bad = messages.some((m: { error?: unknown; result?: { isError?: boolean } }) => m.error || m.result?.isError);
  if (res.status !== 200 || bad) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}

type Case = { name: string; n: number; run: () => Promise<unknown> };

async function p50(c: Case): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < c.n; i++) {
    const t0 = performance.now();
    await c.run();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

buildOnce();
const served = await startServedIndex({
  serverUrl: PG_URL,
  schema: "benchmcperas",
  synthetic: { events: 3_000, owners: 50, seed: 3 },
  env,
});
const children: ServiceChild[] = [];
try {
  const head = served.index.head.block.toString();
  const call = { name: "get_lock_stats", arguments: { block: head } };
  const modernHeaders = (method: string, name?: string) => ({
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name ? { "mcp-name": name } : {}),
  });
  const child = await spawnService({
    command: "api",
    rpcUrl: served.devnet.rpcUrl,
    manifestFile: writeManifest(served.devnet.deployment.manifest),
    databaseUrl: served.databaseUrl,
    schema: served.schema,
    env: { ...env, REDIS_URL: "" },
    install: { cwd: REPO_ROOT, argv: [process.execPath, "--import", "tsx", "bench/mcpLegacyChild.ts"] },
  });
  children.push(child);
  await child.waitFor200("/health", 60_000);

  const mcp = `${served.api.url}/api/mcp`;
  const legacyList = (url: string): Case => ({
    name: "",
    n: SINGLE,
    run: () => post(url, legacyMessage(1, "tools/list")),
  });
  const legacyBatch = (url: string): Case => ({
    name: "",
    n: BATCH,
    run: () =>
      post(
        url,
        Array.from({ length: 10 }, (_, i) => legacyMessage(i + 1, "tools/call", call)),
      ),
  });
  const cases: Record<string, Case> = {
    "served: tools/list, 2025 (this path)": legacyList(mcp),
    "served: tools/list, 2026-07-28 (SDK v2)": {
      name: "",
      n: SINGLE,
      run: () => post(mcp, modernMessage(1, "tools/list"), modernHeaders("tools/list")),
    },
    "served: 10 calls, 2025 batch (this path)": legacyBatch(mcp),
    "served: 10 calls, 2026-07-28 (SDK v2, 10 POSTs at once)": {
      name: "",
      n: BATCH,
      run: () =>
        Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            post(mcp, modernMessage(i + 1, "tools/call", call), modernHeaders("tools/call", call.name)),
          ),
        ),
    },
    "2025 era: tools/list via this path (SDK 1.x)": legacyList(`${child.url}/sdk1/mcp`),
    "2025 era: tools/list via SDK v2 stateless": legacyList(`${child.url}/sdk2/mcp`),
    "2025 era: 10-call batch via this path (SDK 1.x)": legacyBatch(`${child.url}/sdk1/mcp`),
    "2025 era: 10-call batch via SDK v2 stateless": legacyBatch(`${child.url}/sdk2/mcp`),
  };
  // Warm-up (and a check that every case answers).
  const failed: Record<string, string> = {};
  for (const [name, c] of Object.entries(cases)) {
    try {
      for (let i = 0; i < 20; i++) await c.run();
    } catch (error) {
      failed[name] = String(error).slice(0, 300);
    }
  }
  const rounds: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, c] of Object.entries(cases)) {
      if (failed[name]) continue;
      const figure = await p50(c);
      rounds[name] = [...(rounds[name] ?? []), figure];
    }
  }
  const figure = (name: string) => (rounds[name] ? median(rounds[name]) : Number.NaN);
  const rows = Object.keys(cases).map((name) => ({ case: name, p50Ms: figure(name).toFixed(3), failed: failed[name] }));
  console.table(rows);
  const ratio = (a: string, b: string) => (figure(a) / figure(b)).toFixed(2);
  console.log(
    JSON.stringify(
      {
        modernOverLegacyToolsList: ratio(
          "served: tools/list, 2026-07-28 (SDK v2)",
          "served: tools/list, 2025 (this path)",
        ),
        modernOverLegacyTenCalls: ratio(
          "served: 10 calls, 2026-07-28 (SDK v2, 10 POSTs at once)",
          "served: 10 calls, 2025 batch (this path)",
        ),
        sdk2OverThisPathToolsList: ratio(
          "2025 era: tools/list via SDK v2 stateless",
          "2025 era: tools/list via this path (SDK 1.x)",
        ),
        sdk2OverThisPathBatch: ratio(
          "2025 era: 10-call batch via SDK v2 stateless",
          "2025 era: 10-call batch via this path (SDK 1.x)",
        ),
        rounds,
        failed,
      },
      null,
      2,
    ),
  );
  console.log(
    `2026-07-28 over 2025: tools/list ${ratio("served: tools/list, 2026-07-28 (SDK v2)", "served: tools/list, 2025 (this path)")}×, ` +
      `10 calls ${ratio("served: 10 calls, 2026-07-28 (SDK v2, 10 POSTs at once)", "served: 10 calls, 2025 batch (this path)")}×; ` +
      `2025 era via SDK v2 over this path: tools/list ${ratio("2025 era: tools/list via SDK v2 stateless", "2025 era: tools/list via this path (SDK 1.x)")}×, ` +
      `batch ${ratio("2025 era: 10-call batch via SDK v2 stateless", "2025 era: 10-call batch via this path (SDK 1.x)")}×`,
  );
} finally {
  for (const c of children) await c.stop("SIGKILL");
  await served.stop();
}
