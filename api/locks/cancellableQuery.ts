/**
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
import pg from "pg";
import type { CancelSignal } from "../chain/rpc";

/** How often a backend running our query checks that we are still connected (Postgres's setting, in ms). */
export const CLIENT_CONNECTION_CHECK_MS = 250;

/**
 * The setting every connection of the per-request pool starts with (see the file comment), as a startup option
 * (`-c`, pg's `options`): in force before the connection's first statement, with no statement of our own.
 * Postgres 13 and older do not know it and refuse the connection ("unrecognized configuration parameter").
 */
export const CONNECTION_CHECK_OPTION = `-c client_connection_check_interval=${CLIENT_CONNECTION_CHECK_MS}`;

/** The query was cancelled by its signal; nothing of its result is known. */
export class QueryCancelledError extends Error {
  override name = "QueryCancelledError";
  constructor() {
    super("index query cancelled: its request was abandoned");
  }
}

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
    return Promise.reject(new QueryCancelledError());
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
      client?.release(new QueryCancelledError());
      reject(new QueryCancelledError());
    }
    signal.addEventListener("abort", cancel, { once: true });
    pool.connect().then(
      (c) => {
        if (settled) {
          c.release(); // cancelled while waiting for it: back to the pool, unused
          return;
        }
        client = c;
        c.query(statement).then(
          (result) => {
            if (settled) return;
            settle();
            c.release();
            resolve(result);
          },
          (error: unknown) => {
            if (settled) return; // the connection was destroyed by cancel(); this is its echo
            settle();
            // A connection that failed mid-query is not trusted again; an SQL error leaves it usable.
            c.release(isConnectionFailure(error) ? (error as Error) : undefined);
            reject(error);
          },
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

/** A failure of the connection (a socket error, a client-side timeout) rather than an error the server reported. */
function isConnectionFailure(error: unknown): boolean {
  return !(error instanceof pg.DatabaseError);
}
