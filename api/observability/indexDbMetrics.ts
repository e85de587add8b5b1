import { Counter } from "./counter";
import { renderFamily } from "./exposition";
import { Histogram } from "./histogram";

/** The node-postgres pool of the index database as it stands (pg.Pool's own counts). */
export type PoolReading = { total: number; idle: number; waiting: number; max: number };

/** Every statement the API sends the index: the label set of the query histogram, bounded by this list. */
export type IndexStatement =
  | "lock_ids"
  | "index_mark"
  | "live_locks"
  | "is_ready"
  | "current_schema"
  | "readiness"
  // The index API's read model (api/read/atBlock.ts), each statement pinned to a block:
  | "index_probe"
  | "index_lock"
  | "index_locks_of"
  | "index_events_of_lock"
  | "index_events_of_account"
  | "index_board_window"
  | "index_board_lifetime"
  | "index_board_window_delta"
  | "index_board_lifetime_delta"
  | "index_activity"
  | "index_activity_item"
  | "index_activity_span"
  | "index_holders"
  | "index_ve_locks"
  | "index_ve_lock_delta"
  | "index_stats"
  // The streams' one read per indexed block (api/index/streamHub.ts).
  | "index_changes"
  // The branch check's read, every few seconds (api/read/branchCheck.ts).
  | "index_final_event"
  // Ponder's journal, with each watermark poll where no trigger tells a revert (api/read/indexSignal.ts WatermarkSignal).
  | "index_journal"
  // The webhooks' feeder's source and build, twice per head it feeds (api/webhooks/engine.ts).
  | "index_source"
  // A later board page's cursor judged at a block not yet final, once per page; a ve ranking carried from an earlier
  // block's statement, once per ranking (api/read/cursorSeal.ts: other rankings read their seal with their rows).
  | "index_seal";

/** Observes one statement: how long it took, and whether it answered. */
export type IndexQueryObserver = (statement: IndexStatement, seconds: number, ok: boolean) => void;

/**
 * Statement durations in seconds: a prepared lookup takes ~0.25 ms on this machine (bench/reads-latency.ts),
 * so the buckets start well below 1 ms; the last is the client-side query timeout (2.5 s).
 */
export const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The index database as the API uses it: the pool's connections (read at scrape time, only in the API process,
 * which owns its pool: api/server/indexDatabase.ts) and each statement's duration (wherever a lock store runs,
 * Ponder's in-process database included).
 */
export class IndexDbMetrics {
  #pool: (() => PoolReading) | undefined;
  readonly queryDuration = new Histogram(
    "api_index_db_query_duration_seconds",
    "Time the index database took to answer one statement, by statement and outcome (ok, error).",
    ["statement", "outcome"],
    QUERY_BUCKETS,
  );

  readonly refused = new Counter(
    "api_index_db_refused_total",
    "Statements the index's per-request pool refused before they had a connection (503 INDEX_UNAVAILABLE busy), by " +
      "why: queue full (more waiting than the pool serves within its wait: refused at once), wait expired.",
    ["why"],
  );

  /** Pass as the index database's onRefused (api/server/indexPool.ts). */
  readonly onRefused = (why: "queue full" | "wait expired"): void => this.refused.inc({ why });

  /** Pass as the lock store's onQuery (api/read/store.ts). */
  readonly onQuery: IndexQueryObserver = (statement, seconds, ok) =>
    this.queryDuration.observe({ statement, outcome: ok ? "ok" : "error" }, seconds);

  /** The pool whose counts the gauges report; without one they are absent. */
  watchPool(read: () => PoolReading): void {
    this.#pool = read;
  }

  render(): string {
    const pool = this.#pool?.();
    const gauge = (name: string, help: string, value: number | undefined) =>
      renderFamily(name, help, "gauge", value === undefined ? [] : [{ value }]);
    return [
      gauge(
        "api_index_db_pool_connections",
        "Connections the index database pool holds open, busy or idle.",
        pool?.total,
      ),
      gauge("api_index_db_pool_idle_connections", "Open pool connections not running a query.", pool?.idle),
      gauge(
        "api_index_db_pool_waiting_queries",
        "Queries waiting for a pool connection (all are busy and the pool is at its maximum, or connecting).",
        pool?.waiting,
      ),
      gauge("api_index_db_pool_max_connections", "The pool's configured maximum of connections.", pool?.max),
      this.queryDuration.render(),
      this.refused.render(),
    ].join("\n");
  }
}
