/**
 * The read model's one statement runner: every statement the index is read with goes through here — drizzle's
 * `execute` (rowsOf), a prepared statement on the pool (PreparedQuery, cancellable: cancellableQuery), each timed
 * into the metrics by name (timedQuery).
 *
 * A node-postgres query that a request's signal can cancel (its client hung up, its deadline or the index's budget
 * passed). node-postgres takes no AbortSignal, so the choice is how to stop the server's work:
 *
 * - pg_cancel_backend(pid) from a second connection needs a free connection exactly when the pool is the scarce
 *   thing, and races: the query may have finished and the connection gone back to the pool, so the cancel hits the
 *   next request's query on it;
 * - statement_timeout (already 2 s: api/server/indexDatabase.ts) bounds every query, but cannot hear a hang-up;
 * - chosen: the query runs on a connection of its own checked out of the pool, and a cancel destroys that connection
 *   (release with an error) instead of returning it. Nothing else ever used it, so nothing else can be hit. Postgres
 *   notices the closed socket while the query runs because every connection starts with
 *   client_connection_check_interval set (Postgres ≥ 14), so the backend stops within that interval. The cost is one
 *   new connection per cancelled query.
 *
 * A query still waiting for a pool slot when the signal fires is dropped from the wait: the connection, when it
 * comes, goes straight back unused.
 */

import type { sql } from "drizzle-orm";
import pg from "pg";
import type { CancelSignal } from "../chain/rpc";
import type { IndexQueryObserver, IndexStatement } from "../observability/indexDbMetrics";
import { QueryCancelledError } from "./contract";

/** How often a backend running our query checks that we are still connected (Postgres's setting, in ms). */
export const CLIENT_CONNECTION_CHECK_MS = 250;

/**
 * The setting every connection of the per-request pool starts with (see the file comment), as a startup option
 * (`-c`, pg's `options`): in force before the connection's first statement, with no statement of our own.
 * Postgres 13 and older do not know it and refuse the connection ("unrecognized configuration parameter").
 */
export const CONNECTION_CHECK_OPTION = `-c client_connection_check_interval=${CLIENT_CONNECTION_CHECK_MS}`;

export type Statement = { name: string; text: string; values: unknown[] };

/**
 * `statement` on `pool`, cancelled when `signal` fires first (rejects with QueryCancelledError; `onCancelled` is
 * called once). Without a signal, a plain pool.query.
 */
export function cancellableQuery(
  pool: pg.Pool,
  statement: Statement,
  signal: CancelSignal | undefined,
  onCancelled: () => void = () => {},
): Promise<pg.QueryResult> {
  if (!signal) return pool.query(statement);
  if (signal.aborted) {
    onCancelled();
    return Promise.reject(new QueryCancelledError(signal.reason));
  }
  return new Promise((resolve, reject) => {
    let client: pg.PoolClient | undefined;
    let settled = false;
    const settle = () => {
      settled = true;
      signal.removeEventListener("abort", cancel);
    };
    function cancel() {
      if (settled) return;
      settle();
      onCancelled();
      // Destroyed, not returned: the backend sees the socket close (client_connection_check_interval) and stops.
      client?.release(new QueryCancelledError(signal?.reason));
      reject(new QueryCancelledError(signal?.reason));
    }
    signal.addEventListener("abort", cancel, { once: true });
    pool.connect().then(
      (c) => {
        if (settled) {
          c.release(); // cancelled while waiting for it: back to the pool, unused
          return;
        }
        client = c;
        c.query(
          submittable(statement, (error, result) => {
            if (settled) return; // cancelled first: an error here is the echo of the connection cancel() destroyed
            settle();
            // pg answers a success with a null error (its types say undefined).
            if (!error) {
              c.release();
              resolve(result);
              return;
            }
            // A connection that failed mid-query is not trusted again; an SQL error leaves it usable.
            c.release(isConnectionFailure(error) ? error : undefined);
            reject(error);
          }),
        );
      },
      (error: unknown) => {
        if (settled) return;
        settle();
        reject(error);
      },
    );
  });
}

/**
 * `statement` as node-postgres's Query, answering `done`. `client.query({ name, text, values })` would copy the
 * object through its property descriptors (pg's cloneQueryConfig) and chain a second promise to rewrite a failure's
 * stack (bench/pg-query.ts measures the two). Made from the text, the constructor copies nothing; the name is the
 * Query's own field (pg's types leave it out), set before the query is sent.
 */
function submittable(
  statement: Statement,
  done: (error: Error | null | undefined, result: pg.QueryResult) => void,
): pg.Query {
  const query = new pg.Query(statement.text, statement.values, done);
  (query as pg.Query & { name: string }).name = statement.name;
  return query;
}

/** A failure of the connection (a socket error, a client-side timeout) rather than an error the server reported. */
function isConnectionFailure(error: unknown): boolean {
  return !(error instanceof pg.DatabaseError);
}

export type Row = Record<string, unknown>;

/** Any drizzle Postgres database (only `execute` is used): Ponder's read-only `db`, or drizzle over node-postgres,
 *  PGlite or pg-proxy. */
export type LockDb = { execute(query: ReturnType<typeof sql>): PromiseLike<unknown> };

/**
 * node-postgres's `pool.query` with a named statement: Postgres parses and plans the statement once per
 * connection, then only binds and runs it.
 */
export type PreparedQuery = (
  statement: { name: string; text: string; values: unknown[] },
  /** Cancels the query when it fires (api/read/statements.ts). */
  signal?: CancelSignal,
) => PromiseLike<{ rows: Row[] }>;

/** node-postgres and PGlite answer `{ rows }`; drizzle's pg-proxy answers the rows themselves. */
export async function rowsOf(db: LockDb, query: ReturnType<typeof sql>): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as { rows?: Row[] } | Row[];
  return Array.isArray(result) ? result : (result.rows ?? []);
}

/** `run`, its duration and outcome told to `onQuery` under `statement`. */
export async function timedQuery<T>(
  onQuery: IndexQueryObserver | undefined,
  statement: IndexStatement,
  run: () => PromiseLike<T>,
): Promise<T> {
  if (onQuery === undefined) return run();
  const started = performance.now();
  try {
    const value = await run();
    onQuery(statement, (performance.now() - started) / 1000, true);
    return value;
  } catch (error) {
    onQuery(statement, (performance.now() - started) / 1000, false);
    throw error;
  }
}
