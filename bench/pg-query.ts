/**
 * What a statement costs the read model's runner (api/read/statements.ts, cancellableQuery: a connection of its own,
 * the request's signal heard) against the same runner handing node-postgres the statement as a config object, as it
 * did before: `client.query({ name, text, values })`, which pg copies through its property descriptors and answers
 * through a second promise. Both in this process on one pool of 8 over Postgres, 8 statements in flight; CPU a
 * statement (process.cpuUsage: this process, the pool's work included), ROUNDS rounds alternating which side goes
 * first, medians; the rows of both checked equal. This process's RSS is printed beside the figures.
 *
 * Usage: npx tsx bench/pg-query.ts [statementsPerRound=20000]
 */
import pg from "pg";
import { cancellableQuery, type Statement } from "../api/read/statements";
import { BENCH_PG_URL } from "./productionTopology";

const PER_ROUND = Number(process.argv[2] ?? 20_000);
const ROUNDS = 7;
const IN_FLIGHT = 8;

/** The runner as it was: the same connection handling, the statement handed over as a config object. */
function configQuery(pool: pg.Pool, statement: Statement, signal: AbortSignal): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    const cancel = () => reject(signal.reason);
    signal.addEventListener("abort", cancel, { once: true });
    pool.connect().then((c) => {
      c.query(statement).then(
        (result) => {
          signal.removeEventListener("abort", cancel);
          c.release();
          resolve(result);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", cancel);
          c.release();
          reject(error);
        },
      );
    }, reject);
  });
}

type Runner = (pool: pg.Pool, statement: Statement, signal: AbortSignal) => Promise<pg.QueryResult>;
const sides: Record<"config object" | "runner", Runner> = {
  "config object": configQuery,
  runner: (pool, statement, signal) => cancellableQuery(pool, statement, signal),
};

/** A statement of the read model's shape: named, three parameters, a bigint, a text and a time in the row. */
const statement = (i: number): Statement => ({
  name: "bench_pg_query",
  text: "select $1::int8 as token_id, $2::text as owner, to_timestamp($3::int8) as at",
  values: [String(i), "0xA07B087beED3DEcc271c2955545ace1cE4D6461f", 1_764_000_000 + (i % 1000)],
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function cpuPerStatement(pool: pg.Pool, run: Runner, n: number): Promise<number> {
  const signal = new AbortController().signal;
  const before = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next < n) await run(pool, statement(next++), signal);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const pool = new pg.Pool({ connectionString: BENCH_PG_URL, max: IN_FLIGHT });
try {
  const signal = new AbortController().signal;
  const [a, b] = [await configQuery(pool, statement(7), signal), await cancellableQuery(pool, statement(7), signal)];
  if (JSON.stringify(a.rows) !== JSON.stringify(b.rows) || a.fields.length !== b.fields.length)
    throw new Error(`the two sides answered differently: ${JSON.stringify(a.rows)} / ${JSON.stringify(b.rows)}`);
  for (const run of Object.values(sides)) await cpuPerStatement(pool, run, PER_ROUND / 4); // warm both
  const figures: Record<keyof typeof sides, number[]> = { "config object": [], runner: [] };
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = (round % 2 ? ["runner", "config object"] : ["config object", "runner"]) as (keyof typeof sides)[];
    const r: Partial<Record<keyof typeof sides, number>> = {};
    for (const side of order) r[side] = await cpuPerStatement(pool, sides[side], PER_ROUND);
    figures["config object"].push(r["config object"]!);
    figures.runner.push(r.runner!);
    ratios.push(r.runner! / r["config object"]!);
    console.log(
      `round ${round + 1}: config object ${r["config object"]!.toFixed(2)} µs, runner ${r.runner!.toFixed(2)} µs ` +
        `→ ${(r.runner! / r["config object"]!).toFixed(3)}`,
    );
  }
  console.log(
    `pg-query: CPU a statement, ${IN_FLIGHT} in flight, ${ROUNDS} rounds of ${PER_ROUND}: the runner ` +
      `${median(figures.runner).toFixed(2)} µs against a config object's ${median(figures["config object"]).toFixed(2)} µs ` +
      `(median ratio ${median(ratios).toFixed(3)}); this process's RSS ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MB`,
  );
} finally {
  await pool.end();
}
