/**
 * Soak: the production shape (devnet, Postgres, Redis, one `ponder start` indexer, two API processes —
 * `npm run serve:api`, api/server/main.ts — reading its views schema) under a bounded mixed load on loopback. Each replica gets its own autocannon run over the mixed route set
 * (supply total / circulating / max, state for three seeded users, preflight); both run at once.
 *
 * Beside the load, as every load test here: a client that never reads (pipelined requests on paused sockets,
 * bench/unreadClient.ts) and a client that picks a new key each time (the state of a new random address per request:
 * every answer a new cache key), both against replica 0.
 *
 * Reports throughput, p50/p99 latency, non-2xx and error counts, and each replica's RSS and open descriptors after
 * warm-up, after the soak and 30 s after it. Bound: RSS growth ≤ 64 MiB per replica over the second half of the soak (see below) and zero errors / non-2xx (the rate limit is lifted for the
 * soak: it measures capacity, and 300/min would turn it into a 429 benchmark). Baseline in the same run: /health
 * on the same API processes; the figure (last line) is mixed-route throughput / /health throughput.
 * Usage: npx tsx bench/soak.ts [soakSeconds=60]   (whole run ≈ soakSeconds + 50 s)
 */

import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { BENCH_REDIS_URL, startProductionTopology } from "./productionTopology";
import { neverReading } from "./unreadClient";

const SOAK_SECONDS = Math.min(Math.max(Number(process.argv[2] ?? 60), 10), 150);
const WARMUP_SECONDS = 5;
const BASELINE_SECONDS = 5;
const CONNECTIONS = 8;
const RSS_BOUND_MIB = 64;
const PREFIX = `soak:${randomUUID()}:`;

const rssMiB = (pid: number) => {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN);
  return kb / 1024;
};
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
/** After the soak, descriptors may exceed their start by this many (sockets still closing): a leak keeps growing. */
const DESCRIPTOR_SLACK = 20;

const PATHS = [
  "/api/supply/total?format=json",
  "/api/supply/circulating?format=json",
  "/api/supply/max?format=json",
  `/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`,
  `/api/mcp/v1/state/${DEVNET_ACCOUNTS.capped.address}`,
  `/api/mcp/v1/state/${DEVNET_ACCOUNTS.idle.address}`,
  "/api/mcp/v1/preflight",
];

/** The new-key client: one request at a time, each for the state of an address never asked before. */
async function newKeys(url: string, soaking: () => boolean): Promise<{ requests: number; failures: number }> {
  const tally = { requests: 0, failures: 0 };
  while (soaking()) {
    const address = `0x${randomUUID().replaceAll("-", "")}${randomUUID().slice(0, 8)}`;
    const res = await fetch(`${url}/api/mcp/v1/state/${address}`).catch(() => undefined);
    await res?.arrayBuffer();
    tally.requests++;
    if (res?.status !== 200) tally.failures++;
  }
  return tally;
}

function load(url: string, seconds: number, paths: string[]): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: paths.map((path) => ({ method: "GET", path })),
  });
}

const topology = await startProductionTopology({
  schema: "soak_v1",
  viewsSchema: "soak",
  apis: 2,
  env: { REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: PREFIX, RATE_LIMIT_MAX: "1000000", LOG_LEVEL: "warn" },
});
try {
  const replicas = topology.apis;
  await Promise.all(replicas.map((r) => load(r.url, WARMUP_SECONDS, PATHS)));
  const baseline = await Promise.all(replicas.map((r) => load(r.url, BASELINE_SECONDS, ["/health"])));
  const start = replicas.map((r) => rssMiB(r.pid));
  const startFds = replicas.map((r) => descriptors(r.pid));
  // RSS every 5 s: V8 grows its heap for the first tens of seconds of load whatever the code does, so the bound
  // is on the second half of the soak (a leak keeps growing; a warming heap levels off).
  const samples: number[][] = [];
  const sampler = setInterval(() => samples.push(replicas.map((r) => rssMiB(r.pid))), 5_000);
  const unread = neverReading(Number(new URL(replicas[0]!.url).port), PATHS, 200);
  let soaking = true;
  const keyed = newKeys(replicas[0]!.url, () => soaking);
  const results = await Promise.all(replicas.map((r) => load(r.url, SOAK_SECONDS, PATHS)));
  soaking = false;
  const picked = await keyed;
  unread.close();
  clearInterval(sampler);
  const after = replicas.map((r) => rssMiB(r.pid));
  const afterFds = replicas.map((r) => descriptors(r.pid));
  await new Promise((r) => setTimeout(r, 30_000));
  const later = replicas.map((r) => ({ rss: rssMiB(r.pid), fds: descriptors(r.pid) }));
  const before = samples[Math.floor(samples.length / 2) - 1] ?? start;
  console.log(`RSS samples (MiB, every 5 s): ${samples.map((s) => s.map((v) => v.toFixed(0)).join("/")).join(" ")}`);

  const rps = (rs: autocannon.Result[]) => rs.reduce((s, r) => s + r.requests.average, 0);
  let failures = 0;
  results.forEach((r, i) => {
    failures += r.errors + r.timeouts + r.non2xx;
    console.log(
      `replica ${i}: ${r.requests.total} requests in ${SOAK_SECONDS} s, ${r.requests.average.toFixed(0)} req/s, ` +
        `p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, max ${r.latency.max} ms, ` +
        `non2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, ` +
        `RSS ${start[i]!.toFixed(0)} → ${after[i]!.toFixed(0)} MiB; second half ${before[i]!.toFixed(0)} → ${after[i]!.toFixed(0)} MiB, ` +
        `${later[i]!.rss.toFixed(0)} MiB 30 s after; descriptors ${startFds[i]} → ${afterFds[i]} → ${later[i]!.fds} 30 s after`,
    );
  });
  console.log(
    `new-key client (replica 0, state of a new address each time): ${picked.requests} requests, ${picked.failures} not 200`,
  );
  const leakedFds = Math.max(...later.map((l, i) => l.fds - startFds[i]!));
  const growth = Math.max(...after.map((a, i) => a - before[i]!));
  failures += picked.failures;
  console.log(`baseline /health: ${rps(baseline).toFixed(0)} req/s over both replicas`);
  console.log(`mixed routes: ${rps(results).toFixed(0)} req/s over both replicas`);
  console.log(
    `max RSS growth over the second half ${growth.toFixed(1)} MiB (bound ${RSS_BOUND_MIB} MiB); failures ${failures} (bound 0); ` +
      `descriptors 30 s after exceed the start by ${leakedFds} at most (bound ${DESCRIPTOR_SLACK})`,
  );
  if (growth > RSS_BOUND_MIB || failures > 0 || leakedFds > DESCRIPTOR_SLACK) process.exitCode = 1;
  console.log(`soak mixed/health throughput ratio: ${(rps(results) / rps(baseline)).toFixed(3)}`);
} finally {
  await topology.stop("SIGTERM");
  const redis = new Redis(BENCH_REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}
