/**
 * Head reads pinned to the notified head against the same reads pinned by a probe (api/read/notifiedHead.ts): two API
 * processes as operators run them (the built dist/server/main.js) over one synthetic index of Base's proportions in
 * Postgres — one reading it behind a views schema, so it hears each commit over LISTEN/NOTIFY and pins a request
 * naming no block to the notified head, the other reading the base schema directly (no signal), so each such request
 * probes the index's head first (one statement), as every head read did before. The bench plays the indexer, a new
 * head (Ponder's checkpoint row) every 2 s, so the notified head stays fresh and each new head's answers are computed
 * ahead in both. Routes at the head, answered from memory once computed: a rank lookup (200 holders, a new key per
 * request), the ve board's first page (100), the stats; 8 and 50 connections; 3 interleaved rounds × 3 s (the order
 * alternating); medians of req/s and of each process's CPU time per request (/proc). Beside the load, 20 sockets per
 * process send pipelined requests and never read them; RSS and descriptors before and after, and each process's
 * api_index_head_pins_total.
 *
 * Usage: npx tsx bench/head-pins.ts [events=520000]
 */
import { readdirSync, readFileSync } from "node:fs";
import autocannon from "autocannon";
import { writeManifest } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";
import { checkpointOf } from "../test/support/syntheticIndex";
import { cpuTicks, rssMb } from "./processMemory";
import { servedBehindViews } from "./productionTopology";
import { neverReading } from "./unreadClient";

const EVENTS = Number(process.argv[2] ?? 520_000);
const SCHEMA = "bench_head_pins";
const VIEWS = "bench_head_pins_views";
const ROUNDS = 3;
const DURATION_S = 3;
const BASE = "/api/index/v1";
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0];
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const { served, admin } = await servedBehindViews({ events: EVENTS, schema: SCHEMA, views: VIEWS, seed: 29 });

const chainId = served.devnet.deployment.manifest.chainId;
const service = {
  command: "api" as const,
  rpcUrl: served.devnet.rpcUrl,
  manifestFile: writeManifest(served.devnet.deployment.manifest),
  databaseUrl: served.databaseUrl,
  schema: SCHEMA,
  env: { LOG_LEVEL: "error", REDIS_URL: "", RATE_LIMIT_MAX: "1000000" },
};
const notified = await spawnService({ ...service, viewsSchema: VIEWS });
const probed = await spawnService(service);
const neverRead: { close(): void }[] = [];
let ticker: NodeJS.Timeout | undefined;
try {
  await notified.waitFor200("/ready", 60_000);
  await probed.waitFor200("/ready", 60_000);
  let block = served.index.head.block;
  let time = served.index.head.time;
  const commit = async () => {
    block += 1n;
    time += 2n;
    await admin.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET latest_checkpoint = $1`, [
      checkpointOf(chainId, block, time),
    ]);
  };
  await commit();
  ticker = setInterval(() => void commit(), 2_000);
  const board = (await (await fetch(`${notified.url}${BASE}/leaderboards/ve?limit=200`)).json()) as {
    rows: { address: string }[];
  };
  const routes: Record<string, string[]> = {
    "rank lookup": board.rows.map((r) => `${BASE}/leaderboards/ve/${r.address}`),
    "ve board page": [`${BASE}/leaderboards/ve?limit=100`],
    stats: [`${BASE}/stats`],
  };
  const run = (url: string, paths: string[], connections: number, duration = DURATION_S) =>
    autocannon({ url, connections, duration, requests: paths.map((p) => ({ method: "GET", path: p })) });
  // Warm both: the first reads at the head start each one's compute-ahead.
  for (const paths of Object.values(routes)) for (const svc of [notified, probed]) await run(svc.url, paths, 10, 1);

  const before = new Map([notified, probed].map((s) => [s, { rss: rssMb(s.pid), fds: fds(s.pid) }]));
  for (const svc of [notified, probed]) neverRead.push(neverReading(svc.port, routes["rank lookup"]!.slice(0, 20)));
  const ratios: number[] = [];
  for (const [route, paths] of Object.entries(routes)) {
    for (const connections of [8, 50]) {
      const rps = new Map([notified, probed].map((s) => [s, [] as number[]]));
      const cpu = new Map([notified, probed].map((s) => [s, [] as number[]]));
      let non2xx = 0;
      for (let round = 0; round < ROUNDS; round++) {
        for (const svc of round % 2 === 0 ? [notified, probed] : [probed, notified]) {
          const ticks = cpuTicks(svc.pid);
          const r = await run(svc.url, paths, connections);
          non2xx += r.non2xx + r.errors;
          rps.get(svc)!.push(r.requests.average);
          cpu.get(svc)!.push(((cpuTicks(svc.pid) - ticks) * 10_000) / Math.max(1, r.requests.total));
        }
      }
      const [n, p] = [median(rps.get(notified)!), median(rps.get(probed)!)];
      ratios.push(n / p);
      console.log(
        `${route}, ${connections} connections: notified ${n.toFixed(0)} req/s (${median(cpu.get(notified)!).toFixed(0)} ` +
          `µs CPU a request), probed ${p.toFixed(0)} req/s (${median(cpu.get(probed)!).toFixed(0)} µs): ` +
          `${(n / p).toFixed(2)}×; non-2xx or errors ${non2xx}; load ${load()}`,
      );
    }
  }
  for (const [name, svc] of [
    ["notified", notified],
    ["probed", probed],
  ] as const) {
    const pins = (await (await fetch(`${svc.url}/api/metrics`)).text())
      .split("\n")
      .filter((l) => l.startsWith("api_index_head_pins_total"))
      .join(", ");
    const b = before.get(svc)!;
    console.log(
      `${name}: RSS ${b.rss.toFixed(0)} → ${rssMb(svc.pid).toFixed(0)} MB, descriptors ${b.fds} → ${fds(svc.pid)} ` +
        `beside 20 never-reading sockets; ${pins}`,
    );
  }
  console.log(
    `head-pins: head reads pinned to the notified head over pinned by a probe, req/s ${Math.min(...ratios).toFixed(2)}–` +
      `${Math.max(...ratios).toFixed(2)}× (rank lookup, ve page, stats at 8 and 50 connections)`,
  );
} finally {
  if (ticker) clearInterval(ticker);
  for (const client of neverRead) client.close();
  await notified.stop("SIGKILL");
  await probed.stop("SIGKILL");
  await admin.end();
  await served.stop();
}
