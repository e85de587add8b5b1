/**
 * Memory and fairness under unread answers, on the production topology: the seeded devnet, Postgres, Redis,
 * one `ponder start` indexer and the API process (`npm run serve:api`, api/server/main.ts) on its views
 * schema, with the default limits and budgets. Three attacks on the API process:
 * 1. 120 sockets from one address, each pipelining the docs bundle (the script /docs loads: the largest
 *    answer) as many times as a connection may queue, reading nothing;
 * 2. 400 addresses (127.0.1.x, 127.0.2.x: loopback is all local on Linux), one socket each, half pipelining
 *    the docs bundle and half MCP batches (10 × tools/list), reading nothing;
 * 3. a distributed MCP flood: 400 addresses each sending MCP batches back to back and reading them
 *    (bench/distributedFlood.ts, a process of its own at the lowest CPU priority), while another client
 *    polls the cached circulating supply.
 * Baselines of the same run: the process's RSS and descriptors before the attacks (read from outside,
 * /proc/<pid>/status and /proc/<pid>/fd; and `process_resident_memory_bytes` from /api/metrics when it is
 * exported), and the other client's p99 on the idle API. Bounds (issue 24): RSS growth < 300 MB during 1–2,
 * back near its base after; the other client's p99 ≤ 50 ms during 3.
 * Usage: npx tsx bench/abuse-memory.ts [attacks=1,2,3]   e.g. `3` for the flood alone (the baseline always runs).
 * MCP_ERA=2026-07-28 makes attack 3 a flood of that revision's stateless requests (issue 34).
 * FLOOD_NICE=0 runs the flood generator at normal priority (default 19); API_CPU_PROF=<dir> writes a V8 CPU
 * profile of the API process there (it is stopped with SIGTERM so the profile is written).
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import path from "node:path";
import { runFloodScript, sampleP99 } from "../test/support/apiProcess";
import { BENCH_REDIS_URL, startProductionTopology } from "./productionTopology";

const ATTACKS = new Set((process.argv[2] ?? "1,2,3").split(",").map(Number));
const FLOOD_NICE = Number(process.env.FLOOD_NICE ?? 19);
const CPU_PROF = process.env.API_CPU_PROF;
const RSS_GROWTH_BOUND_MB = 300;
/** "Near its base": what the process may keep of an attack once its sockets are gone. */
const RSS_AFTER_BOUND_MB = 100;
const P99_BOUND_MS = 50;
/** Requests a connection may have outstanding (api/server/connectionGuard.ts): the most an attack gets computed. */
const PIPELINED = 4;
const HOLD_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const address = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;
const rssMb = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rss = /VmRSS:\s+(\d+)/.exec(status);
  if (!rss) throw new Error(`process ${pid} has no RSS (it exited): ${/State:.*/.exec(status)?.[0]}`);
  return Number(rss[1]) / 1024;
};
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
/** The machine's load average (1, 5, 15 min): this 2-core machine is shared, and latency figures depend on it. */
const load = () => `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`;
/** A growth in MB, signed ("+12", "-3"). */
const mb = (x: number) => `${x < 0 ? "" : "+"}${x.toFixed(0)}`;

async function metrics(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split("\n"))
    if (line && !line.startsWith("#"))
      out[line.slice(0, line.lastIndexOf(" "))] = Number(line.slice(line.lastIndexOf(" ") + 1));
  return out;
}

/** Sockets that write `bytes` (one per entry, from its address) and read nothing. */
function unread(base: string, sends: { bytes: string; from: string }[]): Promise<Socket[]> {
  const port = Number(new URL(base).port);
  return Promise.all(
    sends.map(
      ({ bytes, from }) =>
        new Promise<Socket>((resolve) => {
          const s = connect({ host: "127.0.0.1", port, localAddress: from }, () => {
            s.pause();
            s.write(bytes);
            resolve(s);
          });
          s.on("error", () => resolve(s));
        }),
    ),
  );
}

/** Holds `sockets` for HOLD_MS, sampling the process; then closes them. */
async function hold(pid: number, sockets: Socket[]): Promise<{ peakMb: number; peakFds: number }> {
  let peakMb = 0;
  let peakFds = 0;
  for (const until = performance.now() + HOLD_MS; performance.now() < until; ) {
    peakMb = Math.max(peakMb, rssMb(pid));
    peakFds = Math.max(peakFds, descriptors(pid));
    await sleep(50);
  }
  for (const s of sockets) s.destroy();
  return { peakMb, peakFds };
}

/** `attack`'s sockets held (hold) while the other client polls `url`. */
async function holdPolled(pid: number, attack: Promise<Socket[]>, url: string) {
  let done!: () => void;
  const held = attack.then((sockets) => hold(pid, sockets)).finally(() => done());
  held.catch(() => {}); // awaited below, after the polling: not an unhandled rejection meanwhile
  const polled = await sampleP99(url, 0, new Promise<void>((r) => (done = r)));
  return { ...(await held), polled };
}

function distributedFlood(base: string, ms: number) {
  const script = path.join(import.meta.dirname, "distributedFlood.ts");
  return runFloodScript(
    script,
    { BASE: base, ADDRESSES: "400", DURATION_MS: String(ms), MCP_ERA: process.env.MCP_ERA ?? "" },
    FLOOD_NICE,
  );
}

const topology = await startProductionTopology({
  schema: "mem_v1",
  viewsSchema: "mem",
  apis: 1,
  env: { REDIS_URL: BENCH_REDIS_URL, REDIS_KEY_PREFIX: `memory:${randomUUID()}:`, LOG_LEVEL: "error" },
  apiEnv: CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${CPU_PROF}` } : {},
});
try {
  const api = topology.apis[0]!;
  const base = api.url;

  // The docs bundle as /docs references it, and an MCP batch: warmed once, as a visitor would.
  const html = await (await fetch(`${base}/docs`)).text();
  const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
  if (!script) throw new Error("/docs references no script");
  const bundle = (await (await fetch(`${base}${script}`)).arrayBuffer()).byteLength;
  const body = JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })));
  const mcp =
    `POST /api/mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const docs = `GET ${script} HTTP/1.1\r\nhost: x\r\n\r\n`;
  const mcpBytes = (
    await (
      await fetch(`${base}/api/mcp`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      })
    ).arrayBuffer()
  ).byteLength;
  const supply = `${base}/api/supply/circulating`;
  await fetch(supply).then((r) => r.text());
  await sleep(1_000);

  const baseMb = rssMb(api.pid);
  const baseFds = descriptors(api.pid);
  const exported = (await metrics(base)).process_resident_memory_bytes;
  const idle = await sampleP99(supply, 3_000);
  console.log(
    `docs bundle ${script}: ${(bundle / 1e6).toFixed(2)} MB; MCP batch answer ${(mcpBytes / 1e3).toFixed(0)} kB`,
  );
  console.log(
    `base: RSS ${baseMb.toFixed(0)} MB${exported ? ` (process_resident_memory_bytes ${(exported / 2 ** 20).toFixed(0)} MiB)` : ""}, ${baseFds} descriptors; ` +
      `other client idle p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms (n=${idle.n}); ${load()}`,
  );

  const memory: string[] = [];
  let ok = true;
  let peakMb = 0;
  if (ATTACKS.has(1)) {
    const one = await holdPolled(
      api.pid,
      unread(
        base,
        // Not the other client's address (127.0.0.1): one address is one client, and its caps close the other
        // client's connection too once the attacker's unread bytes pass them.
        Array.from({ length: 120 }, () => ({ bytes: docs.repeat(PIPELINED), from: "127.0.0.3" })),
      ),
      supply,
    );
    peakMb = Math.max(peakMb, one.peakMb - baseMb);
    console.log(
      `1. 120 sockets, 1 address, docs ×${PIPELINED} unread: peak RSS ${mb(one.peakMb - baseMb)} MB, ` +
        `${one.peakFds} descriptors; other client p99 ${one.polled.p99.toFixed(2)} ms`,
    );
  }
  if (ATTACKS.has(2)) {
    const two = await holdPolled(
      api.pid,
      unread(
        base,
        Array.from({ length: 400 }, (_, i) => ({ bytes: (i % 2 ? mcp : docs).repeat(PIPELINED), from: address(i) })),
      ),
      supply,
    );
    peakMb = Math.max(peakMb, two.peakMb - baseMb);
    console.log(
      `2. 400 addresses, docs|MCP ×${PIPELINED} unread: peak RSS ${mb(two.peakMb - baseMb)} MB, ` +
        `${two.peakFds} descriptors; other client p99 ${two.polled.p99.toFixed(2)} ms`,
    );
  }
  if (ATTACKS.has(1) || ATTACKS.has(2)) {
    await sleep(5_000);
    const soonMb = rssMb(api.pid);
    await sleep(10_000);
    const afterMb = rssMb(api.pid);
    const m = await metrics(base);
    const shed = Object.entries(m).filter(([k]) => k.startsWith("api_connections_shed_total"));
    console.log(
      `after: RSS ${mb(soonMb - baseMb)} MB at 5 s, ${mb(afterMb - baseMb)} MB at 15 s, ${descriptors(api.pid)} descriptors, ` +
        `pending ${m.api_pending_response_bytes} bytes; ` +
        `shed ${shed.map(([k, v]) => `${/reason="(\w+)"/.exec(k)?.[1]}=${v}`).join(" ")}`,
    );
    ok &&= peakMb < RSS_GROWTH_BOUND_MB && afterMb - baseMb < RSS_AFTER_BOUND_MB;
    memory.push(
      `memory: peak RSS ${mb(peakMb)} MB (bound ${RSS_GROWTH_BOUND_MB}), 15 s after ${mb(afterMb - baseMb)} MB (bound ${RSS_AFTER_BOUND_MB})`,
    );
  }
  if (ATTACKS.has(3)) {
    let floodPeakMb = 0;
    let floodPeakFds = 0;
    // prom-client's event-loop delay histogram restarts at each scrape: read now, it covers the flood alone.
    await metrics(base);
    const flooding = distributedFlood(base, 6_000);
    const sampler = setInterval(() => {
      floodPeakMb = Math.max(floodPeakMb, rssMb(api.pid));
      floodPeakFds = Math.max(floodPeakFds, descriptors(api.pid));
    }, 100);
    await sleep(500); // under way
    const flooded = await sampleP99(supply, 4_000, flooding);
    const flood = await flooding.finally(() => clearInterval(sampler));
    const lag = await metrics(base);
    const ms = (s: number | undefined) => ((s ?? Number.NaN) * 1e3).toFixed(1);
    console.log(
      `3. distributed MCP flood${process.env.MCP_ERA ? ` (${process.env.MCP_ERA})` : ""}, 400 addresses (generator at nice ${FLOOD_NICE}): ${flood.requests} requests ` +
        `${JSON.stringify(flood.byStatus)}; peak RSS ${mb(floodPeakMb - baseMb)} MB, ${floodPeakFds} descriptors; ` +
        `other client p50 ${flooded.p50.toFixed(2)} ms, p99 ${flooded.p99.toFixed(2)} ms (n=${flooded.n}); ` +
        `API event-loop delay p99 ${ms(lag.nodejs_eventloop_lag_p99_seconds)} ms, max ${ms(lag.nodejs_eventloop_lag_max_seconds)} ms; ${load()}`,
    );
    ok &&= flooded.p99 <= P99_BOUND_MS;
    memory.push(
      `fairness: p99 ${flooded.p99.toFixed(1)} ms under flood ÷ idle ${idle.p99.toFixed(1)} ms = ${(flooded.p99 / idle.p99).toFixed(2)}× (bound ${P99_BOUND_MS} ms)`,
    );
  }
  console.log(`${memory.join("; ")}${ok ? "" : " — OVER A BOUND"}`);
} finally {
  // SIGTERM when profiling: the API process exits on its own and V8 writes the profile.
  await topology.stop(CPU_PROF ? "SIGTERM" : "SIGKILL");
}
