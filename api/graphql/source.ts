/**
 * Where GraphQL reads the index, one request at a time:
 * - the API process: a small pool of its own on the views schema (api/server/indexDatabase.ts), each request
 *   one REPEATABLE READ, READ ONLY transaction — so `_meta`'s block and every row of the answer are of one
 *   snapshot (Ponder commits a block's rows with its checkpoint) — on one connection, given up the moment the
 *   request's deadline passes (its statements fail at once instead of running on for nobody);
 * - `npm start`: Ponder's own `db` (PGlite, one session shared with the indexer), statement by statement.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { GRAPHQL_TABLES, type IndexDrizzle } from "./ponderSchema";

/** What a read of an abandoned request fails with (the endpoint answered QUERY_TIMEOUT already). */
export class DeadlinePassedError extends Error {
  override name = "DeadlinePassedError";
  constructor() {
    super("the request's deadline passed; its reads were given up");
  }
}

export type GraphqlIndex = {
  /** Runs `read` against the index; once `signal` aborts, reads still to come fail fast. */
  snapshot<T>(read: (db: IndexDrizzle) => Promise<T>, signal: AbortSignal): Promise<T>;
};

/** The API process: the pool's connections must already have search_path = the views schema. */
export function graphqlIndexOnPool(pool: pg.Pool): GraphqlIndex {
  return {
    async snapshot(read, signal) {
      if (signal.aborted) throw new DeadlinePassedError();
      const client = await pool.connect();
      // The deadline passed: close the connection (the pool drops it), so queries still queued on it fail now.
      let released = false;
      const release = (error?: Error) => {
        if (released) return;
        released = true;
        client.release(error);
      };
      const abandon = () => release(new Error("graphql request deadline"));
      let committing = false;
      signal.addEventListener("abort", abandon, { once: true });
      try {
        await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        // drizzle only ever calls query() on its client.
        const serial = new OneQueryAtATime(client, signal) as unknown as pg.PoolClient;
        const db = drizzle(serial, { schema: GRAPHQL_TABLES, casing: "snake_case" });
        const result = await read(db as unknown as IndexDrizzle);
        if (signal.aborted) throw new DeadlinePassedError();
        // READ ONLY: there is nothing to make durable, so the answer does not wait for COMMIT's round trip; the
        // connection goes back to the pool once it is done (the pool's next user would queue behind it anyway).
        client.query("COMMIT").then(
          () => release(),
          (error: Error) => release(error),
        );
        committing = true;
        return result;
      } catch (error) {
        if (signal.aborted) throw new DeadlinePassedError();
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        signal.removeEventListener("abort", abandon);
        if (!committing) release();
      }
    },
  };
}

/**
 * A connection answers one query at a time, and Ponder's resolvers send a page and its count together:
 * pg would queue the second itself, but that is deprecated (pg 9 drops it), so the queue is here.
 */
class OneQueryAtATime {
  #tail: Promise<unknown> = Promise.resolve();
  constructor(
    readonly client: pg.PoolClient,
    readonly signal: AbortSignal,
  ) {}
  query(...args: Parameters<pg.PoolClient["query"]>) {
    const send = () => {
      // After the deadline the connection is closing: whatever was still to be read fails as abandoned.
      if (this.signal.aborted) throw new DeadlinePassedError();
      return (this.client.query as (...a: unknown[]) => Promise<unknown>)(...args);
    };
    const run = this.#tail.then(send).catch((error: unknown) => {
      throw this.signal.aborted ? new DeadlinePassedError() : error;
    });
    this.#tail = run.catch(() => {});
    return run;
  }
}

/**
 * Ponder's `db` ("ponder:api"): on PGlite every statement already runs alone in the one session it shares
 * with the indexer, which may commit a block between two statements of one request; the deadline answers the
 * client, and the few statements left finish on their own (PGlite has no statement timeout).
 */
export function graphqlIndexOnPonderDb(db: IndexDrizzle): GraphqlIndex {
  return {
    snapshot: (read, signal) => {
      if (signal.aborted) throw new DeadlinePassedError();
      return read(db);
    },
  };
}
