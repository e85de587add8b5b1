/**
 * Issue 30, item 8: the round's floods one after the other against ONE API process as operators run it (the built
 * bundle with `serve:api`'s flags, over a Base-scale synthetic index in Postgres, Redis set, default limits), each
 * phase's figures printed beside their goals, and the process's RSS and descriptors at the start, after each phase and
 * 15 s after the last, against the goal: within +200 MB of the start; with each, what the RSS is made of (anonymous and
 * file pages, V8's heap used / total, external memory), and the RSS again 30 and 60 s after the last.
 *
 * 1. time travel: 400 addresses ask for past blocks' ve board and stats back to back (bench/timeTravelFlood.ts);
 *    four other clients read the head's `/stats`, board and `/health` every 450 ms each (bench/headReaders.ts: ~100
 *    samples a path, so p99 is not the slowest): 200 every time, p99 ≤ 100 / 100 / 50 ms.
 * 2. documents: 400 addresses post new GraphQL documents at the limits (bench/documentFlood.ts); `/health` p99 ≤ 50 ms,
 *    a 1-row query (a document the process holds, 5 a second) p99 ≤ 100 ms.
 * 3. unread pages: 1,000-row pages (the activity feed over REST and GraphQL, the busiest accounts' histories)
 *    pipelined unread from 1 address (50 connections × 4) and from 400 (1 × 2); `/health` p99 ≤ 50 ms, 12 new
 *    connections answered < 1 s.
 * 4. connections: 400 addresses × 50 idle connections reconnecting whenever closed (test/support/reconnectingIdle.ts);
 *    30 fresh addresses' `/health` < 1 s.
 * Every flood runs in processes of its own (floods at nice 19). The machine is shared (2 cores): the load average is
 * printed with each phase.
 *
 * Usage: npx tsx bench/abuse-soak.ts [events=520000]; env PHASE_MS (12000) for each flood's length, PHASES (1,2,3,4)
 * to run some of them (the end's RSS is the soak's figure only with all four).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getAddress } from "viem";
import { runFloodScript } from "../test/support/apiProcess";
import { buildOnce } from "../test/support/build";
import { startServedIndex } from "../test/support/servedIndex";
import type { SyntheticIndex } from "../test/support/syntheticIndex";
import { freshConnection, holdUnread, percentile, probe, rawGet, rawGraphql } from "../test/support/unreadPages";
import { collectNow } from "./benchHeap";
import { queryProbe } from "./graphqlProbe";
import { HEAD_READERS, overGoal, runHeadReaders, startHeadReaders } from "./headReaders";
import { loadAverage } from "./indexTimeTravel";
import { composition, gcBetween, gcTally } from "./processMemory";
import { BENCH_PG_URL, BENCH_REDIS_URL } from "./productionTopology";
import { spawnReconnectStorm } from "./reconnectStorm";

const EVENTS = Number(process.argv[2] ?? 520_000);
const PHASE_MS = Number(process.env.PHASE_MS ?? 12_000);
/** The phases to run (all by default): a subset is for looking into one phase, not the soak's figure. */
const PHASES = new Set((process.env.PHASES ?? "1,2,3,4").split(",").map(Number));
const RSS_GOAL_MB = 200;
const INDEX = "/api/index/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
const results: string[] = [];
const report = (line: string) => {
  console.log(line);
  results.push(line);
};

/**
 * What the phases need of the synthetic index: the 20 accounts with the most events, and the blocks with events (the
 * last 50 left out). A function of its own, so no reference to the index outlives it in the caller's frame.
 */
function whatThePhasesNeed(index: SyntheticIndex): { busiest: string[]; eventBlocks: bigint[] } {
  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 20);
  console.log(
    `synthetic index: ${index.events.length} events, ${index.locks.size} locks, busiest account ` +
      `${ranked[0]?.[1] ?? 0} events; ready in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  return {
    busiest: ranked.map(([a]) => getAddress(a)),
    eventBlocks: [...new Set(index.events.map((e) => e.blockNumber))].slice(0, -50),
  };
}

buildOnce();
const t0 = performance.now();
const served = await startServedIndex({
  serverUrl: BENCH_PG_URL,
  schema: "bench_soak",
  synthetic: { events: EVENTS, owners: Math.max(20, Math.round((EVENTS * 95_000) / 520_000)), seed: 23 },
  env: { REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: `bench-soak-${randomUUID()}:` },
});
try {
  const api = served.api;
  const base = api.url;
  const host = new URL(base).host;
  // What the phases need of the index, then the index let go (bench/benchHeap.ts: this process must not collect it
  // beside the API process during a flood).
  const { busiest, eventBlocks } = whatThePhasesNeed(served.index);
  served.releaseIndex();
  console.log(`the bench's own heap, the index let go: ${collectNow().toFixed(0)} MB`);
  // The head's answers computed once, as a reader would have them.
  for (const p of ["/stats", "/leaderboards/ve?limit=10", "/activity?limit=10"]) await fetch(`${base}${INDEX}${p}`);
  const start = { rss: rssMb(api.pid), fds: fds(api.pid) };
  console.log(
    `start: API RSS ${start.rss.toFixed(0)} MB (${await composition(api.pid, base)}), ${start.fds} descriptors; ` +
      `load ${loadAverage()}`,
  );
  let gc = await gcTally(base);
  const after = async (phase: string) => {
    const rss = rssMb(api.pid);
    const n = fds(api.pid);
    const now = await gcTally(base);
    report(
      `   after ${phase}: RSS ${rss.toFixed(0)} MB (+${(rss - start.rss).toFixed(0)}; ` +
        `${await composition(api.pid, base)}), ${n} descriptors; ${gcBetween(gc, now)}`,
    );
    gc = now;
  };

  // 1. Time travel.
  if (PHASES.has(1)) {
    collectNow();
    const blocksFile = path.join(mkdtempSync(path.join(os.tmpdir(), "soak-")), "blocks.json");
    writeFileSync(blocksFile, JSON.stringify(eventBlocks.map(String)));
    const paths = { stats: `${INDEX}/stats`, board: `${INDEX}/leaderboards/ve?limit=10`, health: "/health" } as const;
    // The head's readers read it before the flood, as abuse-time-travel's do (their baseline): the head's answers are
    // then computed, and what the phase measures is the flood, not a fresh process's first stats at Base scale.
    const idle = await runHeadReaders(base, paths, { rounds: 5, readers: 1, pauseMs: 100 });
    // The readers, loaded, and the flood start together and run as long.
    const readers = await startHeadReaders(base, paths, { durationMs: PHASE_MS });
    const reading = readers.go();
    const flood = runFloodScript<{ requests: number; byStatus: Record<string, number> }>(
      path.join(import.meta.dirname, "timeTravelFlood.ts"),
      { BASE: base, ADDRESSES: "400", DURATION_MS: String(PHASE_MS), BLOCKS_FILE: blocksFile },
    );
    const [sent, samples] = await Promise.all([flood, reading]);
    report(`1. time travel, 400 addresses, ${PHASE_MS / 1000} s; load ${loadAverage()}`);
    report(`   flood: ${sent.requests} answers ${JSON.stringify(sent.byStatus)}`);
    for (const name of Object.keys(paths) as (keyof typeof paths)[]) {
      const goal = name === "health" ? 50 : 100;
      const p99 = percentile(
        samples[name].map((s) => s.ms),
        99,
      );
      const ok = samples[name].filter((s) => s.status === 200).length;
      const times = samples[name].map((s) => s.ms);
      const slowest = Math.max(...times);
      report(
        `   head ${name} p99 ${ms(p99)}, ${ok}/${samples[name].length} 200 — goal 200 every time, ≤ ${goal} ms: ` +
          `${verdict(ok === samples[name].length && p99 <= goal)} (${HEAD_READERS} readers; p50 ` +
          `${ms(percentile(times, 50))}, slowest ${ms(slowest)}; before the flood: first ${ms(idle[name][0]!.ms)}, ` +
          `then ${ms(Math.max(...idle[name].slice(1).map((s) => s.ms)))} at most; ` +
          `${overGoal(samples[name], goal)})`,
      );
    }
    await after("time travel");
  }

  // 2. Documents.
  if (PHASES.has(2)) {
    collectNow();
    const oneRow = JSON.stringify({
      query: `{ lockEvents(where: { account: "${busiest[0]}" }, limit: 1) { items { kind } } }`,
    });
    const query = (forMs: number) => queryProbe(base, oneRow, forMs);
    await query(400); // the document compiled and held
    const flood = runFloodScript(path.join(import.meta.dirname, "documentFlood.ts"), {
      BASE: base,
      ADDRESSES: "400",
      DURATION_MS: String(PHASE_MS),
    });
    await sleep(1_000);
    const [health, q] = await Promise.all([probe(`${base}/health`, PHASE_MS - 2_000), query(PHASE_MS - 2_000)]);
    const sent = await flood;
    const hP99 = percentile(health.ms, 99);
    const qP99 = percentile(q.ms, 99);
    report(`2. new GraphQL documents, 400 addresses, ${PHASE_MS / 1000} s; load ${loadAverage()}`);
    report(`   flood: ${sent.requests} answers ${JSON.stringify(sent.byStatus)}`);
    report(`   /health p99 ${ms(hP99)}, failed ${health.failed} — goal ≤ 50 ms: ${verdict(hP99 <= 50)}`);
    report(
      `   1-row query p99 ${ms(qP99)}, failed ${JSON.stringify(q.why)} — goal ≤ 100 ms: ` +
        verdict(qP99 <= 100 && Object.keys(q.why).length === 0),
    );
    await after("documents");
  }

  // 3. Unread 1,000-row pages.
  if (PHASES.has(3)) {
    collectNow();
    const FIELDS = "kind blockNumber txHash logIndex";
    const page = (i: number, k: number) => {
      const a = busiest[(i + k) % busiest.length]!;
      switch ((i + k) % 4) {
        case 0:
          return rawGet(host, `${INDEX}/activity?limit=1000`);
        case 1:
          return rawGraphql(host, `{ activity(limit: 1000) { items { ${FIELDS} } } }`);
        case 2:
          return rawGet(host, `${INDEX}/accounts/${a}/events?limit=1000`);
        default:
          return rawGet(host, `${INDEX}/accounts/${a}/locks`);
      }
    };
    for (const [addresses, sockets, pipelined] of [
      [1, 50, 4],
      [400, 1, 2],
    ] as const) {
      const holding = holdUnread(base, { addresses, sockets, pipelined, holdMs: 8_000, request: page });
      await sleep(300);
      const fresh: { status: number; ms: number }[] = [];
      const [during] = await Promise.all([
        probe(`${base}/health`, 7_000),
        (async () => {
          for (let i = 0; i < 12; i++) {
            fresh.push(await freshConnection(`${base}/health`, `127.0.0.${150 + i}`));
            await sleep(500);
          }
        })(),
      ]);
      await holding;
      const p99 = percentile(during.ms, 99);
      const worst = Math.max(...fresh.map((f) => f.ms));
      const answered = fresh.filter((f) => f.status === 200).length;
      report(
        `3. unread pages, ${addresses} address(es) × ${sockets} × ${pipelined}, 8 s; load ${loadAverage()}: ` +
          `/health p99 ${ms(p99)} — goal ≤ 50 ms: ${verdict(p99 <= 50)}; new connections ${answered}/12, slowest ` +
          `${ms(worst)} — goal < 1 s: ${verdict(answered === 12 && worst < 1_000)}`,
      );
      await sleep(2_000);
    }
    await after("unread pages");
  }

  // 4. Connections.
  if (PHASES.has(4)) {
    collectNow();
    const holders = spawnReconnectStorm(base, PHASE_MS + 8_000, { nice: true, stdout: "ignore" });
    await sleep(5_000);
    const fresh: { status: number; ms: number }[] = [];
    const until = performance.now() + PHASE_MS;
    for (let i = 0; performance.now() < until; i++) {
      fresh.push(await freshConnection(`${base}/health`, `127.0.0.${100 + (i % 100)}`));
      await sleep(500);
    }
    for (const h of holders) h.kill("SIGKILL");
    const worst = Math.max(...fresh.map((f) => f.ms));
    const answered = fresh.filter((f) => f.status === 200).length;
    report(
      `4. 400 addresses × 50 idle connections, reconnecting; load ${loadAverage()}: fresh /health ${answered}/` +
        `${fresh.length}, slowest ${ms(worst)} — goal < 1 s every time: ${verdict(answered === fresh.length && worst < 1_000)}`,
    );
    await after("connections");
  }

  await sleep(15_000);
  const end = { rss: rssMb(api.pid), fds: fds(api.pid) };
  report(
    `end (15 s after): API RSS ${start.rss.toFixed(0)} → ${end.rss.toFixed(0)} MB (+${(end.rss - start.rss).toFixed(0)}), ` +
      `descriptors ${start.fds} → ${end.fds} — goal ≤ +${RSS_GOAL_MB} MB: ${verdict(end.rss - start.rss <= RSS_GOAL_MB)}`,
  );
  report(`   its make-up: ${await composition(api.pid, base)}; load ${loadAverage()}`);
  // Later, untouched: whether the process returns more with time (not the goal's figure).
  for (const [waitMs, at] of [
    [15_000, 30],
    [30_000, 60],
  ] as const) {
    await sleep(waitMs);
    const rss = rssMb(api.pid);
    report(
      `   ${at} s after: RSS ${rss.toFixed(0)} MB (+${(rss - start.rss).toFixed(0)}; ${await composition(api.pid, base)})`,
    );
  }
  const health = await fetch(`${base}/health`);
  report(`   /health after it all: ${health.status}`);
} finally {
  await served.stop();
}
