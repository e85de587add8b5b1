/**
 * What the webhook store runs its statements on: one small interface with two makers, so the same SQL serves the API
 * process (a pg pool on DATABASE_URL, shared by every replica: the outbox is the database's) and the local stack
 * (`npm start`: an in-process PGlite database of the store's own, beside Ponder's, in the PGLITE_DIR of the run).
 */
import pg from "pg";

export type Row = Record<string, unknown>;

export type Sql = {
  query<T extends Row = Row>(text: string, values?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction (BEGIN … COMMIT; ROLLBACK when it throws). */
  transaction<T>(work: (tx: Pick<Sql, "query">) => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

/** A pool of at most `max` connections, each statement bounded (a silent database never holds the worker forever). */
export function pgSql(url: string, max = 3): Sql {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: "webhooks",
    connectionTimeoutMillis: 2_000,
    statement_timeout: 10_000,
    query_timeout: 12_000,
    idleTimeoutMillis: 30_000,
  });
  // A dropped idle connection must not crash the process; the next statement opens a new one.
  pool.on("error", () => {});
  return {
    async query<T extends Row>(text: string, values?: unknown[]) {
      return (await pool.query(text, values)).rows as T[];
    },
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const value = await work({
          query: async <T extends Row>(text: string, values?: unknown[]) =>
            (await client.query(text, values)).rows as T[],
        });
        await client.query("COMMIT");
        return value;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** What the store needs of a PGlite instance (@electric-sql/pglite's PGlite has it). */
export type PgliteLike = {
  query<T>(text: string, values?: unknown[]): Promise<{ rows: T[] }>;
  transaction<T>(
    work: (tx: { query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }> }) => Promise<T>,
  ): Promise<T | undefined>;
  close(): Promise<void>;
};

/** One in-process database: one connection, so SKIP LOCKED never skips, and one process is all there is. */
export function pgliteSql(db: PgliteLike): Sql {
  return {
    async query<T extends Row>(text: string, values?: unknown[]) {
      return (await db.query<T>(text, values)).rows;
    },
    transaction: async <T>(work: (tx: Pick<Sql, "query">) => Promise<T>) =>
      (await db.transaction((tx) =>
        work({
          query: async <R extends Row>(text: string, values?: unknown[]) => (await tx.query<R>(text, values)).rows,
        }),
      )) as T,
    close: () => db.close(),
  };
}
