/**
 * Time travel as an attacker uses it (issue 30, items 1 and 2), on the API process as operators run it (the built
 * dist/server/main.js, `npm run serve:api`, over a synthetic index in Postgres: test/support/servedIndex.ts) with
 * Redis set, so each block's answers go through the Redis mirror as in production:
 *
 * 1. Memory: one address asks for the board (`limit=100`) and the stats at BLOCKS distinct past blocks, PASSES times
 *    over (every request a computation: only 8 boards are kept). Its budget is raised (RATE_LIMIT_MAX) so the bench
 *    measures memory, not the limiter. The API process's RSS (/proc/<pid>/status) before the first pass, after each,
 *    and at the end, against the goal: within +150 MB of its start.
 * 2. Fairness: a fresh API process at the default limits; ADDRESSES loopback addresses (bench/timeTravelFlood.ts, a
 *    process of its own at the lowest CPU priority) ask for past blocks' boards and stats back to back for FLOOD_MS
 *    while four other clients (bench/headReaders.ts: ~100 samples a path) read the head's `/stats`, board (`limit=10`)
 *    and `/health` in rounds paced within their own budgets. Baseline: one such client on the idle process, same
 *    run. Goals: the head's stats and board 200 every time with p99 ≤ 100 ms, `/health` p99 ≤ 50 ms.
 *
 * With VIEWS=1 the API processes read a views schema over the index (as `ponder start --views-schema` leaves it) and
 * LISTEN for its commits, and the bench plays the indexer: a head committed every HEAD_EVERY_MS (2 s, Base's blocks;
 * Ponder's checkpoint row, one block on) through part 2, the idle baseline included — the production set-up, where a
 * head read is pinned to the notified head and takes no connection of the pool the flood fills
 * (api/read/notifiedHead.ts). HEAD_EVERY_MS without VIEWS moves the head the same way for a base-schema process
 * (each head read probes the index).
 *
 * Usage: npx tsx bench/abuse-time-travel.ts [events=520000] [blocks=1000] [passes=3]
 * Env: ADDRESSES (400), FLOOD_MS (12000), PARTS (1,2), VIEWS (0), HEAD_EVERY_MS (2000 with VIEWS, else 0: a fixed
 * head); PROFILE_DIR — the API process of part 2 writes a CPU profile there when it stops.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { runFloodScript } from "../test/support/apiProcess";
import { buildOnce } from "../test/support/build";
import { writeManifest } from "../test/support/ponder";
import { type ServiceChild, spawnService } from "../test/support/replica";
import { startServedIndex } from "../test/support/servedIndex";
import { checkpointOf, type SyntheticIndex } from "../test/support/syntheticIndex";
import { collectNow } from "./benchHeap";
import { HEAD_READERS, overGoal, runHeadReaders, startHeadReaders } from "./headReaders";
import { BENCH_PG_URL, BENCH_REDIS_URL, createViewsSchema } from "./productionTopology";
import { neverReading } from "./unreadClient";

const EVENTS = Number(process.argv[2] ?? 520_000);
const BLOCKS = Number(process.argv[3] ?? 1_000);
const PASSES = Number(process.argv[4] ?? 3);
const ADDRESSES = Number(process.env.ADDRESSES ?? 400);
const FLOOD_MS = Number(process.env.FLOOD_MS ?? 12_000);
const PARTS = new Set((process.env.PARTS ?? "1,2").split(",").map(Number));
const VIEWS = process.env.VIEWS === "1" ? "bench_time_travel_views" : undefined;
const HEAD_EVERY_MS = Number(process.env.HEAD_EVERY_MS ?? (VIEWS ? 2_000 : 0));
const RSS_GOAL_MB = 150;
const HEAD_P99_GOAL_MS = 100;
const HEALTH_P99_GOAL_MS = 50;
const INDEX = "/api/index/v1";

/** The process's heap in use and its external memory (MB), from its own metrics. */
async function heapMb(base: string): Promise<string> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)`, "m").exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  return `heap ${fmt(read("nodejs_heap_size_used_bytes"))} MB, external ${fmt(read("nodejs_external_memory_bytes"))} MB`;
}
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))]!;
const fmt = (x: number) => x.toFixed(1);
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" / ");

buildOnce();
const t0 = performance.now();
// Base's proportions (bench/index-api.ts: 520,000 events over 95,000 owners).
const served = await startServedIndex({
  serverUrl: BENCH_PG_URL,
  schema: "bench_time_travel",
  synthetic: { events: EVENTS, owners: Math.max(20, Math.round((EVENTS * 95_000) / 520_000)), seed: 23 },
});
/**
 * The blocks the flood asks for: distinct blocks with events (their times are in the index), spread over the index,
 * the last 50 left out. A function of its own, so no reference to the index outlives it in this module's frame.
 */
function floodBlocks(index: SyntheticIndex): string[] {
  const holders = new Set([...index.locks.values()].filter((l) => !l.burned).map((l) => l.owner)).size;
  console.log(
    `synthetic index: ${index.events.length} events, ${index.locks.size} locks, ` +
      `${holders} holders; ready in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  const eventBlocks = [...new Set(index.events.map((e) => e.blockNumber))].slice(0, -50);
  const n = Math.min(BLOCKS, eventBlocks.length);
  return Array.from({ length: n }, (_, i) => String(eventBlocks[Math.floor((i * eventBlocks.length) / n)]));
}
const blocks = floodBlocks(served.index);
let head = { ...served.index.head };
const admin = new pg.Client({ connectionString: served.databaseUrl });
await admin.connect();
if (VIEWS) await createViewsSchema(admin, served.schema, VIEWS);
const chainId = served.devnet.deployment.manifest.chainId;
/** Plays the indexer while it runs: a new head (Ponder's checkpoint row, one block and 2 s on) every HEAD_EVERY_MS. */
function committing(): { stop(): Promise<number> } {
  if (HEAD_EVERY_MS <= 0) return { stop: async () => 0 };
  let commits = 0;
  let last = Promise.resolve();
  const timer = setInterval(() => {
    head = { block: head.block + 1n, time: head.time + 2n };
    const latest = checkpointOf(chainId, head.block, head.time);
    last = admin
      .query(`UPDATE "${served.schema}"."_ponder_checkpoint" SET latest_checkpoint = $1`, [latest])
      .then(() => {
        commits++;
      });
  }, HEAD_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await last;
      return commits;
    },
  };
}
// Nothing more is needed of the index here: let go, so this process does not collect it beside the API process
// during a flood (bench/benchHeap.ts).
served.releaseIndex();
// Stop the servedIndex's own API process: each part starts the process it measures.
await served.api.stop("SIGKILL");
const manifestFile = writeManifest(served.devnet.deployment.manifest);
const folder = mkdtempSync(path.join(os.tmpdir(), "time-travel-"));

async function apiProcess(env: Record<string, string>): Promise<ServiceChild> {
  const api = await spawnService({
    command: "api",
    rpcUrl: served.devnet.rpcUrl,
    manifestFile,
    databaseUrl: served.databaseUrl,
    schema: served.schema,
    ...(VIEWS ? { viewsSchema: VIEWS } : {}),
    env: {
      LOG_LEVEL: "error",
      REDIS_URL: BENCH_REDIS_URL,
      REDIS_KEY_PREFIX: `bench-tt-${randomUUID()}:`,
      // PROFILE_DIR: the API process writes a CPU profile there when it stops (node --cpu-prof).
      ...(process.env.PROFILE_DIR ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROFILE_DIR}` } : {}),
      ...env,
    },
  });
  await api.waitFor200("/health", 30_000);
  return api;
}

async function timed(url: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

try {
  if (PARTS.has(1)) {
    collectNow();
    const api = await apiProcess({ RATE_LIMIT_MAX: "1000000" });
    const u = (p: string) => `${api.url}${INDEX}${p}`;
    await timed(u("/stats"));
    await timed(u("/leaderboards/ve?limit=100"));
    const start = rssMb(api.pid);
    console.log(`   start: RSS ${fmt(start)} MB, ${await heapMb(api.url)}`);
    let peak = start;
    const statuses: Record<number, number> = {};
    const passStarted = performance.now();
    console.log(`1. memory: ${blocks.length} distinct past blocks × board + stats × ${PASSES} passes, one address`);
    for (let pass = 1; pass <= PASSES; pass++) {
      const started = performance.now();
      for (const [i, b] of blocks.entries()) {
        for (const p of [`/leaderboards/ve?block=${b}&limit=100`, `/stats?block=${b}`]) {
          const { status } = await timed(u(p));
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
        if (i % 50 === 0) peak = Math.max(peak, rssMb(api.pid));
      }
      const now = rssMb(api.pid);
      peak = Math.max(peak, now);
      console.log(
        `   pass ${pass}: RSS ${fmt(now)} MB (${fmt(now - start)} MB over the start), ${await heapMb(api.url)}, in ` +
          `${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()}`,
      );
    }
    const end = rssMb(api.pid);
    const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
    const computed = /api_index_ve_board_computations_total (\d+)/.exec(metrics)?.[1];
    console.log(
      `   answers ${JSON.stringify(statuses)}; ve boards computed ${computed}; ` +
        `${((performance.now() - passStarted) / 1000).toFixed(0)} s in all`,
    );
    console.log(
      `   RSS start ${fmt(start)} MB, end ${fmt(end)} MB (+${fmt(end - start)}), peak ${fmt(peak)} MB ` +
        `(+${fmt(peak - start)}) — goal ≤ +${RSS_GOAL_MB} MB: ${peak - start <= RSS_GOAL_MB ? "met" : "NOT met"}`,
    );
    await api.stop("SIGKILL");
  }

  if (PARTS.has(2)) {
    collectNow();
    const api = await apiProcess({});
    const heads = committing();
    const url = (p: string) => `${api.url}${p}`;
    const paths = {
      stats: `${INDEX}/stats`,
      board: `${INDEX}/leaderboards/ve?limit=10`,
      health: "/health",
    } as const;
    type Name = keyof typeof paths;
    // The head computed once (its lane), then the idle baseline: one reader, as many rounds as the flood's readers
    // make together in about three seconds.
    for (const p of [paths.stats, paths.board]) await timed(url(p));
    const idle = await runHeadReaders(api.url, paths, { rounds: 12, readers: 1 });
    const blocksFile = path.join(folder, "blocks.json");
    writeFileSync(blocksFile, JSON.stringify(blocks));
    const start = rssMb(api.pid);
    const fdsBefore = fds(api.pid);
    let peak = start;
    // Beside the flood, a client that sends past blocks' board pages and never reads them.
    const unread = neverReading(
      api.port,
      blocks.slice(0, 20).map((b) => `${INDEX}/leaderboards/ve?block=${b}&limit=100`),
    );
    // The readers, loaded, and the flood start together and run as long.
    const readers = await startHeadReaders(api.url, paths, { durationMs: FLOOD_MS });
    const reading = readers.go();
    const flood = runFloodScript<{
      requests: number;
      byStatus: Record<string, number>;
      retryAfter: Record<string, number>;
      reasons: Record<string, number>;
      maxMs: number;
      errors: number;
    }>(path.join(import.meta.dirname, "timeTravelFlood.ts"), {
      BASE: api.url,
      ADDRESSES: String(ADDRESSES),
      DURATION_MS: String(FLOOD_MS),
      BLOCKS_FILE: blocksFile,
    });
    const watch = setInterval(() => {
      peak = Math.max(peak, rssMb(api.pid));
    }, 250);
    const [result, during] = await Promise.all([flood, reading]);
    clearInterval(watch);
    const commits = await heads.stop();
    const end = rssMb(api.pid);
    const fdsAfter = fds(api.pid);
    unread.close();
    const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
    const refused = [...metrics.matchAll(/^api_index_computations_refused_total\{([^}]*)\} (\d+)/gm)]
      .map(([, l, v]) => `${l} ${v}`)
      .join(", ");
    const pins = (how: string) =>
      new RegExp(`^api_index_head_pins_total\\{how="${how}"\\} (\\d+)`, "m").exec(metrics)?.[1] ?? "0";
    console.log(
      `   ${VIEWS ? `views schema ${VIEWS} (LISTEN)` : "base schema"}; ${commits} heads committed (one every ` +
        `${HEAD_EVERY_MS} ms${HEAD_EVERY_MS > 0 ? "" : ": the head fixed"}); head reads pinned: ${pins("notified")} ` +
        `notified, ${pins("probed")} probed`,
    );
    console.log(
      `2. fairness: ${ADDRESSES} addresses × past blocks for ${FLOOD_MS / 1000} s: ${result.requests} answers ` +
        `${JSON.stringify(result.byStatus)}, with Retry-After ${JSON.stringify(result.retryAfter)}, reasons ` +
        `${JSON.stringify(result.reasons)}, slowest ${result.maxMs} ms, connection errors ${result.errors}; ` +
        `refused computations: ${refused || "none"}; load ${load()}`,
    );
    for (const name of Object.keys(paths) as Name[]) {
      const goal = name === "health" ? HEALTH_P99_GOAL_MS : HEAD_P99_GOAL_MS;
      const not200 = during[name].filter((s) => s.status !== 200).length;
      const times = during[name].map((s) => s.ms);
      const p = p99(times);
      const met = p <= goal && not200 === 0;
      console.log(
        `   ${name.padEnd(6)} p99 ${fmt(p).padStart(6)} ms (idle ${fmt(p99(idle[name].map((s) => s.ms)))} ms), ` +
          `${during[name].length - not200}/${during[name].length} 200 — goal 200 every time, p99 ≤ ${goal} ms: ` +
          `${met ? "met" : "NOT met"} (${HEAD_READERS} readers; slowest ${fmt(Math.max(...times))} ms; ` +
          `${overGoal(during[name], goal)})`,
      );
    }
    console.log(
      `   API RSS start ${fmt(start)} MB, peak ${fmt(peak)} MB (+${fmt(peak - start)}), end ${fmt(end)} MB ` +
        `(+${fmt(end - start)}); descriptors ${fdsBefore} → ${fdsAfter} (20 never-reading sockets open beside the flood)`,
    );
    await api.stop(process.env.PROFILE_DIR ? "SIGTERM" : "SIGKILL");
  }
} finally {
  await admin.end();
  await served.stop();
}
