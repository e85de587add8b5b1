/**
 * The API's view of the lock index: Ponder's tables read through a drizzle database — Ponder's read-only `db`
 * (from "ponder:api") in the server, or drizzle over node-postgres / PGlite outside it (tests, benchmarks).
 *
 * Table names are always schema-qualified. Ponder's read-only client runs with search_path = the `--schema` of
 * `ponder start` / `ponder serve`, but on PGlite it shares its one session with the indexer, whose flushes
 * create TEMP tables named like ours ("lock", left behind empty after each flush; indexing-store/cache.js) — and
 * pg_temp comes first in every search_path, so an unqualified `lock` would read that empty shadow.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Address } from "viem";
import { memoizeSuccess } from "../cache/memo";
import type { CancelSignal } from "../chain/rpc";
import type { IndexQueryObserver, IndexStatement } from "../observability/indexDbMetrics";
import type { IndexedLockIds, IndexMark, LiveLock, LockStore } from "./contract";
import { type LockDb, type PreparedQuery, type Row, rowsOf, timedQuery } from "./statements";

export type CreateLockStoreOptions = {
  db: LockDb;
  /** Ponder's database schema; default: the connection's current_schema() (Ponder's search_path). */
  schema?: string;
  /**
   * The node-postgres pool under `db`, when there is one (the API process: api/server/indexDatabase.ts).
   * lockIdsOf, run on every state request, then goes as a prepared statement straight to the pool: on this
   * machine 0.25 ms against 0.98 ms through drizzle's execute (0.59 ms of it planning the three sub-selects
   * again, the rest drizzle's per-query layers) — bench/reads-latency.ts. Same statement, same snapshot.
   */
  prepared?: PreparedQuery;
  /** Told each statement's duration and outcome, by name (the metrics' api_index_db_query_duration_seconds). */
  onQuery?: IndexQueryObserver;
};

// numeric(78) arrives as a string (or a number for small values on some drivers); never through a float.
const big = (value: unknown): bigint => BigInt(String(value));

/** A SQL identifier, quoted (a schema name comes from configuration, never from a request). */
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The statements for one schema. lockIdsOf's is split around its one parameter (the owner, lower-case hex):
 * the prepared path sends it with `$1`, the drizzle path with a bound value there; both the same SQL.
 * indexMark's is its second half alone: the highest id and the indexed block, no owner.
 */
function lockStatements(schema: string) {
  const lock = `${quoted(schema)}.${quoted("lock")}`;
  const mark = `(SELECT max(token_id)::text FROM ${lock}) AS max_id,
  (SELECT min(substring(latest_checkpoint FROM 27 FOR 16))::text
     FROM ${quoted(schema)}.${quoted("_ponder_checkpoint")}) AS indexed_block`;
  const before = `SELECT
  (SELECT string_agg(token_id::text, ',' ORDER BY token_id) FROM ${lock} WHERE owner = `;
  const after = ` AND NOT burned) AS ids,
  ${mark}`;
  const text = `${before}$1${after}`;
  const markText = `SELECT ${mark}`;
  // Names per schema, under Postgres's 63-byte identifier limit.
  const nameOf = (prefix: string, sqlText: string) =>
    `${prefix}_${createHash("sha256").update(sqlText).digest("hex").slice(0, 24)}`;
  return {
    schema,
    ids: { before, after, text, name: nameOf("lock_ids", text) },
    mark: { text: markText, name: nameOf("index_mark", markText) },
  };
}

function markFrom(row: Row): IndexMark {
  return {
    maxTokenId: row.max_id == null ? 0n : big(row.max_id),
    indexedBlock: row.indexed_block == null ? null : big(row.indexed_block),
  };
}

function lockIdsFrom(row: Row): IndexedLockIds {
  const ids = typeof row.ids === "string" && row.ids !== "" ? row.ids.split(",").map((id) => BigInt(id)) : [];
  return { tokenIds: ids, ...markFrom(row) };
}

export function createLockStore({ db, schema, prepared, onQuery }: CreateLockStoreOptions): LockStore {
  const timed = <T>(statement: IndexStatement, run: () => PromiseLike<T>) => timedQuery(onQuery, statement, run);
  // A failed lookup is retried on the next call, not cached.
  const resolveSchema =
    schema === undefined
      ? memoizeSuccess(async () => {
          const rows = await timed("current_schema", () => rowsOf(db, sql`SELECT current_schema() AS schema`));
          const name = rows[0]?.schema;
          if (typeof name !== "string") throw new Error("lock store: the connection has no current schema");
          return name;
        })
      : () => Promise.resolve(schema);
  const table = async (name: string) => sql`${sql.identifier(await resolveSchema())}.${sql.identifier(name)}`;
  let statements: ReturnType<typeof lockStatements> | undefined;
  const current = async () => {
    const name = await resolveSchema();
    if (statements?.schema !== name) statements = lockStatements(name);
    return statements;
  };

  return {
    async liveLocksOf(owner: Address): Promise<LiveLock[]> {
      // One range scan of lock_owner_token_idx (owner, token_id), already in the answer's order: burned rows have
      // no owner. Ponder stores hex lower-case. `amount > 0` holds for every live lock (≥ 1000e18 at creation).
      const query = sql`SELECT token_id, amount, lock_end, auto_max FROM ${await table("lock")}
            WHERE owner = ${owner.toLowerCase()} AND NOT burned AND amount > 0
            ORDER BY token_id`;
      const rows = await timed("live_locks", () => rowsOf(db, query));
      return rows.map((r) => ({
        tokenId: big(r.token_id),
        amount: big(r.amount),
        lockEnd: big(r.lock_end),
        autoMax: r.auto_max === true,
      }));
    },

    /**
     * One statement, so one MVCC snapshot: Ponder commits a block's rows and its `_ponder_checkpoint` update in
     * one transaction, so the ids are exactly the index's state at the reported block. The checkpoint string is
     * Ponder's encodeCheckpoint (ponder/dist/esm/utils/checkpoint.js): 10 digits of block timestamp, 16 of chain
     * id, then 16 of block number — characters 27..42. Ponder moves latest_checkpoint for every realtime block,
     * events or not (runtime/*.js "update_checkpoints"; test/mcp/v1/stateSnapshot.test.ts checks it live). Every
     * relation read here also exists in Ponder's views schema (database/actions.js creates views for the tables,
     * `_ponder_meta` and `_ponder_checkpoint`), so a reader given the views schema works unchanged.
     */
    async lockIdsOf(owner: Address, options?: { signal?: CancelSignal }): Promise<IndexedLockIds> {
      const st = (await current()).ids;
      const user = owner.toLowerCase();
      // Only the prepared path can be cancelled; drizzle's execute (Ponder's own read-only db) cannot.
      const rows = await timed("lock_ids", async () =>
        prepared
          ? (await prepared({ name: st.name, text: st.text, values: [user] }, options?.signal)).rows
          : await rowsOf(db, sql`${sql.raw(st.before)}${user}${sql.raw(st.after)}`),
      );
      return lockIdsFrom(rows[0] ?? {});
    },

    /** The highest id minted and the indexed block, as lockIdsOf reports them, for no owner (the watermark's poll). */
    async indexMark(): Promise<IndexMark> {
      const st = (await current()).mark;
      const rows = await timed("index_mark", async () =>
        prepared
          ? (await prepared({ name: st.name, text: st.text, values: [] })).rows
          : await rowsOf(db, sql.raw(st.text)),
      );
      return markFrom(rows[0] ?? {});
    },

    /**
     * Ponder's readiness: `_ponder_meta` row 'app' carries `is_ready`, 0 when an app takes over the schema and 1
     * once historical indexing is done — the flag behind GET /ready (ponder 0.17 dist/esm/server/index.js). The
     * realtime tail (the last 30 blocks: Ponder's finality depth for chains it has no figure for, 31337 and
     * 8453 included) is indexed right after, within seconds.
     */
    async isReady(): Promise<boolean> {
      const query = sql`SELECT (value->>'is_ready')::int AS is_ready FROM ${await table("_ponder_meta")} WHERE key = 'app'`;
      const rows = await timed("is_ready", () => rowsOf(db, query));
      return Number(rows[0]?.is_ready) === 1;
    },
  };
}
