/**
 * The index API at scale (issue 23, 8): a synthetic index on Postgres (≥ 100,000 locks, ≥ 50,000 holders,
 * ≥ 500,000 events; test/support/syntheticIndex.ts, built by the indexer's own rules, tables and indexes from
 * ponder.schema.ts through Ponder's DDL generator), the whole app in process (`app.request`: routing, strict
 * parsing, the read, the JSON), and as the baseline in the same run the same SQL statements each route ran, sent
 * bare to the same pool two ways: unnamed (`pool.query(text, params)`: parsed and planned each time, as SQL sent by
 * hand) and prepared under the names the API process gives them (parsed and planned once per connection; the floor).
 *
 * Printed: per route p50 / p99 route vs bare; page 500 of the board vs page 1; 1,000 concurrent board requests in
 * one block vs computations; time travel to past blocks vs the head, interleaved round by round with the load average
 * (bench/indexTimeTravel.ts); the ranking's one computation vs its bare SQL.
 * The last line (the figure): the worst route/bare p50 ratio over the page routes (each the median of 5 rounds), over
 * the unnamed and over the prepared statements.
 * Usage: DATABASE_URL=… npx tsx bench/index-api.ts [events=520000] [samples=300] [travel rounds=7]
 * INDEX_API_DB=name: write the index into database `name` (created if missing) and keep it; a later run with the
 * same name and size reuses it (writing 520k events takes minutes), its indexes brought to ponder.schema.ts's.
 */
import pg from "pg";
import { createApp } from "../api/app";
import { loadConfig } from "../api/config";
import { silentLogger } from "../api/observability/logger";
import { CursorCodec, cursorKey, cursorList } from "../api/read/cursor";
import { VeBoards } from "../api/read/veBoard";
import { createTestDatabase } from "../test/support/ponder";
import {
  generateSyntheticIndex,
  syncSyntheticIndexes,
  syntheticIndexPresent,
  writeSyntheticIndex,
} from "../test/support/syntheticIndex";
import { loadAverage, routeTravel, type TravelRatio, wholeIndexTravel } from "./indexTimeTravel";
import { createRecordedIndex } from "./recordedIndex";

const EVENTS = Number(process.argv[2] ?? 520_000);
const SAMPLES = Number(process.argv[3] ?? 300);
/** Rounds of the time-travel comparison (each reads at the head and at every past block). */
const TRAVEL_ROUNDS = Number(process.argv[4] ?? 7);
const SCHEMA = "bench_index";
const START = 46_183_959n; // Base's VeLockNFT start block: the app runs with the base manifest.
const BASE = "/api/index/v1";
/** Rounds each page measurement is cut into; its figure is the median of their ratios. */
const PAGE_ROUNDS = 5;

const server = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const database = process.env.INDEX_API_DB
  ? await keptDatabase(server, process.env.INDEX_API_DB)
  : await createTestDatabase(server);
if (database.kind !== "postgres") throw new Error("bench/index-api.ts measures Postgres: set DATABASE_URL");
const url = (database.forPonder(SCHEMA) as { url: string }).url;
// The reader as the API process builds it (bench/recordedIndex.ts); every statement a request sends is recorded for
// the bare replay.
const recorded = createRecordedIndex(url, SCHEMA);
const { reader, pool } = recorded;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
/** A database kept across runs (INDEX_API_DB): created when missing, never dropped. */
async function keptDatabase(serverUrl: string, name: string) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error("INDEX_API_DB: a lower-case identifier");
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount === 0) await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${name}`;
  return { kind: "postgres" as const, forPonder: () => ({ url: dbUrl.toString() }), drop: async () => {} };
}
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1)).padStart(7);

try {
  // ---------------------------------------------------------------- the synthetic index
  let t0 = performance.now();
  const index = generateSyntheticIndex({ events: EVENTS, owners: 95_000, seed: 23, startBlock: START });
  const generatedMs = performance.now() - t0;
  t0 = performance.now();
  const writer = new pg.Client({ connectionString: url });
  await writer.connect();
  const query = (text: string, params?: unknown[]) => writer.query(text, params);
  if (await syntheticIndexPresent(query, SCHEMA, index)) {
    const { created, dropped } = await syncSyntheticIndexes(query, SCHEMA);
    console.log(`reusing the index in ${process.env.INDEX_API_DB}; indexes created ${created}, dropped ${dropped}`);
  } else {
    await writer.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await writeSyntheticIndex(query, SCHEMA, index, { finalizedLag: 30n });
  }
  await writer.end();
  const live = [...index.locks.values()].filter((l) => !l.burned);
  const holders = new Set(live.map((l) => l.owner)).size;
  console.log(
    `synthetic index: ${index.events.length} events, ${index.locks.size} locks (${live.length} live), ${holders} holders, ` +
      `blocks ${START}…${index.head.block}; generated in ${(generatedMs / 1000).toFixed(1)} s, written + indexed in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  if (EVENTS >= 500_000 && (index.locks.size < 100_000 || holders < 50_000)) {
    throw new Error("the synthetic index is below the issue's size (100k locks, 50k holders, 500k events)");
  }

  // ---------------------------------------------------------------- the app, over the recording reader
  const boards = new VeBoards({ load: (at) => reader.holders(at) });
  const base = loadConfig({ NETWORK: "base" });
  const app = createApp({
    config: { ...base, rateLimit: { max: 1e9, windowSec: 60 } },
    rpc: null,
    index: { atBlock: reader, boards: boards },
    logger: silentLogger,
  });
  const get = async (path: string) => {
    const res = await app.request(`${BASE}${path}`);
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };

  /**
   * Route and bare latencies over `paths` (cycled); bare replays the statements each request ran, right after it,
   * so a noisy moment of the machine falls on both sides alike (not on all of one side).
   */
  async function measure(name: string, paths: string[], samples = SAMPLES) {
    for (const p of paths.slice(0, 20)) {
      // warm-up: plans, pages, JIT, and the prepared statements on every pooled connection
      recorded.take();
      await get(p);
      const batch = recorded.take();
      for (let c = 0; c < 10; c++) await recorded.bare(batch, { prepared: true });
    }
    const route: number[] = [];
    const bare: number[] = [];
    const prepared: number[] = [];
    const rounds: number[] = [];
    const preparedRounds: number[] = [];
    const perRound = Math.max(1, Math.floor(samples / PAGE_ROUNDS));
    for (let i = 0; i < samples; i++) {
      recorded.take();
      let t = performance.now();
      await get(paths[i % paths.length] as string);
      route.push(performance.now() - t);
      const batch = recorded.take();
      // Bare: the same statements as plain queries (parsed and planned every time, as SQL sent by hand), and
      // prepared under the names the API process gives them (parsed and planned once per connection: the floor).
      t = performance.now();
      await recorded.bare(batch);
      bare.push(performance.now() - t);
      t = performance.now();
      await recorded.bare(batch, { prepared: true });
      prepared.push(performance.now() - t);
      if ((i + 1) % perRound === 0) {
        const from = i + 1 - perRound;
        const routeP50 = pct(route.slice(from), 50);
        rounds.push(routeP50 / Math.max(pct(bare.slice(from), 50), 1e-3));
        preparedRounds.push(routeP50 / Math.max(pct(prepared.slice(from), 50), 1e-3));
      }
    }
    // The figure: the median of the rounds' p50 ratios (a burst of the machine moves one round, not the figure).
    const ratio = pct(rounds, 50);
    const preparedRatio = pct(preparedRounds, 50);
    console.log(
      `${name.padEnd(34)} route p50 ${fmt(pct(route, 50))} p99 ${fmt(pct(route, 99))} ms | bare SQL p50 ` +
        `${fmt(pct(bare, 50))} p99 ${fmt(pct(bare, 99))} ms | ${ratio.toFixed(2)}× (median of ${rounds.length} rounds: ` +
        `${Math.min(...rounds).toFixed(2)}–${Math.max(...rounds).toFixed(2)}) | prepared p50 ${fmt(pct(prepared, 50))} ` +
        `p99 ${fmt(pct(prepared, 99))} ms | ${preparedRatio.toFixed(2)}× (${Math.min(...preparedRounds).toFixed(2)}–` +
        `${Math.max(...preparedRounds).toFixed(2)})`,
    );
    return { route, bare, ratio, preparedRatio };
  }

  const pick = <T>(xs: T[], n: number, seed = 1) => {
    const out: T[] = [];
    let a = seed;
    for (let i = 0; i < n; i++) {
      a = (a * 1103515245 + 12345) % 2 ** 31;
      out.push(xs[a % xs.length] as T);
    }
    return out;
  };
  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  const busiest = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 200)
    .map(([a]) => a);
  const tokenIds = pick([...index.locks.keys()], 200, 7);
  const owners = pick([...new Set(live.map((l) => l.owner as string))], 200, 9);
  // An old block: a tenth of the way in, a block with events (its time is in the index: no node needed).
  const old = index.events[Math.floor(index.events.length / 10)]!.blockNumber;

  console.log(
    `\nper route, ${SAMPLES} sequential requests each, at the head unless said (p50 / p99); load average ` +
      `${loadAverage()}:`,
  );
  const pages: { name: string; ratio: number; preparedRatio: number }[] = [];
  const page = async (name: string, paths: string[]) => pages.push({ name, ...(await measure(name, paths)) });
  await page(
    "GET /locks/{id}",
    tokenIds.map((id) => `/locks/${id}`),
  );
  await page(
    "GET /locks/{id}/events",
    tokenIds.map((id) => `/locks/${id}/events?limit=100`),
  );
  await page(
    "GET /accounts/{a}/events (busiest)",
    busiest.map((a) => `/accounts/${a}/events?limit=100`),
  );
  await page(
    "GET /accounts/{a}/locks",
    owners.map((a) => `/accounts/${a}/locks`),
  );

  // The board: computed once for the head block, then pages and ranks from memory.
  recorded.take();
  t0 = performance.now();
  const first = await get("/leaderboards/ve?limit=100");
  const computeMs = performance.now() - t0;
  const rankingStatement = recorded.take().find((s) => s.sql.includes("HAVING sum(ve) > 0"))!;
  const bareRanking: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await pool.query(rankingStatement.sql, rankingStatement.params);
    bareRanking.push(performance.now() - t);
  }
  const size = Number(first.holders);
  console.log(
    `ve ranking at the head: ${size} holders; first request (computes) ${computeMs.toFixed(0)} ms; the ranking's ` +
      `bare SQL p50 ${pct(bareRanking, 50).toFixed(0)} ms`,
  );
  const board = await boards.get({ block: index.head.block, time: index.head.time });
  const limit = 100;
  const page500 = Math.min(500, Math.floor(size / limit));
  const cursorAt = (p: number) => {
    const r = board.rows.get((p - 1) * limit - 1)!;
    return new CursorCodec(cursorKey(base)).encode({
      kind: "board",
      list: cursorList.ve,
      block: board.block,
      seal: null,
      after: { ve: r.ve, address: r.address },
    });
  };
  // The bare baseline of a board page: the same ranking statement cut to a page, as SQL alone would have to.
  const p1 = await measure("GET /leaderboards/ve page 1", ["/leaderboards/ve?limit=100"]);
  const p500 = await measure(`GET /leaderboards/ve page ${page500}`, [
    `/leaderboards/ve?limit=100&cursor=${cursorAt(page500)}`,
  ]);
  const ranks = await measure(
    "GET /leaderboards/ve/{a}",
    owners.map((a) => `/leaderboards/ve/${a}`),
  );
  const stats = await measure("GET /stats", ["/stats"]);
  const bareCut: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await pool.query(`${rankingStatement.sql} LIMIT 100`, rankingStatement.params);
    bareCut.push(performance.now() - t);
  }
  console.log(
    `board page 1 route p50 ${pct(p1.route, 50).toFixed(3)} ms vs a page of the ranking as bare SQL p50 ` +
      `${pct(bareCut, 50).toFixed(0)} ms; page ${page500} / page 1 = ${(pct(p500.route, 50) / pct(p1.route, 50)).toFixed(2)}× ` +
      `(keyset in the shared ranking, no OFFSET); rank lookup p50 ${pct(ranks.route, 50).toFixed(3)} ms; stats p50 ` +
      `${pct(stats.route, 50).toFixed(3)} ms (cached per block)`,
  );

  // 1,000 board requests in one (new) block: one computation.
  const fresh = new VeBoards({ load: (at) => reader.holders(at) });
  const shared = createApp({
    config: { ...base, rateLimit: { max: 1e9, windowSec: 60 } },
    rpc: null,
    index: { atBlock: reader, boards: fresh },
    logger: silentLogger,
  });
  t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: 1_000 }, (_, i) =>
      shared.request(
        `${BASE}${i % 2 ? "/leaderboards/ve?limit=100" : `/leaderboards/ve/${owners[i % owners.length]}`}`,
      ),
    ),
  );
  const allOk = answers.every((r) => r.status === 200);
  console.log(
    `1,000 concurrent board/rank requests in one block: ${fresh.computed} computation(s), all 200: ${allOk}, ` +
      `${(performance.now() - t0).toFixed(0)} ms in all`,
  );

  // Time travel: the same reads at past blocks and at the head, interleaved round by round (bench/indexTimeTravel.ts).
  console.log(`\ntime travel vs the head (median of per-round ratios; load average ${loadAverage()}):`);
  const travel: TravelRatio[] = [];
  for (const [name, route] of [
    ["GET /accounts/{a}/locks", (a: string) => `/accounts/${a}/locks`],
    ["GET /accounts/{a}/events", (a: string) => `/accounts/${a}/events?limit=100`],
  ] as const) {
    travel.push(await routeTravel(name, get, busiest.map(route), old, TRAVEL_ROUNDS));
  }
  travel.push(...(await wholeIndexTravel(reader, index, TRAVEL_ROUNDS)));
  const worstTravel = travel.reduce((a, b) => (b.ratio > a.ratio ? b : a));

  const worst = pages.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const worstPrepared = pages.reduce((a, b) => (b.preparedRatio > a.preparedRatio ? b : a));
  console.log(
    `\nfigure: worst page route / bare SQL p50 = ${worst.ratio.toFixed(2)}× (${worst.name}; goal ≤ 1.5); over the ` +
      `statements prepared ${worstPrepared.preparedRatio.toFixed(2)}× (${worstPrepared.name}); board page ` +
      `${page500}/1 = ${(pct(p500.route, 50) / pct(p1.route, 50)).toFixed(2)}×; 1,000 requests = ${fresh.computed} ` +
      `computation; time travel worst ${worstTravel.ratio.toFixed(2)}× (${worstTravel.name}; goal ≤ 3; load ${loadAverage()})`,
  );
} finally {
  await recorded.end();
  await database.drop();
}
