/**
 * The duration boards' statement against history length (issue 31, items 6 and 8 — a first measurement, not the
 * issue's full benchmark): two synthetic board indexes in Postgres with the same event rate and the same 100,000
 * accounts, one of L days and one of 10 L days (the longer ≥ 1,000,000 events), each written to the tables the
 * indexer maintains (board_entry, board_hour, board_total: Ponder's own DDL for ponder.schema.ts). For each window the
 * statement that computes a block's ranking (api/read/atBlock.ts board) is timed at the head, median of `runs`, and
 * the long history's time is printed as a ratio of the short one's, measured in the same run.
 *
 * Usage: DATABASE_URL=… npm run bench:boards:history -- [days=30] [eventsPerDay=3400] [runs=5]
 *
 * Recorded 2026-11-26 (shared 2-core machine, other helpers' tests running): 102,000 vs 1,020,000 events, 100,000
 * accounts; long / short at the head: 24h 1.28 (24 vs 31 ms), 7d 0.90 (137 vs 123 ms), 30d 1.02 (382 vs 390 ms),
 * lifetime 1.15 (381 vs 437 ms: 64k vs 100k accounts ranked).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createLockIndex } from "../api/read/atBlock";
import { BOARD_WINDOWS, type BoardWindow } from "../api/read/contract";
import * as ponderSchema from "../ponder.schema";
import { aggregateBoardEntries } from "../test/support/boardAggregates";
import { createTestDatabase } from "../test/support/ponder";
import { META_DDL } from "../test/support/syntheticIndex";

const [days = 30, perDay = 3_400, runs = 5] = process.argv.slice(2).map(Number);
const ACCOUNTS = 100_000;
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const server = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const database = await createTestDatabase(server);
if (database.kind !== "postgres") throw new Error("bench/boards-history.ts measures Postgres");

const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
  getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
};
const ddl = kit.getSql({
  lockEvent: ponderSchema.lockEvent,
  boardEntry: ponderSchema.boardEntry,
  boardHour: ponderSchema.boardHour,
  boardTotal: ponderSchema.boardTotal,
});
const HEAD_TIME = 1_800_000_000;
const checkpoint = (time: number, block: number) =>
  `${String(time).padStart(10, "0")}${"8453".padStart(16, "0")}${String(block).padStart(16, "0")}${"9".repeat(16)}5${"0".repeat(16)}`;

/** A schema holding `historyDays` of takeover-eth contributions at `perDay`, spread over ACCOUNTS accounts. */
async function build(schema: string, historyDays: number) {
  const url = (database.forPonder(schema) as { url: string }).url;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}"; SET search_path TO "${schema}"`);
  for (const t of ddl.tables.sql.filter((s) => !s.includes('"_reorg__'))) await c.query(t);
  await c.query(`CREATE TABLE "_ponder_checkpoint" ("chain_name" text PRIMARY KEY, "chain_id" bigint NOT NULL,
    "safe_checkpoint" varchar(75) NOT NULL, "latest_checkpoint" varchar(75) NOT NULL, "finalized_checkpoint" varchar(75) NOT NULL)`);
  for (const ddl of META_DDL) await c.query(ddl);
  const n = historyDays * perDay;
  const step = (historyDays * 86_400) / n;
  const t0 = performance.now();
  await c.query(
    `INSERT INTO board_entry (id, board, account, value, block_number, block_time)
     SELECT 'e' || i, 'takeover-eth', '0x' || lpad(to_hex((hashint4(i) & 2147483647) % ${ACCOUNTS}), 40, '0'),
            ((i % 997) + 1) * 1000000000000000, i, ${HEAD_TIME} - ${historyDays * 86_400} + floor(i * ${step})::bigint
       FROM generate_series(1, ${n}) i`,
  );
  await aggregateBoardEntries((text) => c.query(text));
  for (const i of ddl.indexes.sql) await c.query(i);
  const cp = checkpoint(HEAD_TIME, n);
  await c.query(`INSERT INTO "_ponder_checkpoint" VALUES ('base', 8453, $1, $1, $1)`, [cp]);
  await c.query("ANALYZE");
  const { rows } = await c.query("SELECT count(*)::int AS hours FROM board_hour");
  await c.end();
  console.log(
    `${schema}: ${n} events over ${historyDays} days, ${rows[0].hours} hour buckets, written in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return { url, head: BigInt(n) };
}

async function timeWindows(url: string, schema: string, head: bigint) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const index = createLockIndex({ db: drizzle(pool), schema });
  const out = new Map<BoardWindow, number>();
  for (const window of Object.keys(BOARD_WINDOWS) as BoardWindow[]) {
    const ms: number[] = [];
    let rows = 0;
    for (let r = 0; r < runs + 1; r++) {
      const t = performance.now();
      const a = await index.board("takeover-eth", window, { block: head, time: BigInt(HEAD_TIME) });
      if (r > 0) ms.push(performance.now() - t); // the first run warms the cache
      rows = a.value.length;
    }
    ms.sort((x, y) => x - y);
    out.set(window, ms[Math.floor(ms.length / 2)] as number);
    console.log(`  ${schema} ${window.padEnd(8)} ${rows} accounts ranked, median ${out.get(window)?.toFixed(1)} ms`);
  }
  await pool.end();
  return out;
}

try {
  const short = await build("bench_boards_short", days);
  const long = await build("bench_boards_long", days * 10);
  const a = await timeWindows(short.url, "bench_boards_short", short.head);
  const b = await timeWindows(long.url, "bench_boards_long", long.head);
  console.log("\nwindow    short ms  long ms  long / short (same event rate, 10x the history)");
  for (const w of Object.keys(BOARD_WINDOWS) as BoardWindow[]) {
    const x = a.get(w) as number;
    const y = b.get(w) as number;
    console.log(`${w.padEnd(9)} ${x.toFixed(1).padStart(8)} ${y.toFixed(1).padStart(8)}  ${(y / x).toFixed(2)}`);
  }
} finally {
  await database.drop();
}
