/**
 * Issue 33's memory-at-rest and start-up figures, on the production topology (a seeded devnet, `ponder start` on
 * Postgres, the API process as `npm run serve:api` runs it — the built dist/server/main.js with its V8 flags —
 * on the views schema, Redis set):
 *
 * 1. spawn → `/ready` of the API process against spawn → first answer of a bare Hono process (bench/bareHono.mjs,
 *    plain JavaScript), interleaved rounds, medians, goal ≤ 4×: a restart (the V8 code cache serve:api keeps in
 *    NODE_COMPILE_CACHE, written by the previous start) and a first start (an empty cache folder of its own);
 * 2. the API process's RSS idle after `/ready` (3 s settled), goal ≤ 150 MB;
 * 3. RSS and descriptors after 20,000 mixed requests (supply, state, index pages, the board, GraphQL) from 8
 *    connections, with a client that picks a new key (a past block) every request and one that never reads its
 *    answers running beside them, goal ≤ 200 MB;
 * 4. throughput of the same mixed load with the production V8 flags against Node's defaults (interleaved rounds),
 *    so the memory is not bought with speed (goal ≥ 0.95×).
 *
 * Usage: npx tsx bench/lean-process.ts [rounds=5]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { freePort } from "../devnet/anvil";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { API_NODE_FLAGS, API_PROCESS_ARGS } from "../test/support/build";
import { BENCH_REDIS_URL, startProductionTopology } from "./productionTopology";

/**
 * The production flags that trade V8's defaults for memory or for a quieter neighbour (serve:api: the young
 * generation, the old generation's growth, V8's helper threads); part 4 measures what they cost.
 */
const MEMORY_FLAGS = /^--(min-semi-space-size|max-semi-space-size|heap-growing-percent|v8-pool-size)/;
const ROUNDS = Math.min(Math.max(Number(process.argv[2] ?? 5), 3), 11);
const MIXED_REQUESTS = 20_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

const alice = DEVNET_ACCOUNTS.alice.address;
const MIXED = [
  "/api/supply/circulating",
  "/api/supply/total?format=json",
  `/api/mcp/v1/state/${alice}`,
  `/api/index/v1/accounts/${alice}/events?limit=100`,
  `/api/index/v1/accounts/${alice}/locks`,
  "/api/index/v1/leaderboards/ve?limit=50",
  `/api/index/v1/leaderboards/ve/${alice}`,
  "/api/index/v1/locks/1",
  "/api/index/v1/stats",
  `/graphql?query=${encodeURIComponent("{ _meta { block { number } } }")}`,
];

/** Spawn → the first 200 of `pathname`, polled every 5 ms. */
async function timeToAnswer(url: string, pathname: string, started: number, exited: () => boolean) {
  for (;;) {
    if (exited()) throw new Error("process exited before answering");
    const ok = await fetch(url + pathname)
      .then((r) => r.arrayBuffer().then(() => r.status === 200))
      .catch(() => false);
    if (ok) return performance.now() - started;
    await sleep(5);
  }
}

async function bareStart() {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "bareHono.mjs")], {
    env: { ...process.env, PORT: String(port) },
    stdio: "ignore",
  });
  try {
    return await timeToAnswer(`http://127.0.0.1:${port}`, "/", started, () => child.exitCode !== null);
  } finally {
    child.kill("SIGKILL");
  }
}

/** A client that sends pipelined requests on 20 sockets and never reads: what it costs the process. */
function neverReads(port: number) {
  const sockets = Array.from({ length: 20 }, () => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    s.pause();
    s.write(`GET /api/index/v1/accounts/${alice}/events?limit=1000 HTTP/1.1\r\nhost: x\r\n\r\n`.repeat(50));
    return s;
  });
  return () => {
    for (const s of sockets) s.destroy();
  };
}

/** A client that asks the board at a new past block every request (1..head). */
async function newKeys(url: string, head: number, until: () => boolean) {
  let n = 0;
  for (let b = 1; !until(); b = (b % head) + 1) {
    await fetch(`${url}/api/index/v1/leaderboards/ve?limit=10&block=${b}`).then((r) => r.arrayBuffer());
    n++;
  }
  return n;
}

const mixed = (url: string, amount?: number, duration?: number) =>
  autocannon({
    url,
    connections: 8,
    ...(amount ? { amount } : { duration }),
    requests: MIXED.map((p) => ({ method: "GET", path: p })),
  });

const topology = await startProductionTopology({
  schema: `lean_${process.pid}`,
  viewsSchema: `lean_views_${process.pid}`,
  apis: 0,
  env: {
    REDIS_URL: BENCH_REDIS_URL,
    REDIS_KEY_PREFIX: `lean:${process.pid}:`,
    RATE_LIMIT_MAX: "1000000",
    LOG_LEVEL: "warn",
  },
});
try {
  // 1 + 2: start-up and idle memory, interleaved with the bare process.
  // A restart reads the code cache serve:api's NODE_COMPILE_CACHE folder holds (warmed by one start first); a first
  // start (a new machine or container) gets an empty folder of its own.
  const startApi = async (env: Record<string, string> = {}) => {
    const started = performance.now();
    const api = await topology.spawnApi(env);
    return { api, ms: await timeToAnswer(api.url, "/ready", started, () => !api.running()) };
  };
  await (await startApi()).api.stop("SIGKILL");
  const ready: number[] = [];
  const cold: number[] = [];
  const bare: number[] = [];
  const idle: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await bareStart());
    const empty = mkdtempSync(path.join(os.tmpdir(), "lean-ncc-"));
    const first = await startApi({ NODE_COMPILE_CACHE: empty });
    cold.push(first.ms);
    await first.api.stop("SIGKILL");
    rmSync(empty, { recursive: true, force: true });
    const restart = await startApi();
    ready.push(restart.ms);
    await sleep(3_000);
    idle.push(rssMb(restart.api.pid));
    await restart.api.stop("SIGKILL");
  }
  console.log(`load average ${loadAverage()}`);
  const ms = (xs: number[]) => xs.map((v) => v.toFixed(0)).join(" ");
  console.log(`rounds: api restart ${ms(ready)} ms; api first start ${ms(cold)} ms; bare ${ms(bare)} ms`);
  const readyRatio = median(ready) / median(bare);
  console.log(
    `spawn → /ready: ${median(ready).toFixed(0)} ms (API process, a restart: its code cache) vs spawn → first answer ${median(bare).toFixed(0)} ms (bare Hono): ${readyRatio.toFixed(2)}× (goal ≤ 4×: ${readyRatio <= 4 ? "met" : "NOT met"}); a first start (empty code cache) ${median(cold).toFixed(0)} ms, ${(median(cold) / median(bare)).toFixed(2)}×`,
  );
  console.log(
    `idle RSS after /ready: ${median(idle).toFixed(0)} MB median (${idle.map((v) => v.toFixed(0)).join(" ")}) (goal ≤ 150 MB: ${median(idle) <= 150 ? "met" : "NOT met"})`,
  );

  // 3: after 20,000 mixed requests, with a never-reading client and a new-key client beside them.
  const api = await topology.spawnApi();
  await api.waitFor200("/ready");
  for (const p of MIXED) {
    const r = await fetch(api.url + p);
    if (r.status !== 200) throw new Error(`${p} answered ${r.status}: ${await r.text()}`);
  }
  const head = Number(
    ((await (await fetch(`${api.url}/api/index/v1/stats`)).json()) as { blockNumber: string }).blockNumber,
  );
  const startRss = rssMb(api.pid);
  const startFds = fds(api.pid);
  const load = await mixed(api.url, MIXED_REQUESTS);
  await sleep(2_000);
  const afterRss = rssMb(api.pid);
  console.log(
    `mixed: ${load.requests.total} requests (${load.non2xx} non-2xx, ${load.errors} errors), ${load.requests.average.toFixed(0)} req/s, p99 ${load.latency.p99} ms`,
  );
  console.log(
    `RSS ${startRss.toFixed(0)} → ${afterRss.toFixed(0)} MB after ${MIXED_REQUESTS} mixed requests (goal ≤ 200 MB: ${afterRss <= 200 ? "met" : "NOT met"}); descriptors ${startFds} → ${fds(api.pid)}`,
  );
  // Beside the same load: a client that picks a new past block every request, and one that never reads.
  const stopNeverReads = neverReads(api.port);
  let done = false;
  const keys = newKeys(api.url, head, () => done);
  const second = await mixed(api.url, MIXED_REQUESTS / 2);
  done = true;
  const pickedKeys = await keys;
  const duringRss = rssMb(api.pid);
  const duringFds = fds(api.pid);
  stopNeverReads();
  await sleep(2_000);
  console.log(
    `with ${pickedKeys} past-block requests (a new block each) and 20 never-reading sockets beside ${second.requests.total} mixed (${second.non2xx} non-2xx, p99 ${second.latency.p99} ms): RSS ${afterRss.toFixed(0)} → ${duringRss.toFixed(0)} during → ${rssMb(api.pid).toFixed(0)} MB after; descriptors ${duringFds} during → ${fds(api.pid)} after`,
  );
  await api.stop("SIGKILL");

  // 4: the production flags against Node's defaults, same load, interleaved.
  const flagged: number[] = [];
  const plain: number[] = [];
  const rss: Record<string, number[]> = { flagged: [], plain: [] };
  for (let round = 0; round < 5; round++) {
    for (const variant of round % 2 ? ["plain", "flagged"] : ["flagged", "plain"]) {
      const p = await topology.spawnApi(
        {},
        variant === "plain" ? [process.execPath, ...API_PROCESS_ARGS.filter((f) => !MEMORY_FLAGS.test(f))] : undefined,
      );
      await p.waitFor200("/ready");
      await mixed(p.url, undefined, 2);
      const r = await mixed(p.url, undefined, 4);
      (variant === "plain" ? plain : flagged).push(r.requests.average);
      rss[variant]!.push(rssMb(p.pid));
      await p.stop("SIGKILL");
    }
  }
  const ratio = median(flagged) / median(plain);
  console.log(
    `throughput, production flags ${API_NODE_FLAGS.join(" ")} vs Node's defaults: ${median(flagged).toFixed(0)} vs ${median(plain).toFixed(0)} req/s = ${ratio.toFixed(2)}× (goal ≥ 0.95×: ${ratio >= 0.95 ? "met" : "NOT met"}); RSS under load ${median(rss.flagged!).toFixed(0)} vs ${median(rss.plain!).toFixed(0)} MB`,
  );
  console.log(`load average ${loadAverage()}`);
} finally {
  await topology.stop();
}
