/**
 * The bare-SQL baseline of the index benches (bench/index-api.ts, bench/graphql-page.ts): the lock index built as the
 * API process builds it (api/server/indexDatabase.ts: drizzle over a pool with the index session settings, each
 * per-request statement a named prepared statement, the whole-index ones on their own small pool), recording every
 * statement it sends, so a bench replays exactly those statements as bare SQL — never a hand-copied one that could
 * drift from what the routes run.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createLockIndex } from "../api/read/atBlock";
import type { LockIndex } from "../api/read/contract";
import { INDEX_DB_SESSION, WHOLE_INDEX_DB } from "../api/server/indexDatabase";

/** `name`: the per-request statements' prepared-statement name (the whole-index ones are sent unnamed). */
export type RecordedStatement = { sql: string; params: unknown[]; name?: string };

export type RecordedIndex = {
  reader: LockIndex;
  /** The per-request pool (10 connections, the API process's session settings). */
  pool: pg.Pool;
  /** The statements the reader sent since the last call, in order; forgets them. */
  take(): RecordedStatement[];
  /**
   * Sends `statements` one after another as plain queries: parsed and planned every time, as SQL sent by hand; with
   * `prepared`, under their names as the API process sends them (parsed and planned once per connection).
   */
  bare(statements: readonly RecordedStatement[], options?: { prepared?: boolean }): Promise<void>;
  end(): Promise<void>;
};

export function createRecordedIndex(url: string, schema: string): RecordedIndex {
  const pool = new pg.Pool({ connectionString: url, max: 10, options: INDEX_DB_SESSION });
  const wholePool = new pg.Pool({ connectionString: url, max: WHOLE_INDEX_DB.connections, options: INDEX_DB_SESSION });
  let ran: RecordedStatement[] = [];
  const reader = createLockIndex({
    db: drizzle(pool),
    schema,
    prepared: (st) => {
      ran.push({ sql: st.text, params: st.values, name: st.name });
      return pool.query(st);
    },
    wholeIndex: (st) => {
      ran.push({ sql: st.text, params: st.values });
      return wholePool.query(st.text, st.values);
    },
  });
  return {
    reader,
    pool,
    take() {
      const taken = ran;
      ran = [];
      return taken;
    },
    async bare(statements, options = {}) {
      for (const s of statements) {
        if (options.prepared && s.name) await pool.query({ name: s.name, text: s.sql, values: s.params });
        else await pool.query(s.sql, s.params);
      }
    },
    async end() {
      await pool.end();
      await wholePool.end();
    },
  };
}
