/**
 * The lock index as the API process reads it: Ponder's tables through its views schema (`ponder start
 * --views-schema`), over a small bounded pg pool and drizzle (the store's queries are drizzle `sql`).
 * Every wait is bounded so a dead, silent or slow Postgres never holds a request or a probe: connecting
 * (connectionTimeoutMillis), a statement (statement_timeout, server side) and a query (query_timeout,
 * client side).
 */
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { ReadyState } from "../deps";
import { createLockIndex, type LockIndex } from "../locks/atBlock";
import { createLockStore } from "../locks/store";
import type { LockStore } from "../locks/types";
import { IndexWatermark } from "../locks/watermark";
import { boundedReadiness } from "./readiness";

export const INDEX_DB_TIMEOUTS = { connectMs: 500, statementMs: 2_000, queryMs: 2_500 } as const;
/**
 * The index API's whole-index statements (the ve ranking, the stats) run once per block and are shared by every
 * reader (api/index/blockMemo.ts); at 100,000 locks they take a few hundred ms to a few s (bench/index-api.ts), so
 * they get their own small pool with a longer timeout instead of stretching every request's.
 */
export const WHOLE_INDEX_DB = { connections: 2, statementMs: 15_000, queryMs: 16_000 } as const;
/**
 * Session settings of the index connections: these statements aggregate ~100k rows (in memory, not spilled to
 * disk at the 4 MB default), and JIT compilation costs more than it saves at this size (bench/index-api.ts).
 */
export const INDEX_DB_SESSION = "-c work_mem=64MB -c jit=off";

export type IndexDatabase = {
  store: LockStore;
  /** The index read at any block (the /api/index/v1 routes). */
  lockIndex: LockIndex;
  /** The store's mark, polled from the moment the database is opened (api/locks/watermark.ts). */
  watermark: IndexWatermark;
  /** /ready: the database answers within READY_PROBE_MS and the index's tables exist in the schema. */
  readiness(): Promise<ReadyState>;
  close(): Promise<void>;
};

export function openIndexDatabase(options: { url: string; schema: string; poolSize?: number }): IndexDatabase {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: INDEX_DB_TIMEOUTS.connectMs,
    statement_timeout: INDEX_DB_TIMEOUTS.statementMs,
    query_timeout: INDEX_DB_TIMEOUTS.queryMs,
    idleTimeoutMillis: 30_000,
    options: INDEX_DB_SESSION,
  });
  const wholePool = new pg.Pool({
    connectionString: options.url,
    max: WHOLE_INDEX_DB.connections,
    connectionTimeoutMillis: INDEX_DB_TIMEOUTS.connectMs,
    statement_timeout: WHOLE_INDEX_DB.statementMs,
    query_timeout: WHOLE_INDEX_DB.queryMs,
    idleTimeoutMillis: 30_000,
    options: INDEX_DB_SESSION,
  });
  // A dropped idle connection must not crash the process; the next query opens a new one.
  pool.on("error", () => {});
  wholePool.on("error", () => {});
  const db = drizzle(pool);
  // The per-request statement goes prepared straight to the pool (api/locks/store.ts: CreateLockStoreOptions).
  const store = createLockStore({ db, schema: options.schema, prepared: (statement) => pool.query(statement) });
  const watermark = new IndexWatermark(() => store.indexMark()).start();
  return {
    store,
    // Named prepared statements, as the store's per-request statement (parsed and planned once per connection).
    lockIndex: createLockIndex({
      db,
      schema: options.schema,
      prepared: (statement) => pool.query(statement),
      wholeIndex: ({ text, values }) => wholePool.query(text, values),
    }),
    watermark,
    readiness: boundedReadiness(async () => {
      const res = await db.execute(sql`SELECT to_regclass(${`"${options.schema}"."lock"`}) IS NOT NULL AS present`);
      return (res as unknown as { rows: { present: boolean }[] }).rows[0]?.present === true;
    }),
    close: async () => {
      await watermark.stop();
      await Promise.all([pool.end(), wholePool.end()]);
    },
  };
}
