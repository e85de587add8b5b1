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
import { GRAPHQL_LIMITS } from "../graphql/limits";
import { type GraphqlIndex, graphqlIndexOnPool } from "../graphql/source";
import { createLockStore } from "../locks/store";
import type { LockStore } from "../locks/types";
import { IndexWatermark } from "../locks/watermark";
import { boundedReadiness } from "./readiness";

export const INDEX_DB_TIMEOUTS = { connectMs: 500, statementMs: 2_000, queryMs: 2_500 } as const;

/**
 * GraphQL's pool: its own, so a burst of heavy queries waits for these connections and never for the state
 * route's. Each connection reads the views schema unqualified (Ponder's resolvers name tables bare) and ends
 * any statement at the request's time limit; a transaction left open by a stalled process ends too.
 */
export const GRAPHQL_POOL = { size: 4, idleInTransactionMs: 5_000 } as const;

export type IndexDatabase = {
  store: LockStore;
  /** Where /graphql reads: its own pool on the same schema (api/graphql/source.ts). */
  graphql: GraphqlIndex;
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
  });
  // A dropped idle connection must not crash the process; the next query opens a new one.
  pool.on("error", () => {});
  const db = drizzle(pool);
  // The per-request statement goes prepared straight to the pool (api/locks/store.ts: CreateLockStoreOptions).
  const store = createLockStore({ db, schema: options.schema, prepared: (statement) => pool.query(statement) });
  const watermark = new IndexWatermark(() => store.indexMark()).start();
  const graphqlPool = new pg.Pool({
    connectionString: options.url,
    max: GRAPHQL_POOL.size,
    connectionTimeoutMillis: INDEX_DB_TIMEOUTS.connectMs,
    statement_timeout: GRAPHQL_LIMITS.timeoutMs,
    query_timeout: GRAPHQL_LIMITS.timeoutMs + 500,
    idle_in_transaction_session_timeout: GRAPHQL_POOL.idleInTransactionMs,
    idleTimeoutMillis: 30_000,
    options: `-c search_path=${quotedIdent(options.schema)}`,
  });
  graphqlPool.on("error", () => {});
  return {
    store,
    graphql: graphqlIndexOnPool(graphqlPool),
    watermark,
    readiness: boundedReadiness(async () => {
      const res = await db.execute(sql`SELECT to_regclass(${`"${options.schema}"."lock"`}) IS NOT NULL AS present`);
      return (res as unknown as { rows: { present: boolean }[] }).rows[0]?.present === true;
    }),
    close: async () => {
      await watermark.stop();
      await Promise.all([pool.end(), graphqlPool.end()]);
    },
  };
}

const quotedIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
