/**
 * Query time of the lock store's liveLocksOf for an owner with 32 live locks among 100,000 rows, against a
 * primary-key lookup of one row through the same store path (drizzle `execute`, same driver, same table), in
 * the same run. The table and its index are created from ponder.schema.ts by Ponder's own DDL generator, in a
 * fresh database: PGlite, or Postgres when DATABASE_URL is set. Rows: ~4,000 owners with ~20 locks each, a fifth
 * burned (no owner), the measured owner's 32 locks spread over the whole token-id range.
 * The figure: median liveLocksOf time / median PK lookup time. Usage: npx tsx bench/lockstore-query.ts [rounds=5]
 */
import path from "node:path";
import { sql } from "ponder";
import { createLockStore } from "../api/read/store";
import * as schema from "../ponder.schema";
import { createTestDatabase, openIndexDb, REPO_ROOT } from "../test/support/ponder";

const ROUNDS = Math.min(Math.max(Number(process.argv[2] ?? 5), 1), 20);
const PER_ROUND = 300;
const ROWS = 100_000;
const SCHEMA = "bench";
const OWNER = `0x${"ab".repeat(20)}` as const;

// Ponder's DDL generator (what `ponder start` runs to create the tables); not in the package's exports map.
const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
  getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
};
const ddl = kit.getSql({ lock: schema.lock });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const database = await createTestDatabase();
const target = database.forPonder(SCHEMA);
const idx = await openIndexDb(target);
try {
  await idx.query(`CREATE SCHEMA ${SCHEMA}`);
  // The generator emits `lock` and its reorg shadow table; the benchmark needs only `lock` and its index.
  const [createLock] = ddl.tables.sql.filter((s) => s.includes('CREATE TABLE "lock"'));
  if (!createLock) throw new Error("no CREATE TABLE lock in Ponder's DDL");
  await idx.query(createLock);
  for (const statement of ddl.indexes.sql) await idx.query(statement);

  const t0 = Date.now();
  // Token ids 1..ROWS. Every 3,125th token (32 of them) belongs to OWNER; every 5th other one is burned.
  await idx.query(`
    INSERT INTO lock
    SELECT g,
      CASE WHEN g % 3125 = 0 THEN '${OWNER}' WHEN g % 5 = 0 THEN NULL ELSE '0x' || lpad(to_hex(g % 4099), 40, '0') END,
      CASE WHEN g % 3125 <> 0 AND g % 5 = 0 THEN 0 ELSE (1000 + g % 977)::numeric * 1000000000000000000 END,
      CASE WHEN g % 3125 <> 0 AND g % 5 = 0 THEN 0 ELSE 1800000000 + g END,
      g % 7 = 0 AND (g % 3125 = 0 OR g % 5 <> 0),
      g % 3125 <> 0 AND g % 5 = 0,
      g / 10, 1700000000 + g, g / 10, 1700000000 + g
    FROM generate_series(1, ${ROWS}) AS g`);
  await idx.query("ANALYZE lock");
  console.log(`${ROWS} rows inserted in ${((Date.now() - t0) / 1000).toFixed(1)} s (${database.kind})`);

  const store = createLockStore({ db: idx.db, schema: SCHEMA });
  const locks = await store.liveLocksOf(OWNER);
  const expected = Array.from({ length: 32 }, (_, i) => BigInt((i + 1) * 3125));
  if (JSON.stringify(locks.map((l) => String(l.tokenId))) !== JSON.stringify(expected.map(String))) {
    throw new Error(`liveLocksOf returned ${locks.length} locks, not the owner's 32 in token-id order`);
  }
  const plan = await idx.query<{ "QUERY PLAN": string }>(
    `EXPLAIN SELECT token_id, amount, lock_end, auto_max FROM lock WHERE owner = '${OWNER}' AND NOT burned AND amount > 0 ORDER BY token_id`,
  );
  console.log(`plan: ${plan.map((p) => p["QUERY PLAN"].trim()).join(" | ")}`);

  const pk = (tokenId: number) =>
    idx.db.execute(
      sql`SELECT token_id, amount, lock_end, auto_max FROM ${sql.identifier(SCHEMA)}.${sql.identifier("lock")} WHERE token_id = ${tokenId}`,
    );
  const time = async (fn: (i: number) => PromiseLike<unknown>) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PER_ROUND; i++) await fn(i);
    return Number(process.hrtime.bigint() - start) / 1e6 / PER_ROUND;
  };
  // Warm-up: plans cached, pages in memory, JIT settled.
  await time(() => store.liveLocksOf(OWNER));
  await time((i) => pk(1 + ((i * 7919) % ROWS)));

  const live: number[] = [];
  const lookup: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    live.push(await time(() => store.liveLocksOf(OWNER)));
    lookup.push(await time((i) => pk(1 + ((i * 7919 + round) % ROWS))));
  }
  const [l, p] = [median(live), median(lookup)];
  console.log(
    `lock store liveLocksOf (32 live locks among ${ROWS} rows, ${database.kind}): ${l.toFixed(3)} ms/query vs ` +
      `primary-key lookup ${p.toFixed(3)} ms → ratio ${(l / p).toFixed(2)}`,
  );
} finally {
  await idx.close();
  await database.drop();
}
