/**
 * The lock index as the API process reads it: Ponder's tables through its views schema (`ponder start
 * --views-schema`), over a small bounded pg pool and drizzle (the store's queries are drizzle `sql`).
 * Every wait is bounded so a dead, silent or slow Postgres never holds a request or a probe: connecting
 * (connectionTimeoutMillis), a statement (statement_timeout, server side) and a query (query_timeout,
 * client side). A state request's lock query is also cancelled when the request is abandoned (its client hung up,
 * or the index's budget passed): api/read/statements.ts.
 */
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import type { ReadyState } from "../http/probes";
import type { IndexQueryObserver, PoolReading } from "../observability/indexDbMetrics";
import { causeOf, type ThrottledWarn } from "../observability/throttle";
import { createLockIndex } from "../read/atBlock";
import { IndexChainMismatchError, type LockIndex, type LockStore } from "../read/contract";
import { IndexSignal, type IndexSignalEvent, StaleTriggerError } from "../read/indexSignal";
import { CONNECTION_CHECK_OPTION, cancellableQuery, timedQuery } from "../read/statements";
import { createLockStore } from "../read/store";
import { IndexWatermark } from "../read/watermark";
import { IndexPool, type IndexPoolOptions } from "./indexPool";
import { boundedReadiness } from "./readiness";

export const INDEX_DB_TIMEOUTS = { connectMs: 500, statementMs: 2_000, queryMs: 2_500 } as const;
/**
 * The index API's whole-index statements (the ve ranking, the stats) run once per block and are shared by every
 * reader (api/read/blockMemo.ts); at 100,000 locks they take a few hundred ms to a few s (bench/index-api.ts), so
 * they get their own small pool with a longer timeout instead of stretching every request's.
 */
export const WHOLE_INDEX_DB = { connections: 2, statementMs: 15_000, queryMs: 16_000 } as const;
/**
 * Session settings of the index connections: these statements aggregate ~100k rows (in memory, not spilled to
 * disk at the 4 MB default), and JIT compilation costs more than it saves at this size (bench/index-api.ts).
 * Sent as startup options (pg's `options`), never as a statement of ours: a query issued in the pool's `connect`
 * event runs beside the caller's first query on that client, which pg 8 deprecates ("removed in pg@9.0").
 */
export const INDEX_DB_SESSION = "-c work_mem=64MB -c jit=off";

/**
 * The pg.Pool settings of the index's two pools: `requests` (the per-request statements, the watermark, the
 * probes; its connections also check that their client is still there, so a cancelled query's backend stops:
 * api/read/statements.ts) and `wholeIndex` (WHOLE_INDEX_DB).
 */
export function indexPoolConfig(url: string, pool: "requests" | "wholeIndex", max = 10): pg.PoolConfig {
  const whole = pool === "wholeIndex";
  return {
    connectionString: url,
    max: whole ? WHOLE_INDEX_DB.connections : max,
    connectionTimeoutMillis: INDEX_DB_TIMEOUTS.connectMs,
    statement_timeout: whole ? WHOLE_INDEX_DB.statementMs : INDEX_DB_TIMEOUTS.statementMs,
    query_timeout: whole ? WHOLE_INDEX_DB.queryMs : INDEX_DB_TIMEOUTS.queryMs,
    idleTimeoutMillis: 30_000,
    options: whole ? INDEX_DB_SESSION : `${INDEX_DB_SESSION} ${CONNECTION_CHECK_OPTION}`,
  };
}

export type IndexDatabase = {
  /** Which token ids a user holds (the state route). */
  locks: LockStore;
  /** The index read at any block (the /api/index/v1 routes, GraphQL). */
  atBlock: LockIndex;
  /** The store's mark, polled from the moment the database is opened (api/read/watermark.ts). */
  watermark: IndexWatermark;
  /** One signal per indexed block (LISTEN/NOTIFY, api/read/indexSignal.ts); null without a views schema to listen on. */
  signal: IndexSignal | null;
  /** /ready: the database answers within READY_PROBE_MS (on its own connection) and the index's tables exist. */
  readiness(): Promise<ReadyState>;
  /** The whole-index pool's size: the index runtime keeps one of its slots for the head (api/read/computeGate.ts). */
  wholeIndexConnections: number;
  /** The pool's connections now (pg.Pool's counts), for the metrics at scrape time. */
  pool(): PoolReading;
  close(): Promise<void>;
};

export function openIndexDatabase(options: {
  url: string;
  schema: string;
  poolSize?: number;
  /** Told every statement's duration (api/observability/indexDbMetrics.ts). */
  onQuery?: IndexQueryObserver;
  /** Called for each query a cancel stopped (api_aborted_work_total{kind="db"}). */
  onCancelled?: () => void;
  /** Told each statement the per-request pool refused as load, before it had a connection (api/server/indexPool.ts). */
  onRefused?: IndexPoolOptions["onRefused"];
  /** Where an outage of the database is told (throttled: api/observability/throttle.ts), with its cause. */
  warn?: ThrottledWarn;
  /**
   * The views schema (`ponder start --views-schema`) whose checkpoint the signal listens on: one dedicated connection
   * per process. Absent: the streams poll the head once a second instead.
   */
  listen?: { viewsSchema: string; onEvent?: (event: IndexSignalEvent) => void };
  /** The chain this deployment serves (NETWORK's): /ready and every statement of the index refuse an index whose checkpoint names another. */
  chainId?: number;
  /** Told the chains of an index that is not this deployment's, each time /ready finds it. */
  onOtherChain?: (chainIds: string[]) => void;
}): IndexDatabase {
  const max = options.poolSize ?? 10;
  // Admitted: a statement whose turn would not come within the checkout's wait is refused at once, as load.
  const pool = new IndexPool(indexPoolConfig(options.url, "requests", max), {
    waitMs: INDEX_DB_TIMEOUTS.connectMs,
    ...(options.onRefused ? { onRefused: options.onRefused } : {}),
  });
  const wholePool = new pg.Pool(indexPoolConfig(options.url, "wholeIndex"));
  // A dropped idle connection must not crash the process; the next query opens a new one.
  pool.on("error", (error) =>
    options.warn?.("index-connection", "index database connection lost", { cause: causeOf(error) }),
  );
  wholePool.on("error", () => {});
  // /ready's own connection: a flood that fills the request pool's queue is load, refused as `busy` (indexPool.ts),
  // and must not turn the replica unready ("database unreachable") nor hold its probe behind the queue.
  // Opened now and kept (no idle close): the first /ready does not pay a connection's set-up within its 500 ms.
  const probePool = new pg.Pool({ ...indexPoolConfig(options.url, "requests", 1), idleTimeoutMillis: 0 });
  probePool.on("error", () => {});
  probePool.connect().then(
    (client) => client.release(),
    () => {},
  );
  const probeDb = drizzle(probePool);
  const db = drizzle(pool);
  // The per-request statement goes prepared straight to the pool (api/read/store.ts: CreateLockStoreOptions).
  const store = createLockStore({
    db,
    schema: options.schema,
    prepared: (statement, signal) => cancellableQuery(pool, statement, signal, options.onCancelled),
    onQuery: options.onQuery,
  });
  // Polled whether or not requests come, so a database outage is in the log even without traffic.
  const watermark = new IndexWatermark(() => store.indexMark(), {
    onFailure: (error) =>
      options.warn?.("index-watermark", "index database not answering; state reads ask it per request", {
        cause: causeOf(error),
      }),
  }).start();
  const atBlock = createLockIndex({
    db,
    schema: options.schema,
    prepared: (statement, signal) => cancellableQuery(pool, statement, signal, options.onCancelled),
    wholeIndex: ({ text, values }) => wholePool.query(text, values),
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
    // Every statement refuses another chain's index (its checkpoint's chain_id), in the head it reads anyway.
    ...(options.chainId === undefined ? {} : { chainId: options.chainId }),
  });
  const listen = options.listen;
  const signal = listen
    ? new IndexSignal({
        viewsSchema: listen.viewsSchema,
        connect: async () => {
          const client = new pg.Client({
            connectionString: options.url,
            connectionTimeoutMillis: INDEX_DB_TIMEOUTS.connectMs * 4,
            keepAlive: true,
            application_name: "lock-index-signal",
          });
          await client.connect();
          return client;
        },
        head: async () => (await atBlock.probe(null)).head.block,
        ...(listen.onEvent ? { onEvent: listen.onEvent } : {}),
        onFailure: (error) => {
          // Another chain's index is the chain check's to say (api/read/indexChain.ts); the signal itself listens.
          if (error instanceof IndexChainMismatchError) return;
          if (error instanceof StaleTriggerError) {
            options.warn?.("index-signal-stale", "index signal: a trigger on a schema the views left stays", {
              table: error.table,
              cause: causeOf(error.cause),
            });
            return;
          }
          options.warn?.("index-signal", "index signal not listening; streams fall back to polls", {
            cause: causeOf(error),
          });
        },
      }).start()
    : null;
  let chainConfirmed = false;
  return {
    locks: store,
    signal,
    // Named prepared statements, as the store's per-request statement (parsed and planned once per connection);
    // a read given a signal (GraphQL's deadline and hang-up) is cancelled with it.
    atBlock,
    watermark,
    wholeIndexConnections: WHOLE_INDEX_DB.connections,
    readiness: boundedReadiness(async () => {
      const res = await timedQuery(options.onQuery, "readiness", () =>
        probeDb.execute(sql`SELECT to_regclass(${`"${options.schema}"."lock"`}) IS NOT NULL AS present,
          to_regclass(${`"${options.schema}"."_ponder_checkpoint"`}) IS NOT NULL AS checkpointed`),
      );
      const row = (res as unknown as { rows: { present: boolean; checkpointed: boolean }[] }).rows[0];
      if (row?.present !== true) return false;
      if (options.chainId === undefined || !row.checkpointed || chainConfirmed) return true;
      // Ponder's checkpoint names the chain it indexes (one row per chain): another chain's index is never served.
      // Checked until it is this deployment's, then no more: the probe must not queue behind a lock on the table.
      const chains = await timedQuery(options.onQuery, "readiness", () =>
        probeDb.execute(
          sql`SELECT chain_id::text AS chain_id FROM ${sql.identifier(options.schema)}."_ponder_checkpoint"`,
        ),
      );
      const ids = (chains as unknown as { rows: { chain_id: string }[] }).rows.map((r) => r.chain_id);
      if (ids.length > 0 && ids.every((id) => id === String(options.chainId))) {
        chainConfirmed = true;
        return true;
      }
      if (ids.length === 0) return true;
      options.onOtherChain?.(ids);
      return "another chain";
    }),
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    close: async () => {
      await Promise.all([watermark.stop(), signal?.stop()]);
      await Promise.all([pool.end(), wholePool.end(), probePool.end()]);
    },
  };
}
