/**
 * GraphQL on the served API process (dist/server/main.js, as `npm run serve:api` runs it) over a synthetic Postgres
 * index (test/support/servedIndex.ts: the topology of test/graphql/served.test.ts; about 1,000 events an account, so
 * a page is full and a 1,000-event answer has its 1,000 rows):
 * 1. an account's 100-event page three ways, request by request interleaved (the order rotating), in rounds:
 *    `POST /graphql`, the REST route `/api/index/v1/accounts/{a}/events?limit=100`, and as the floor the statement
 *    both read the page with (the lock index's own, recorded by bench/recordedIndex.ts as bench/index-api.ts does)
 *    sent as bare SQL to the same schema, unnamed (planned each time, as index-api's baseline) and prepared (as the
 *    API process sends it); each figure is the median of the rounds' p50 ratios (goal GraphQL ≤ 1.5× REST);
 * 2. clients that never read: 50 sockets each pipelining 4 GraphQL requests for the same 1,000-event answer and
 *    reading nothing, held 10 s; the API process's RSS and descriptors sampled every 50 ms from /proc during and for
 *    15 s after the sockets close; another client's `/health` p50/p99 during, over its own p50/p99 in the seconds
 *    before;
 * 2b. the same, but all 200 requests different (other accounts, other limits ≤ 1,000), so an answer shared between
 *    identical requests cannot make it look cheaper than it is;
 * 2c, 2d. 2b again on the same process, twice, 15 s apart: what RSS keeps after 2b is mostly reused, and the
 *    process levels off (what stays is the grown heap, not a leak).
 * The machine is shared: every figure is a ratio within this run, printed with the load average.
 * Usage: npx tsx bench/graphql-page.ts [events=100000] [samples=300]
 * GRAPHQL_PAGE_PARTS=1,2,2b,2c: the parts to run (all by default); API_NODE_OPTIONS: NODE_OPTIONS of the API process
 * (to try a V8 or allocator setting against the same floods); API_LOG_FILE=f: the API process's output of flood X
 * written to f.X (e.g. with API_NODE_OPTIONS=--trace-gc).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { getAddress } from "viem";
import { buildOnce } from "../test/support/build";
import { startServedIndex } from "../test/support/servedIndex";
import { loadAverage } from "./indexTimeTravel";
import { createRecordedIndex, type RecordedStatement } from "./recordedIndex";

const EVENTS = Number(process.argv[2] ?? 100_000);
const SAMPLES = Number(process.argv[3] ?? 300);
const ROUNDS = 5;
const SCHEMA = "bench_graphql";
const PAGE = 100;
const SILENT_SOCKETS = 50;
const PIPELINED = 4;
const HOLD_MS = 10_000;
/** How long another client's /health is measured before a flood: its baseline. */
const BASELINE_MS = 3_000;
const SAMPLE_EVERY_MS = 50;
/** RSS read this long after the sockets close. */
const AFTER_MS = [5_000, 10_000, 15_000];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const load = () => `load average ${loadAverage()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(0)} MB`;

buildOnce();
const served = await startServedIndex({
  serverUrl: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  schema: SCHEMA,
  synthetic: { events: EVENTS, owners: Math.max(50, Math.round(EVENTS / 1_000)), seed: 31 },
  env: { RATE_LIMIT_MAX: "1000000", NODE_OPTIONS: process.env.API_NODE_OPTIONS },
});
const PARTS = new Set((process.env.GRAPHQL_PAGE_PARTS ?? "1,2,2b,2c").split(","));
const recorded = createRecordedIndex(served.databaseUrl, SCHEMA);
try {
  const { index } = served;
  // The API process; each flood starts a fresh one (what one flood leaves in memory would count against the next).
  let { pid, url: base } = served.api;

  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  const byCount = [...counts].sort((a, b) => b[1] - a[1]).map(([a, n]) => [getAddress(a), n] as const);
  const eventsOf = new Map(byCount);
  const busiest = byCount.slice(0, 100).map(([a]) => a);
  const FIELDS =
    "kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei listed blockNumber blockTimestamp txHash logIndex";
  const graphqlBody = (a: string, limit = PAGE) =>
    JSON.stringify({ query: `{ lockEvents(where: { account: "${a}" }, limit: ${limit}) { items { ${FIELDS} } } }` });
  const viaGraphql = async (a: string) => {
    const res = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: graphqlBody(a),
    });
    const body = (await res.json()) as { errors?: unknown };
    if (res.status !== 200 || body.errors) throw new Error(`graphql: ${res.status} ${JSON.stringify(body)}`);
  };
  const viaRest = async (a: string) => {
    const res = await fetch(`${base}/api/index/v1/accounts/${a}/events?limit=${PAGE}`);
    await res.json();
    if (res.status !== 200) throw new Error(`rest: ${res.status}`);
  };
  // The statement both routes read a page with: the lock index's events read at the head, one row more than the page
  // (whether a next page exists), recorded once per account and replayed bare.
  const statements = new Map<string, RecordedStatement[]>();
  for (const a of busiest) {
    recorded.take();
    const read = await recorded.reader.events({ account: a }, null, { limit: PAGE + 1, after: null });
    if (read.value.length !== PAGE + 1) throw new Error(`${a}: ${read.value.length} events, not a full page`);
    statements.set(a, recorded.take());
  }
  const viaBare = (a: string) => recorded.bare(statements.get(a)!);
  const viaPrepared = (a: string) => recorded.bare(statements.get(a)!, { prepared: true });

  // ------------------------------------------------------------------ 1. a page: GraphQL, REST, bare SQL
  const rssStart = rssMb(pid);
  const fdStart = descriptors(pid);
  const warmUp = async (calls: ((a: string) => Promise<void>)[]) => {
    for (const a of busiest.slice(0, 20)) for (const call of calls) await call(a);
  };
  await warmUp([viaGraphql, viaRest, viaBare, viaPrepared]);
  console.log(
    `synthetic index: ${index.events.length} events, ${counts.size} accounts (busiest ${byCount[0]![1]}, ` +
      `100th ${byCount[99]![1]} events); ${load()}`,
  );
  const sides = [
    { name: "GraphQL", call: viaGraphql, ms: [] as number[] },
    { name: "REST", call: viaRest, ms: [] as number[] },
    { name: "bare SQL", call: viaBare, ms: [] as number[] },
    // The same statement prepared, as the API process sends it. Sent unnamed, Postgres plans it for the account each
    // time and, at ~1,000 events an account, reads all of them and sorts (a bitmap scan, ≈ 5.5 ms in EXPLAIN ANALYZE);
    // the prepared statement's generic plan walks lock_event_account_idx backward to the limit (≈ 1.8 ms). This one
    // is the floor.
    { name: "bare SQL, prepared", call: viaPrepared, ms: [] as number[] },
  ];
  type Side = (typeof sides)[0];
  const [gq, rest, bare, prepared] = sides as [Side, Side, Side, Side];
  const rounds = {
    gqRest: [] as number[],
    gqBare: [] as number[],
    restBare: [] as number[],
    gqPrepared: [] as number[],
    restPrepared: [] as number[],
  };
  const perRound = PARTS.has("1") ? Math.floor(SAMPLES / ROUNDS) : 0;
  for (let i = 0; i < perRound * ROUNDS; i++) {
    const a = busiest[i % busiest.length]!;
    // Rotate which goes first, so none always meets a warmer cache or a quieter moment.
    for (let k = 0; k < sides.length; k++) {
      const side = sides[(i + k) % sides.length]!;
      const t = performance.now();
      await side.call(a);
      side.ms.push(performance.now() - t);
    }
    if ((i + 1) % perRound === 0) {
      const p50 = (s: Side) => pct(s.ms.slice(-perRound), 50);
      rounds.gqRest.push(p50(gq) / p50(rest));
      rounds.gqBare.push(p50(gq) / p50(bare));
      rounds.restBare.push(p50(rest) / p50(bare));
      rounds.gqPrepared.push(p50(gq) / p50(prepared));
      rounds.restPrepared.push(p50(rest) / p50(prepared));
    }
  }
  const ratio = (xs: number[]) => ({ median: pct(xs, 50), min: Math.min(...xs), max: Math.max(...xs) });
  const gqRest = ratio(rounds.gqRest);
  const gqBare = ratio(rounds.gqBare);
  const restBare = ratio(rounds.restBare);
  const gqPrepared = ratio(rounds.gqPrepared);
  const restPrepared = ratio(rounds.restPrepared);
  const show = (r: ReturnType<typeof ratio>) =>
    `${r.median.toFixed(2)}× (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
  if (PARTS.has("1")) {
    console.log(
      `\n1. an account's ${PAGE}-event page, ${perRound * ROUNDS} each, sequential, interleaved (median of ${ROUNDS} ` +
        `rounds' p50 ratios); ${load()}`,
    );
    for (const s of sides) {
      console.log(`   ${s.name.padEnd(18)} p50 ${pct(s.ms, 50).toFixed(2)} ms, p99 ${pct(s.ms, 99).toFixed(2)} ms`);
    }
    console.log(`   GraphQL / REST ${show(gqRest)}; GraphQL / bare ${show(gqBare)}; REST / bare ${show(restBare)}`);
    console.log(`   GraphQL / bare prepared ${show(gqPrepared)}; REST / bare prepared ${show(restPrepared)}`);
    console.log(
      `   API process: RSS ${rssStart.toFixed(0)} → ${rssMb(pid).toFixed(0)} MB, descriptors ${fdStart} → ${descriptors(pid)}`,
    );
  }

  // ------------------------------------------------------------------ 2. clients that never read
  /** Another client's /health, one request at a time, for `ms`. */
  async function health(ms: number): Promise<{ ms: number[]; failed: number }> {
    const out: number[] = [];
    let failed = 0;
    const until = performance.now() + ms;
    while (performance.now() < until) {
      const t = performance.now();
      try {
        const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) });
        await res.text();
        if (res.status !== 200) failed++;
      } catch {
        failed++;
      }
      out.push(performance.now() - t);
      await sleep(20);
    }
    return { ms: out, failed };
  }

  /** The API process's V8 heap in use and the memory outside it (prom-client's gauges on /api/metrics), MB. */
  async function heap(): Promise<{ used: number; external: number }> {
    const text = await (await fetch(`${base}/api/metrics`)).text();
    const gauge = (name: string) =>
      Number(/\s(\S+)$/.exec(text.split("\n").find((l) => l.startsWith(`${name} `)) ?? " 0")![1]);
    return {
      used: gauge("nodejs_heap_size_used_bytes") / 2 ** 20,
      external: gauge("nodejs_external_memory_bytes") / 2 ** 20,
    };
  }

  type Flood = { label: string; p99: number; baselineP99: number; rssBefore: number; peak: number; after15: number };
  /** Sockets that each pipeline PIPELINED of `bodies` (in order) and never read, held HOLD_MS, then closed. */
  async function flood(label: string, what: string, bodies: string[], fresh = true): Promise<Flood> {
    if (fresh) {
      ({ pid, url: base } = await served.restartApi());
      await warmUp([viaGraphql, viaRest]);
    }
    const quiet = await health(BASELINE_MS);
    const rssBefore = rssMb(pid);
    const heapBefore = await heap();
    const fdBefore = descriptors(pid);
    const samples: { rss: number; fd: number }[] = [];
    const sampler = setInterval(() => {
      try {
        samples.push({ rss: rssMb(pid), fd: descriptors(pid) });
      } catch {} // the process gone: the figures below say so by their absence
    }, SAMPLE_EVERY_MS);
    const { port } = new URL(base);
    const sockets: net.Socket[] = [];
    for (let i = 0; i < SILENT_SOCKETS; i++) {
      const s = net.connect({ host: "127.0.0.1", port: Number(port), localAddress: `127.0.1.${(i % 200) + 1}` });
      s.on("error", () => {});
      s.pause(); // never reads
      const mine = bodies.slice(i * PIPELINED, (i + 1) * PIPELINED);
      s.write(
        mine
          .map(
            (b) =>
              `POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
              `content-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`,
          )
          .join(""),
      );
      sockets.push(s);
    }
    const floodAt = Date.now();
    const during = await health(HOLD_MS);
    const duringSamples = samples.length;
    const open = sockets.filter((s) => !s.destroyed).length;
    for (const s of sockets) s.destroy();
    const closedAt = performance.now();
    if (process.env.API_LOG_FILE) console.log(`   (flood ${floodAt} → ${Date.now()} ms since the epoch)`);
    const after: { rss: number; fd: number }[] = [];
    for (const mark of AFTER_MS) {
      await sleep(closedAt + mark - performance.now());
      after.push({ rss: rssMb(pid), fd: descriptors(pid) });
    }
    const heapAfter = await heap();
    clearInterval(sampler);
    if (process.env.API_LOG_FILE) writeFileSync(`${process.env.API_LOG_FILE}.${label}`, served.api.log());
    const peakRss = Math.max(rssBefore, ...samples.map((s) => s.rss));
    const peakFd = Math.max(fdBefore, ...samples.map((s) => s.fd));
    const p = (h: { ms: number[] }, q: number) => pct(h.ms, q).toFixed(1);
    console.log(
      `\n${label}. ${what}: ${SILENT_SOCKETS} sockets × ${PIPELINED} pipelined, never read, ${HOLD_MS / 1000} s; ${load()}\n` +
        `   API process RSS ${rssBefore.toFixed(0)} MB → peak ${mb(peakRss - rssBefore)} (sampled every ` +
        `${SAMPLE_EVERY_MS} ms: ${duringSamples} during, ${samples.length} in all); after the sockets closed ` +
        `${AFTER_MS.map((m, i) => `${m / 1000} s ${mb(after[i]!.rss - rssBefore)}`).join(", ")}\n` +
        `   V8 heap in use ${heapBefore.used.toFixed(0)} → ${heapAfter.used.toFixed(0)} MB, external memory ` +
        `${heapBefore.external.toFixed(0)} → ${heapAfter.external.toFixed(0)} MB ${AFTER_MS.at(-1)! / 1000} s after ` +
        `(what RSS keeps beyond these is freed memory the process has not handed back)\n` +
        `   descriptors ${fdBefore} → peak ${peakFd} → ${after.at(-1)!.fd} ${AFTER_MS.at(-1)! / 1000} s after; ` +
        `sockets still open at the end ${open}/${SILENT_SOCKETS}\n` +
        `   another client's /health: before p50 ${p(quiet, 50)} p99 ${p(quiet, 99)} ms (${quiet.ms.length}), during ` +
        `p50 ${p(during, 50)} p99 ${p(during, 99)} ms (${during.ms.length}, ${during.failed} failed): p99 ` +
        `${(pct(during.ms, 99) / pct(quiet.ms, 99)).toFixed(1)}× its baseline, p50 ` +
        `${(pct(during.ms, 50) / pct(quiet.ms, 50)).toFixed(1)}×`,
    );
    return {
      label,
      p99: pct(during.ms, 99),
      baselineP99: pct(quiet.ms, 99),
      rssBefore,
      peak: peakRss - rssBefore,
      after15: after.at(-1)!.rss - rssBefore,
    };
  }

  const requests = SILENT_SOCKETS * PIPELINED;
  const rows = (asked: [string, number][]) =>
    asked.reduce((n, [a, limit]) => n + Math.min(limit, eventsOf.get(a as `0x${string}`) ?? 0), 0);
  const same: [string, number][] = Array.from({ length: requests }, () => [busiest[0]!, 1_000]);
  // Every request its own (account, limit): the busiest accounts in turn, limits 1,000 down.
  const distinct: [string, number][] = Array.from({ length: requests }, (_, i) => [
    byCount[i % byCount.length]![0],
    1_000 - i,
  ]);
  if (new Set(distinct.map(([a, n]) => `${a}/${n}`)).size !== requests) throw new Error("2b: a query repeats");
  const floods: Flood[] = [];
  const bodiesOf = (asked: [string, number][]) => asked.map(([a, n]) => graphqlBody(a, n));
  if (PARTS.has("2"))
    floods.push(
      await flood(
        "2",
        `the same query ${requests} times (${byCount[0]![0].slice(0, 10)}…, limit 1000; ${rows(same)} rows asked)`,
        same.map(([a, n]) => graphqlBody(a, n)),
      ),
    );
  if (PARTS.has("2b"))
    floods.push(
      await flood(
        "2b",
        `${requests} different queries (${new Set(distinct.map(([a]) => a)).size} accounts, limits ` +
          `${distinct.at(-1)![1]}–1000; ${rows(distinct)} rows asked)`,
        bodiesOf(distinct),
      ),
    );
  // 2c, 2d. the same flood again on the same process, twice: what 2b left in RSS is mostly reused; the process
  // levels off (no leak).
  if (PARTS.has("2b") && PARTS.has("2c"))
    for (const label of ["2c", "2d"]) {
      floods.push(await flood(label, "2b again on the same process, 15 s after the last", bodiesOf(distinct), false));
    }

  console.log("");
  if (PARTS.has("1"))
    console.log(
      `figure: GraphQL page / bare SQL p50 = ${show(gqBare)}, REST / bare ${show(restBare)}; over the bare statement ` +
        `prepared: GraphQL ${show(gqPrepared)}, REST ${show(restPrepared)}`,
    );
  for (const f of floods) {
    console.log(
      `figure: ${f.label}. another client's /health p99 during the flood = ${f.p99.toFixed(1)} ms ` +
        `(${(f.p99 / f.baselineP99).toFixed(1)}× its ${f.baselineP99.toFixed(1)} ms before; goal ≤ 50 ms); ` +
        `RSS peak ${mb(f.peak)}, ${mb(f.after15)} 15 s after`,
    );
  }
  const first = floods.find((f) => f.label === "2b");
  for (const f of floods.filter((x) => x.label === "2c" || x.label === "2d")) {
    if (!first) break;
    console.log(
      `figure: ${f.label}. RSS 15 s after it ${mb(f.rssBefore + f.after15 - first.rssBefore)} over the process before ` +
        `2b (2b left ${mb(first.after15)}); this flood added ${mb(f.after15)}`,
    );
  }
  // Last: the line `npm run bench` prints as this bench's figure.
  if (PARTS.has("1")) console.log(`figure: GraphQL page / REST page p50 = ${show(gqRest)} (goal ≤ 1.5); ${load()}`);
} finally {
  await recorded.end();
  await served.stop();
}
