/**
 * The lock index read at one block (docs/api.md#the-index-api-apiindexv1). One rule answers every question, at the
 * head or at any block B: the state of a lock at B is its newest lock_event row at or before B (each row holds the
 * lock's state after its event), except that a lock merged away is burned from the merge row that names it as
 * from_token_id. Ve is a function of B's timestamp t (api/math/lockVe.ts, here in SQL for the sums).
 *
 * Each read is ONE SQL statement, so one MVCC snapshot: it reads Ponder's checkpoint (the head block and its
 * timestamp: Ponder commits a block's rows and its checkpoint in one transaction) together with the rows, and
 * says whether B lies at or below that head. Nothing here caches or judges a request; api/index/ does.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Address, Hex } from "viem";
import { BOARD_BUCKET_SECONDS, BOARD_FOLD } from "../../indexer/boards";
import { memoizeSuccess } from "../cache/memo";
import type { CancelSignal } from "../chain/rpc";
import { MAX_LOCK_DURATION } from "../math/constants";
import type { IndexQueryObserver } from "../observability/indexDbMetrics";
import {
  type ActivityRow,
  type AtBlock,
  type BasisFound,
  type BlockChange,
  BlockTimeUnknownError,
  BOARD_WINDOWS,
  type BoardAnswer,
  type BoardExit,
  type BoardIndex,
  type BoardValue,
  DURATION_BOARDS,
  IndexChainMismatchError,
  type IndexHead,
  IndexNotStartedError,
  IndexRecoveringError,
  type JournalMark,
  type LockEventState,
  type LockIndex,
  type LockState,
  NOT_RANKED,
  type ReadAt,
  type Seal,
  type SealAsk,
  type VeLock,
} from "./contract";
import { CARRIED_COLUMNS } from "./indexSignal";
import { type LockDb, type PreparedQuery, rowsOf, timedQuery } from "./statements";
import { textRanking } from "./textRanking";

export const WEEK = 604_800n;

/**
 * Where the whole-index reads switch strategy: a block is "near the head" when the blocks after it are at most
 * 1/RECENT_SHARE of the blocks before it (since the first event). bench/index-api.ts measures the worst block of
 * each way (the two sides of the switch): both ≈ 1.3× the head at 520,000 events.
 */
export const RECENT_SHARE = 20;

type Row = Record<string, unknown>;

/**
 * A short stable name of Ponder's build id (`_ponder_meta`'s, which the answers' ETag carries: api/index/answer.ts):
 * a redeploy that writes other rows is another build, so the same block's answer is another representation.
 * 8 base64url characters (48 bits): two builds of one deployment's history never share it in practice.
 */
export function buildDigest(id: string): string {
  return createHash("sha256").update(id).digest("base64url").slice(0, 8);
}
const big = (v: unknown): bigint => BigInt(String(v));

const bigOrNull = (v: unknown): bigint | null => (v == null ? null : big(v));
const hexOrNull = <T extends string>(v: unknown): T | null => (v == null ? null : (String(v) as T));
const text = (v: bigint | null | undefined) => (v == null ? null : v.toString());
type SQL = ReturnType<typeof sql>;
/** A statement's parameter by name: a bound value, or its `$n` placeholder in a prepared statement's text. */
type Param = (name: string) => SQL;
type Values = Record<string, string | null>;

export type CreateLockIndexOptions = {
  db: LockDb;
  /** Ponder's schema (or its views schema); default: the connection's current_schema(). */
  schema?: string;
  /**
   * node-postgres's pool.query, when there is a pool (the API process): each statement then goes as a named
   * prepared statement, parsed and planned once per connection, instead of through drizzle's execute.
   */
  prepared?: PreparedQuery;
  /**
   * Where the whole-index statements go (the ve ranking, the stats: once per block, shared): unnamed, so each is
   * planned for its own block, on a pool whose statement timeout allows them (api/server/indexDatabase.ts).
   * Default: `prepared` (or drizzle).
   */
  wholeIndex?: (statement: { text: string; values: unknown[] }) => PromiseLike<{ rows: Row[] }>;
  /** Told each statement's duration and outcome, as `index_<name>` (api_index_db_query_duration_seconds). */
  onQuery?: IndexQueryObserver;
  /**
   * The chain this API serves (NETWORK's): a statement whose checkpoint names another is refused
   * (IndexChainMismatchError) before anything of it is answered. Unset: not checked (a test's synthetic index).
   */
  chainId?: number;
};

/** The read model's statements (each `index_<name>` in the query histogram). */
type StatementName =
  | "probe"
  | "lock"
  | "locks_of"
  | "events_of_lock"
  | "events_of_account"
  | "holders"
  | "ve_locks"
  | "ve_lock_delta"
  | "stats"
  | "board_window"
  | "board_lifetime"
  | "board_window_delta"
  | "board_lifetime_delta"
  | "activity"
  | "activity_item"
  | "activity_span"
  | "changes"
  | "final_event"
  | "source"
  | "seal";

export function createLockIndex(options: CreateLockIndexOptions): LockIndex & BoardIndex {
  const { db, prepared, chainId } = options;
  const dialect = new PgDialect();
  const statements = new Map<string, { name: string; text: string; order: string[] }>();
  const resolveSchema =
    options.schema === undefined
      ? memoizeSuccess(async () => {
          const rows = await rowsOf(db, sql`SELECT current_schema() AS schema`);
          const name = rows[0]?.schema;
          if (typeof name !== "string") throw new Error("lock index: the connection has no current schema");
          return name;
        })
      : () => Promise.resolve(options.schema as string);
  // Always schema-qualified (see api/read/store.ts: PGlite's TEMP shadows of Ponder's tables).
  const tablesOf = (schema: string) => ({
    ev: sql`${sql.identifier(schema)}.${sql.identifier("lock_event")}`,
    checkpoint: sql`${sql.identifier(schema)}.${sql.identifier("_ponder_checkpoint")}`,
    meta: sql`${sql.identifier(schema)}.${sql.identifier("_ponder_meta")}`,
    lock: sql`${sql.identifier(schema)}.${sql.identifier("lock")}`,
    entry: sql`${sql.identifier(schema)}.${sql.identifier("board_entry")}`,
    hour: sql`${sql.identifier(schema)}.${sql.identifier("board_hour")}`,
    total: sql`${sql.identifier(schema)}.${sql.identifier("board_total")}`,
    protocol: sql`${sql.identifier(schema)}.${sql.identifier("protocol_event")}`,
  });
  type Tables = ReturnType<typeof tablesOf>;
  /** Ponder's journal tables in the schema read (none in a views schema), listed once per schema when there are any. */
  let journals: { schema: string; tables: string[] } | undefined;
  // Made once per schema name, not per statement (an allocation sampling found them 3 % of a following process's).
  let named: { schema: string; tables: Tables } | undefined;
  const tables = async (): Promise<Tables> => {
    const schema = await resolveSchema();
    if (named?.schema !== schema) named = { schema, tables: tablesOf(schema) };
    return named.tables;
  };

  /**
   * head + at, then `body` (CTEs and a final SELECT that starts `SELECT h.*, a.*` and joins `head h, at a`).
   * `at` is the block read: the head's when b is null; its time the head's, else t, else an event row's of that block.
   * The head also says the finalized block and its time (Ponder's finalized checkpoint), and the chain the index was
   * built for (the checkpoint row's chain_id, Ponder 0.17's `_ponder_checkpoint`: one row per chain indexed).
   * Checkpoint layout (ponder/dist/esm/utils/checkpoint.js): 10 digits of timestamp, 16 of chain id, 16 of block.
   */
  const statement = (ev: SQL, checkpoint: SQL, meta: SQL, p: Param, body: SQL) => sql`WITH head AS (
  SELECT substring(latest_checkpoint FROM 27 FOR 16)::bigint AS head_block,
         substring(latest_checkpoint FROM 1 FOR 10)::bigint AS head_time,
         substring(finalized_checkpoint FROM 27 FOR 16)::bigint AS finalized_block,
         substring(finalized_checkpoint FROM 1 FOR 10)::bigint AS finalized_time,
         chain_id::text AS index_chain,
         (SELECT (m.value->>'is_ready')::int FROM ${meta} m WHERE m.key = 'app') AS index_ready,
         (SELECT m.value->>'build_id' FROM ${meta} m WHERE m.key = 'app') AS index_build
    FROM ${checkpoint} ORDER BY latest_checkpoint LIMIT 1
), at AS (
  SELECT coalesce(${p("b")}::bigint, head_block) AS at_block,
         CASE WHEN ${p("b")}::bigint IS NULL OR ${p("b")}::bigint = head_block THEN head_time
              ELSE coalesce(${p("t")}::bigint,
                            (SELECT e.block_time::bigint FROM ${ev} e WHERE e.block_number = ${p("b")}::bigint LIMIT 1))
         END AS at_time,
         coalesce(${p("b")}::bigint <= head_block, true) AS in_range
    FROM head
), ${body}`;

  /** Statement `name` as text with `$n` placeholders (and the parameter names in their order), rendered once. */
  function render(
    name: string,
    ev: SQL,
    checkpoint: SQL,
    lock: SQL,
    body: (ev: SQL, p: Param, lock: SQL, t: Tables) => SQL,
    t: Tables,
  ): { name: string; text: string; order: string[] } {
    let st = statements.get(name);
    if (st === undefined) {
      const order: string[] = [];
      const p: Param = (k) => {
        if (!order.includes(k)) order.push(k);
        return sql.raw(`$${order.indexOf(k) + 1}`);
      };
      const built = dialect.sqlToQuery(statement(ev, checkpoint, t.meta, p, body(ev, p, lock, t))).sql;
      const hash = createHash("sha256").update(built).digest("hex").slice(0, 20);
      st = { name: `index_${name}_${hash}`, text: built, order };
      statements.set(name, st);
    }
    return st;
  }

  /** Runs statement `name` (its shape fixed by the name), timed for onQuery as `index_<name>`. */
  function run(...args: Parameters<typeof untimed>): Promise<Row[]> {
    return timedQuery(options.onQuery, `index_${args[0]}`, () => untimed(...args));
  }

  /** Runs statement `name` with `values`; prepared when there is a pool. */
  async function untimed(
    name: StatementName,
    at: ReadAt,
    values: Values,
    body: (ev: SQL, p: Param, lock: SQL, t: Tables) => SQL,
    whole = false,
    signal?: CancelSignal,
  ): Promise<Row[]> {
    const t = await tables();
    const { ev, checkpoint, lock } = t;
    const all: Values = { b: text(at?.block), t: text(at?.time), ...values };
    const { wholeIndex } = options;
    if (whole && wholeIndex) {
      const st = render(name, ev, checkpoint, lock, body, t);
      return (await wholeIndex({ text: st.text, values: st.order.map((k) => all[k] ?? null) })).rows;
    }
    if (prepared) {
      const st = render(name, ev, checkpoint, lock, body, t);
      const statement = { name: st.name, text: st.text, values: st.order.map((k) => all[k] ?? null) };
      const { rows } = await prepared(statement, signal);
      return rows;
    }
    const p: Param = (k) => sql`${all[k] ?? null}`;
    return rowsOf(db, statement(ev, checkpoint, t.meta, p, body(ev, p, lock, t)));
  }

  // Every statement reads the build id, which changes only when the views switch: its digest is made once.
  let build: { id: string; digest: string } | null = null;
  const digestOf = (id: string) => {
    if (build?.id !== id) build = { id, digest: buildDigest(id) };
    return build.digest;
  };

  function answer<T>(rows: Row[], value: (rows: Row[]) => T): AtBlock<T> {
    const first = rows[0];
    if (first === undefined) throw new IndexNotStartedError();
    // Before anything else of the row: another chain's head, build or rows are never this API's answer.
    if (chainId !== undefined && first.index_chain != null && Number(first.index_chain) !== chainId) {
      throw new IndexChainMismatchError(Number(first.index_chain), chainId);
    }
    // Ponder clears is_ready in the transaction that starts its crash recovery, which also deletes every row above
    // its safe checkpoint while `_ponder_checkpoint` still names the old head: until the app has caught up again
    // (is_ready 1), the rows are not the checkpoint's block's. Read in the same snapshot, so never an answer mixing.
    if (first.index_ready != null && Number(first.index_ready) === 0) throw new IndexRecoveringError();
    const inRange = first.in_range === true;
    const head: IndexHead = {
      block: big(first.head_block),
      time: big(first.head_time),
      finalized: big(first.finalized_block),
    };
    if (first.index_build != null) head.build = digestOf(String(first.index_build));
    const block = big(first.at_block);
    if (inRange && first.at_time == null) throw new BlockTimeUnknownError(block, head);
    const read: AtBlock<T> = {
      head,
      block,
      time: first.at_time == null ? 0n : big(first.at_time),
      inRange,
      value: value(inRange ? rows : []),
    };
    if ("seal_digest" in first) read.seal = sealOf(first);
    return read;
  }

  /**
   * The block's seal (contract.ts Seal) when asked (`sw`): from the cursor's `from` (`sf`), else from Ponder's
   * finalized block in this snapshot, rounded down to a multiple of SEAL_STEP — none when that is at or above the
   * block. The digest is MD5 (a fingerprint, not a defence: the cursor's MAC keeps clients from choosing it) of every
   * event of ours in the range, by block, then log index, each named by its block and id (transaction hash and log
   * index): a range scan of each table's block index, a few dozen blocks' rows, once per statement. The final SELECT
   * joins `seal s`.
   */
  /** The digest of our events in blocks (lo, hi]: both tables' block indexes ranged. */
  const eventsDigest = (ev: SQL, t: Tables, lo: SQL, hi: SQL) => {
    const side = (table: SQL) =>
      sql`SELECT e.id, e.block_number, e.log_index FROM ${table} e WHERE e.block_number > ${lo} AND e.block_number <= ${hi}`;
    return sql`(
    SELECT md5(coalesce(string_agg(u.block_number::text || ' ' || u.id, ',' ORDER BY u.block_number, u.log_index), ''))
      FROM (${side(ev)} UNION ALL ${side(t.protocol)}) u)`;
  };
  const sealed = (ev: SQL, t: Tables, p: Param) => {
    // MATERIALIZED: inlined, the digest's subquery ran once per row of the page (101 times for a 100-row page).
    return sql`seal AS MATERIALIZED (
  SELECT x.lo AS seal_from, CASE WHEN x.lo IS NOT NULL THEN ${eventsDigest(ev, t, sql`x.lo`, sql`a.at_block`)} END AS seal_digest
    FROM head h CROSS JOIN at a CROSS JOIN LATERAL (
      SELECT CASE WHEN ${p("sw")}::text IS NULL OR NOT a.in_range THEN NULL::bigint
                  WHEN ${p("sf")}::bigint IS NOT NULL THEN ${p("sf")}::bigint
                  WHEN h.finalized_block >= a.at_block THEN NULL::bigint
                  ELSE h.finalized_block / ${sql.raw(SEAL_STEP.toString())} * ${sql.raw(SEAL_STEP.toString())} END AS lo) x
)`;
  };
  const sealValues = (ask: SealAsk | undefined): Values => ({
    sw: ask === undefined ? null : "1",
    sf: text(ask?.from),
  });

  /**
   * The live locks at the block, by the one rule, read one of two equivalent ways (both in the statement; a
   * one-time filter runs one). Near the head: a lock with no event after the block is as its `lock` row says
   * (Ponder writes that row with the newest event, in the same transaction, so the row IS its newest event's
   * state: test/support/lockChain.ts checks it on every indexer test), and only the locks changed after the block
   * are read from their newest event at or before it (a LATERAL lookup each: one index entry, no sort) — at the
   * head, the `lock` table alone. Further back: every lock's newest event at or before the block, a DISTINCT ON in
   * the order of lock_event_token_state_idx, which carries the state columns: one ordered index-only scan with no
   * sort and no heap visit (sorting every row below the block made a past block 2.4× the head; now ≤ 1.4×,
   * bench/index-api.ts). The block is referenced as the parameter itself where it bounds a scan, so a statement
   * planned for its values (api/server/indexDatabase.ts sends these unnamed) sees it.
   */
  const liveLocks = (ev: SQL, lock: SQL, p: Param) => {
    const b = sql`coalesce(${p("b")}::bigint, (SELECT head_block FROM head))`;
    const gone = (alias: string) =>
      sql`NOT EXISTS (SELECT 1 FROM ${ev} m WHERE m.from_token_id = ${sql.raw(alias)}.token_id AND m.block_number <= ${b})`;
    return sql`recent AS (
  SELECT (h.head_block - a.at_block) * ${sql.raw(String(RECENT_SHARE))} <=
         (a.at_block - coalesce((SELECT min(block_number) FROM ${ev}), a.at_block)) AS near_head
    FROM head h, at a
), changed AS (
  SELECT e.token_id FROM ${ev} e WHERE (SELECT near_head FROM recent) AND e.block_number > ${b}
  UNION
  SELECT e.from_token_id FROM ${ev} e
   WHERE (SELECT near_head FROM recent) AND e.block_number > ${b} AND e.from_token_id IS NOT NULL
), live AS (
  SELECT k.token_id, k.owner, k.amount AS lock_amount, k.lock_end, k.auto_max FROM ${lock} k, at
   WHERE (SELECT near_head FROM recent) AND at.in_range AND NOT k.burned
     AND NOT EXISTS (SELECT 1 FROM changed c WHERE c.token_id = k.token_id)
  UNION ALL
  SELECT c.token_id, s.owner, s.lock_amount, s.lock_end, s.auto_max
    FROM changed c, at, LATERAL (
      SELECT e.owner, e.lock_amount, e.lock_end, e.auto_max, e.burned FROM ${ev} e
       WHERE e.token_id = c.token_id AND e.block_number <= ${b}
       ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1) s
   WHERE (SELECT near_head FROM recent) AND at.in_range AND NOT s.burned AND ${gone("c")}
  UNION ALL
  SELECT s.token_id, s.owner, s.lock_amount, s.lock_end, s.auto_max FROM (
    SELECT DISTINCT ON (e.token_id) e.token_id, e.owner, e.lock_amount, e.lock_end, e.auto_max, e.burned
      FROM ${ev} e, at
     WHERE NOT (SELECT near_head FROM recent) AND at.in_range AND e.block_number <= ${b}
     ORDER BY e.token_id, e.block_number DESC, e.log_index DESC) s
   WHERE NOT s.burned AND ${gone("s")}
), ve AS (
  SELECT l.owner, l.lock_amount, l.lock_end, l.auto_max,
         CASE WHEN l.auto_max THEN l.lock_amount
              WHEN l.lock_end <= at.at_time THEN 0
              ELSE div(l.lock_amount * (l.lock_end - at.at_time), ${sql.raw(MAX_LOCK_DURATION.toString())}) END AS ve
    FROM live l, at
)`;
  };

  const liveLockOf = (r: Row): VeLock => ({
    tokenId: big(r.token_id),
    owner: String(r.owner).toLowerCase() as Address,
    amount: big(r.lock_amount),
    lockEnd: big(r.lock_end),
    autoMax: r.auto_max === true,
  });

  const lockFrom = (r: Row, tokenId: bigint): LockState => ({
    tokenId,
    owner: hexOrNull<Address>(r.owner),
    amount: big(r.lock_amount),
    lockEnd: big(r.lock_end),
    autoMax: r.auto_max === true,
    listed: r.listed === true,
    burned: r.burned === true,
    createdBlock: big(r.created_block),
  });

  const H = sql.raw(BOARD_BUCKET_SECONDS.toString());
  const boardAnswer = (rows: Row[]): BoardAnswer => ({
    ...answer(rows, (rs) =>
      rs
        .filter((r) => r.account != null)
        .map((r): BoardValue => ({ address: String(r.account) as Address, value: big(r.value) })),
    ),
    finalizedTime: rows[0]?.finalized_time == null ? null : big(rows[0].finalized_time),
  });
  /**
   * The ranking of `parts` (account, total, cnt, max rows): folded per account, every account with a part ranked (value
   * 0 too: the indexer stores an entry only where the board counts the event, protocol.md §9); with the block's
   * seal, read with them (contract.ts RankingSealing).
   */
  const ranked = (ev: SQL, t: Tables, p: Param) => sql`${sealed(ev, t, p)}, ranked AS (
  SELECT account, CASE ${p("fold")}::text WHEN 'max' THEN max(max) WHEN 'count' THEN sum(cnt) ELSE sum(total) END AS value
    FROM parts GROUP BY account
)
SELECT h.*, a.*, sl.*, r.account, r.value FROM head h CROSS JOIN at a CROSS JOIN seal sl LEFT JOIN ranked r ON true
 ORDER BY r.value DESC, r.account COLLATE "C" ASC`;
  /** What a ranking's statement asks of its seal: always (none is read at a final block: contract.ts Seal). */
  const rankingSeal = sealValues({ from: null });

  /**
   * Both feeds' rows in one shape (lock_event: the lock's fields; protocol_event: the event's own). A lock's end is
   * getLockInfo's at the event's block: a live AutoMax lock's is that block's time + 365 days, never the stored end
   * (protocol.md §8; shapes.ts eventJson by effectiveLockEnd).
   */
  const feed = (ev: SQL, t: Tables, where: (other: SQL) => SQL, tail: SQL) => sql`lk AS (
  SELECT e.kind, e.account, e.recipient AS other,
         jsonb_build_object('tokenId', e.token_id::text, 'amount', e.amount::text, 'fromTokenId', e.from_token_id::text,
           'owner', e.owner, 'lockAmount', e.lock_amount::text,
           'lockEnd', (CASE WHEN e.auto_max AND e.lock_amount <> 0
             THEN e.block_time + ${sql.raw(MAX_LOCK_DURATION.toString())} ELSE e.lock_end END)::text, 'autoMax', e.auto_max,
           'listed', e.listed, 'burned', e.burned) AS data,
         e.block_number, e.block_time, e.tx_hash, e.log_index
    FROM ${ev} e, at WHERE at.in_range AND e.block_number <= at.at_block AND ${where(sql.raw("e.recipient"))}
   ORDER BY e.block_number DESC, e.log_index DESC ${tail}
), pe AS (
  SELECT e.kind, e.account, e.other, e.data::jsonb AS data, e.block_number, e.block_time, e.tx_hash, e.log_index
    FROM ${t.protocol} e, at WHERE at.in_range AND e.block_number <= at.at_block AND ${where(sql.raw("e.other"))}
   ORDER BY e.block_number DESC, e.log_index DESC ${tail}
)`;
  /**
   * The tables the rows are read from, as "name:oid" (null: none), in the catalog alone: the checkpoint view's table's
   * schema (views), else the schema itself. `schema`: the views schema's name, as a parameter.
   */
  const sourceOf = (schema: SQL) => sql`coalesce(
  (SELECT DISTINCT tn.nspname || ':' || tn.oid FROM pg_class v
     JOIN pg_namespace vn ON vn.oid = v.relnamespace
     JOIN pg_rewrite r ON r.ev_class = v.oid
     JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass
     JOIN pg_class t ON t.oid = d.refobjid AND t.oid <> v.oid
     JOIN pg_namespace tn ON tn.oid = t.relnamespace
    WHERE vn.nspname = ${schema} AND v.relname = '_ponder_checkpoint' AND v.relkind = 'v'
      AND t.relname = '_ponder_checkpoint'),
  (SELECT n.nspname || ':' || n.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ${schema} AND c.relname = '_ponder_checkpoint' AND c.relkind <> 'v'))`;
  const readSource = async (): Promise<string | null> => {
    // The checkpoint view's table's schema (views), else the schema itself: one catalog statement, no index row.
    const rows = await rowsOf(db, sql`SELECT ${sourceOf(sql`${await resolveSchema()}`)} AS source`);
    const source = rows[0]?.source;
    return typeof source === "string" ? source : null;
  };
  const activityRow = (r: Row): ActivityRow => ({
    kind: String(r.kind),
    account: String(r.account) as Address,
    other: hexOrNull<Address>(r.other),
    data: (typeof r.data === "string" ? JSON.parse(r.data) : r.data) as ActivityRow["data"],
    blockNumber: big(r.block_number),
    blockTime: big(r.block_time),
    txHash: String(r.tx_hash) as Hex,
    logIndex: Number(r.log_index),
  });

  return {
    async probe(block, signal) {
      const rows = await run(
        "probe",
        null,
        { probe: text(block) },
        (ev, p) => sql`ev_time AS (SELECT block_time FROM ${ev} WHERE block_number = ${p("probe")}::numeric LIMIT 1)
SELECT h.*, a.*, (SELECT block_time FROM ev_time) AS event_time FROM head h, at a`,
        false,
        signal,
      );
      const r = answer(rows, (rs) => rs[0]);
      return {
        head: r.head,
        eventTime: bigOrNull(rows[0]?.event_time),
        finalizedTime: bigOrNull(rows[0]?.finalized_time),
      };
    },

    async lock(tokenId, at, signal) {
      const rows = await run(
        "lock",
        at,
        { id: tokenId.toString() },
        (ev, p) => sql`cur AS (
  SELECT e.owner, e.lock_amount, e.lock_end, e.auto_max, e.listed, e.burned
    FROM ${ev} e, at WHERE at.in_range AND e.token_id = ${p("id")}::numeric AND e.block_number <= at.at_block
   ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1
), gone AS (
  SELECT 1 AS merged_away FROM ${ev} m, at
   WHERE m.from_token_id = ${p("id")}::numeric AND m.block_number <= at.at_block LIMIT 1
), born AS (
  SELECT e.block_number AS created_block FROM ${ev} e WHERE e.token_id = ${p("id")}::numeric AND e.kind = 'create' LIMIT 1
)
SELECT h.*, a.*, c.*, g.merged_away, b.created_block, (c.lock_amount IS NOT NULL) AS minted
  FROM head h CROSS JOIN at a LEFT JOIN cur c ON true LEFT JOIN gone g ON true LEFT JOIN born b ON true`,
        false,
        signal,
      );
      return answer(rows, (rs) => {
        const r = rs[0];
        if (r?.minted !== true) return null;
        const lock = lockFrom(r, tokenId);
        return r.merged_away == null
          ? lock
          : { ...lock, owner: null, amount: 0n, lockEnd: 0n, autoMax: false, listed: false, burned: true };
      });
    },

    async locksOf(owner, at, signal, seal) {
      // Candidates: the locks the owner created, and those it received (a sell-back's Furnace); then each one's
      // state at the block, kept when it is still the owner's and live.
      const rows = await run(
        "locks_of",
        at,
        { who: owner.toLowerCase(), ...sealValues(seal) },
        (ev, p, _lock, t) => sql`${sealed(ev, t, p)}, cand AS (
  SELECT e.token_id FROM ${ev} e, at
   WHERE at.in_range AND e.account = ${p("who")} AND e.kind = 'create' AND e.block_number <= at.at_block
  UNION
  SELECT e.token_id FROM ${ev} e, at WHERE at.in_range AND e.recipient = ${p("who")} AND e.block_number <= at.at_block
), cur AS (
  SELECT c.token_id, s.*, (SELECT min(b.block_number) FROM ${ev} b WHERE b.token_id = c.token_id) AS created_block
    FROM cand c, at, LATERAL (
      SELECT e.owner, e.lock_amount, e.lock_end, e.auto_max, e.listed, e.burned FROM ${ev} e
       WHERE e.token_id = c.token_id AND e.block_number <= at.at_block
       ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1) s
   WHERE NOT s.burned AND s.owner = ${p("who")}
     AND NOT EXISTS (SELECT 1 FROM ${ev} m WHERE m.from_token_id = c.token_id AND m.block_number <= at.at_block)
)
SELECT h.*, a.*, s.*, c.* FROM head h CROSS JOIN at a CROSS JOIN seal s LEFT JOIN cur c ON true ORDER BY c.token_id`,
        false,
        signal,
      );
      return answer(rows, (rs) => rs.filter((r) => r.token_id != null).map((r) => lockFrom(r, big(r.token_id))));
    },

    async events(of, at, page, signal) {
      const byToken = "tokenId" in of;
      const values: Values = {
        kb: text(page.after?.block),
        kl: page.after === null ? null : String(page.after.logIndex),
        n: String(page.limit),
        who: byToken ? of.tokenId.toString() : of.account.toLowerCase(),
        ...sealValues(page.seal),
      };
      // Each side is an ordered range scan of its own index, cut at `limit`; the union is cut again.
      const side = (ev: SQL, p: Param, where: SQL) => sql`(SELECT e.* FROM ${ev} e, at
   WHERE at.in_range AND ${where} AND e.block_number <= at.at_block
     AND (e.block_number, e.log_index) < (coalesce(${p("kb")}::bigint, at.at_block + 1), coalesce(${p("kl")}::integer, 0))
   ORDER BY e.block_number DESC, e.log_index DESC LIMIT ${p("n")}::integer)`;
      const rows = await run(
        byToken ? "events_of_lock" : "events_of_account",
        at,
        values,
        (ev, p, _lock, t) => {
          const [first, second] = byToken
            ? [sql`e.token_id = ${p("who")}::numeric`, sql`e.from_token_id = ${p("who")}::numeric`]
            : [sql`e.account = ${p("who")}`, sql`e.recipient = ${p("who")} AND e.account <> ${p("who")}`];
          return sql`${sealed(ev, t, p)}, page AS (
  SELECT * FROM (${side(ev, p, first)} UNION ALL ${side(ev, p, second)}) u
   ORDER BY block_number DESC, log_index DESC LIMIT ${p("n")}::integer
)
SELECT h.*, a.*, s.*, p.* FROM head h CROSS JOIN at a CROSS JOIN seal s LEFT JOIN page p ON true
 ORDER BY p.block_number DESC, p.log_index DESC`;
        },
        false,
        signal,
      );
      return answer(rows, (rs) =>
        rs
          .filter((r) => r.id != null)
          .map(
            (r): LockEventState => ({
              kind: String(r.kind),
              tokenId: big(r.token_id),
              account: String(r.account) as Address,
              amount: bigOrNull(r.amount),
              lockEnd: big(r.lock_end),
              autoMax: r.auto_max === true,
              fromTokenId: bigOrNull(r.from_token_id),
              recipient: hexOrNull<Address>(r.recipient),
              owner: hexOrNull<Address>(r.owner),
              lockAmount: big(r.lock_amount),
              listed: r.listed === true,
              burned: r.burned === true,
              blockNumber: big(r.block_number),
              blockTime: big(r.block_time),
              txHash: String(r.tx_hash) as Hex,
              logIndex: Number(r.log_index),
            }),
          ),
      );
    },

    async board(board, window, at) {
      const span = BOARD_WINDOWS[window];
      const values: Values = {
        board,
        fold: BOARD_FOLD[board],
        w: span === null ? null : span.toString(),
        ...rankingSeal,
      };
      if (span !== null) {
        // A window [s, t] (inclusive at its start, as the reference's board SQL: `evt_block_time >= now() − w`): its
        // whole hours [lo, hi) from board_hour (lo the first hour start ≥ s); the partial hours at its edges, [s, lo)
        // and [hi, t] (blocks ≤ the block: a later block of the same second), from board_entry.
        const rows = await run(
          "board_window",
          at,
          values,
          (ev, p, _lock, t) => sql`w AS (
  SELECT a.at_time - ${p("w")}::bigint AS s, div(a.at_time - ${p("w")}::bigint + ${H} - 1, ${H}) * ${H} AS lo,
         div(a.at_time, ${H}) * ${H} AS hi
    FROM at a
), parts AS (
  SELECT x.account, x.total, x.count::numeric AS cnt, x.max FROM ${t.hour} x, w, at
   WHERE at.in_range AND x.board = ${p("board")}::text AND x.hour >= w.lo AND x.hour < w.hi
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, w, at
   WHERE at.in_range AND e.board = ${p("board")}::text AND e.block_time >= w.s AND e.block_time < w.lo
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, w, at
   WHERE at.in_range AND e.board = ${p("board")}::text AND e.block_time >= w.hi AND e.block_number <= at.at_block
), ${ranked(ev, t, p)}`,
          true,
        );
        return boardAnswer(rows);
      }
      // Lifetime: an account whose last contribution is at or below the block is its board_total row; one changed
      // since is summed again from its hours before the block's hour and its entries of that hour up to the block.
      const rows = await run(
        "board_lifetime",
        at,
        values,
        (ev, p, _lock, t) => sql`hi AS (SELECT div(a.at_time, ${H}) * ${H} AS hi FROM at a
), changed AS (
  SELECT x.account FROM ${t.total} x, at
   WHERE at.in_range AND x.board = ${p("board")}::text AND x.last_block > at.at_block
), parts AS (
  SELECT x.account, x.total, x.count::numeric AS cnt, x.max FROM ${t.total} x, at
   WHERE at.in_range AND x.board = ${p("board")}::text AND x.last_block <= at.at_block
  UNION ALL
  SELECT x.account, x.total, x.count::numeric, x.max FROM changed c, hi, ${t.hour} x
   WHERE x.board = ${p("board")}::text AND x.account = c.account AND x.hour < hi.hi
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, hi, at
   WHERE e.board = ${p("board")}::text AND e.block_time >= hi.hi AND e.block_number <= at.at_block
     AND e.account IN (SELECT account FROM changed)
), ${ranked(ev, t, p)}`,
        true,
      );
      return boardAnswer(rows);
    },

    async boardDelta(board, window, from, at) {
      const span = BOARD_WINDOWS[window];
      const values: Values = {
        board,
        fold: BOARD_FOLD[board],
        w: span === null ? null : span.toString(),
        fb: from.block.toString(),
        ft: from.time.toString(),
        ...rankingSeal,
      };
      // The accounts whose value can differ between the two blocks: an entry of a block between them, or (a window)
      // an entry whose time lies between the two windows' starts, [earlier start, later start) (a window includes
      // its start). Blocks between two blocks have times between theirs, so both conditions range the edge index
      // (board, block_time, …).
      const changed = (t: Tables, p: Param) => sql`changed AS (
  SELECT e.account FROM ${t.entry} e, at
   WHERE at.in_range AND e.board = ${p("board")}::text
     AND e.block_time >= least(${p("ft")}::bigint, at.at_time) AND e.block_time <= greatest(${p("ft")}::bigint, at.at_time)
     AND e.block_number > least(${p("fb")}::bigint, at.at_block) AND e.block_number <= greatest(${p("fb")}::bigint, at.at_block)
  UNION
  SELECT e.account FROM ${t.entry} e, at
   WHERE at.in_range AND e.board = ${p("board")}::text AND ${p("w")}::bigint IS NOT NULL
     AND e.block_time >= least(${p("ft")}::bigint, at.at_time) - ${p("w")}::bigint
     AND e.block_time < greatest(${p("ft")}::bigint, at.at_time) - ${p("w")}::bigint
)`;
      // Every changed account with its value at the block (NOT_RANKED when it has no entry in the window): the same
      // sums as board(), for them.
      // Their buckets are read per account (LATERAL … OFFSET 0 keeps the planner from hashing the window's buckets:
      // it guesses thousands of changed accounts where there are a few).
      const valued = (ev: SQL, t: Tables, p: Param) => sql`${sealed(ev, t, p)}, ranked AS (
  SELECT account, CASE ${p("fold")}::text WHEN 'max' THEN max(max) WHEN 'count' THEN sum(cnt) ELSE sum(total) END AS value
    FROM parts GROUP BY account
)
SELECT h.*, a.*, sl.*, c.account, coalesce(r.value, ${sql.raw(NOT_RANKED.toString())}) AS value
  FROM head h CROSS JOIN at a CROSS JOIN seal sl LEFT JOIN (changed c LEFT JOIN ranked r ON r.account = c.account) ON true`;
      const rows =
        span !== null
          ? await run(
              "board_window_delta",
              at,
              values,
              (ev, p, _lock, t) => sql`w AS (
  SELECT a.at_time - ${p("w")}::bigint AS s, div(a.at_time - ${p("w")}::bigint + ${H} - 1, ${H}) * ${H} AS lo,
         div(a.at_time, ${H}) * ${H} AS hi
    FROM at a
), ${changed(t, p)}, parts AS (
  SELECT x.account, x.total, x.cnt, x.max FROM changed c CROSS JOIN w CROSS JOIN LATERAL (
    SELECT h.account, h.total, h.count::numeric AS cnt, h.max FROM ${t.hour} h
     WHERE h.board = ${p("board")}::text AND h.account = c.account AND h.hour >= w.lo AND h.hour < w.hi OFFSET 0) x
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, w
   WHERE e.board = ${p("board")}::text AND e.block_time >= w.s AND e.block_time < w.lo
     AND e.account IN (SELECT account FROM changed)
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, w, at
   WHERE e.board = ${p("board")}::text AND e.block_time >= w.hi AND e.block_number <= at.at_block
     AND e.account IN (SELECT account FROM changed)
), ${valued(ev, t, p)}`,
              false,
            )
          : await run(
              "board_lifetime_delta",
              at,
              values,
              (ev, p, _lock, t) => sql`hi AS (SELECT div(a.at_time, ${H}) * ${H} AS hi FROM at a
), ${changed(t, p)}, mine AS (
  SELECT x.* FROM changed c CROSS JOIN LATERAL (
    SELECT t.account, t.total, t.count, t.max, t.last_block FROM ${t.total} t
     WHERE t.board = ${p("board")}::text AND t.account = c.account OFFSET 0) x
), later AS (
  SELECT m.account FROM mine m, at WHERE m.last_block > at.at_block
), parts AS (
  SELECT m.account, m.total, m.count::numeric AS cnt, m.max FROM mine m, at WHERE m.last_block <= at.at_block
  UNION ALL
  SELECT x.account, x.total, x.cnt, x.max FROM later c CROSS JOIN hi CROSS JOIN LATERAL (
    SELECT h.account, h.total, h.count::numeric AS cnt, h.max FROM ${t.hour} h
     WHERE h.board = ${p("board")}::text AND h.account = c.account AND h.hour < hi.hi OFFSET 0) x
  UNION ALL
  SELECT e.account, e.value, 1, e.value FROM ${t.entry} e, hi, at
   WHERE e.board = ${p("board")}::text AND e.block_time >= hi.hi AND e.block_number <= at.at_block
     AND e.account IN (SELECT account FROM later)
), ${valued(ev, t, p)}`,
              false,
            );
      return boardAnswer(rows);
    },

    async activity(filter, at, page, signal) {
      const values: Values = {
        kinds: filter.kinds === null ? null : filter.kinds.join(","),
        who: filter.account === null ? null : filter.account.toLowerCase(),
        kb: text(page.after?.block),
        kl: page.after === null ? null : String(page.after.logIndex),
        n: String(page.limit),
        ...sealValues(page.seal),
      };
      const rows = await run(
        "activity",
        at,
        values,
        (ev, p, _lock, t) => {
          const where = (other: SQL) =>
            sql`(${p("kinds")}::text IS NULL OR e.kind = ANY(string_to_array(${p("kinds")}::text, ',')))
     AND (${p("who")}::text IS NULL OR e.account = ${p("who")}::text OR ${other} = ${p("who")}::text)
     AND (e.block_number, e.log_index) < (coalesce(${p("kb")}::bigint, at.at_block + 1), coalesce(${p("kl")}::integer, 0))`;
          return sql`${feed(ev, t, where, sql`LIMIT ${p("n")}::integer`)}, ${sealed(ev, t, p)}, page AS (
  SELECT * FROM (SELECT * FROM lk UNION ALL SELECT * FROM pe) u ORDER BY block_number DESC, log_index DESC LIMIT ${p("n")}::integer
)
SELECT h.*, a.*, s.*, p.* FROM head h CROSS JOIN at a CROSS JOIN seal s LEFT JOIN page p ON true
 ORDER BY p.block_number DESC, p.log_index DESC`;
        },
        false,
        signal,
      );
      return answer(rows, (rs) => rs.filter((r) => r.kind != null).map(activityRow));
    },

    async activitySpan(account, at, signal) {
      // Each bound is one index range scan per side (the account and receiver indexes lead with the account).
      const rows = await run(
        "activity_span",
        at,
        { who: account.toLowerCase() },
        (ev, p, _lock, t) => {
          const side = (table: SQL, col: string, dir: "ASC" | "DESC") =>
            sql`(SELECT e.block_number FROM ${table} e, at WHERE at.in_range AND e.${sql.raw(col)} = ${p("who")}::text
     AND e.block_number <= at.at_block ORDER BY e.block_number ${sql.raw(dir)} LIMIT 1)`;
          const bound = (dir: "ASC" | "DESC", agg: string) =>
            sql`${sql.raw(agg)}(x) FROM (VALUES (${side(ev, "account", dir)}), (${side(ev, "recipient", dir)}),
       (${side(t.protocol, "account", dir)}), (${side(t.protocol, "other", dir)})) v(x)`;
          return sql`span AS (SELECT (SELECT ${bound("ASC", "min")}) AS first_block, (SELECT ${bound("DESC", "max")}) AS last_block)
SELECT h.*, a.*, s.* FROM head h CROSS JOIN at a CROSS JOIN span s`;
        },
        false,
        signal,
      );
      return answer(rows, (rs) => {
        const r = rs[0];
        return r?.first_block == null ? null : { first: big(r.first_block), last: big(r.last_block) };
      });
    },

    async activityItem(txHash, logIndex, at, signal) {
      const rows = await run(
        "activity_item",
        at,
        { tx: txHash.toLowerCase(), li: String(logIndex) },
        (ev, p, _lock, t) => {
          const where = () => sql`e.tx_hash = ${p("tx")}::text AND e.log_index = ${p("li")}::integer`;
          return sql`${feed(ev, t, where, sql`LIMIT 1`)}, item AS (SELECT * FROM lk UNION ALL SELECT * FROM pe)
SELECT h.*, a.*, i.* FROM head h CROSS JOIN at a LEFT JOIN item i ON true`;
        },
        false,
        signal,
      );
      return answer(rows, (rs) => {
        const r = rs.find((x) => x.kind != null);
        return r === undefined ? null : activityRow(r);
      });
    },

    async holders(at) {
      const rows = await run(
        "holders",
        at,
        rankingSeal,
        (ev, p, lock, t) => sql`${liveLocks(ev, lock, p)}, ${sealed(ev, t, p)}, board AS (
  SELECT owner, sum(ve) AS holder_ve, sum(lock_amount) AS locked, count(*) AS locks
    FROM ve GROUP BY owner HAVING sum(ve) > 0
)
SELECT h.*, a.*, sl.*, (
  SELECT string_agg(owner || ' ' || holder_ve || ' ' || locked || ' ' || locks, ' '
                    ORDER BY holder_ve DESC, owner COLLATE "C" ASC) FROM board
) AS ranked FROM head h CROSS JOIN at a CROSS JOIN seal sl`,
        true,
      );
      return answer(rows, (rs) => textRanking(rs[0]?.ranked));
    },

    async veLocks(at) {
      const rows = await run(
        "ve_locks",
        at,
        {},
        (ev, p, lock) => sql`${liveLocks(ev, lock, p)}
SELECT h.*, a.*, l.token_id, l.owner, l.lock_amount, l.lock_end, l.auto_max
  FROM head h CROSS JOIN at a LEFT JOIN live l ON true`,
        true,
      );
      return {
        ...answer(rows, (rs) => rs.filter((r) => r.token_id != null).map(liveLockOf)),
        finalizedTime: bigOrNull(rows[0]?.finalized_time),
      };
    },

    async veLockDelta(from, at) {
      // The locks with an event in the blocks between (or merged away there), each read at the block from its newest
      // event at or before it, as liveLocks reads a changed lock: one index entry per lock.
      const rows = await run(
        "ve_lock_delta",
        at,
        { fb: from.block.toString(), ...rankingSeal },
        // The events' own locks and the locks merged away by them, from one scan of the blocks' events (a second scan
        // by from_token_id was a third of the statement at Base scale).
        (ev, p, _lock, t) => sql`${sealed(ev, t, p)}, changed AS (
  SELECT DISTINCT t.token_id FROM ${ev} e CROSS JOIN at
   CROSS JOIN LATERAL (VALUES (e.token_id), (e.from_token_id)) t(token_id)
   WHERE at.in_range AND e.block_number > least(${p("fb")}::bigint, at.at_block)
     AND e.block_number <= greatest(${p("fb")}::bigint, at.at_block) AND t.token_id IS NOT NULL
), state AS (
  SELECT c.token_id, s.owner, s.lock_amount, s.lock_end, s.auto_max,
         coalesce(NOT s.burned, false) AND NOT EXISTS (
           SELECT 1 FROM ${ev} m WHERE m.from_token_id = c.token_id AND m.block_number <= at.at_block) AS live
    FROM changed c CROSS JOIN at LEFT JOIN LATERAL (
      SELECT e.owner, e.lock_amount, e.lock_end, e.auto_max, e.burned FROM ${ev} e
       WHERE e.token_id = c.token_id AND e.block_number <= at.at_block
       ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1) s ON true
)
SELECT h.*, a.*, sl.*, s.token_id, s.owner, s.lock_amount, s.lock_end, s.auto_max, s.live
  FROM head h CROSS JOIN at a CROSS JOIN seal sl LEFT JOIN state s ON true ORDER BY s.token_id`,
        false,
      );
      return {
        ...answer(rows, (rs) =>
          rs
            .filter((r) => r.token_id != null)
            .map((r) => ({ tokenId: big(r.token_id), lock: r.live === true ? liveLockOf(r) : null })),
        ),
        finalizedTime: bigOrNull(rows[0]?.finalized_time),
      };
    },

    async stats(at) {
      const rows = await run(
        "stats",
        at,
        {},
        (ev, p, lock) => sql`${liveLocks(ev, lock, p)}, totals AS (
  SELECT coalesce(sum(lock_amount), 0) AS total_locked, coalesce(sum(ve), 0) AS total_ve,
         count(DISTINCT owner) AS holders, count(*) AS live_locks,
         count(*) FILTER (WHERE auto_max) AS auto_max_locks,
         coalesce(sum(lock_amount) FILTER (WHERE auto_max), 0) AS auto_max_locked,
         coalesce(sum(lock_amount) FILTER (WHERE NOT auto_max AND lock_end <= (SELECT at_time FROM at)), 0) AS expired_locked
    FROM ve
), ve_holders AS (
  SELECT count(*) AS ve_holders FROM (SELECT owner FROM ve GROUP BY owner HAVING sum(ve) > 0) x
), weeks AS (
  SELECT json_agg(json_build_object('w', w::text, 'a', amount::text)) AS unlocks FROM (
    SELECT div(lock_end, ${sql.raw(WEEK.toString())}) AS w, sum(lock_amount) AS amount
      FROM ve, at WHERE NOT auto_max AND lock_end > at.at_time GROUP BY 1) x
)
SELECT h.*, a.*, t.*, v.*, w.unlocks FROM head h CROSS JOIN at a CROSS JOIN totals t CROSS JOIN ve_holders v
 CROSS JOIN weeks w`,
        true,
      );
      return answer(rows, (rs) => {
        const r = rs[0] ?? {};
        // json arrives parsed (node-postgres, PGlite) or as text (a proxy); the figures inside are text.
        const raw = typeof r.unlocks === "string" ? JSON.parse(r.unlocks) : r.unlocks;
        const weeks = (Array.isArray(raw) ? raw : []) as { w: string; a: string }[];
        return {
          totalLocked: big(r.total_locked ?? 0),
          totalVe: big(r.total_ve ?? 0),
          holders: Number(r.holders ?? 0),
          veHolders: Number(r.ve_holders ?? 0),
          liveLocks: Number(r.live_locks ?? 0),
          autoMaxLocks: Number(r.auto_max_locks ?? 0),
          autoMaxLocked: big(r.auto_max_locked ?? 0),
          expiredLocked: big(r.expired_locked ?? 0),
          unlocksByWeek: new Map(weeks.map((x) => [BigInt(x.w), BigInt(x.a)])),
        };
      });
    },

    async changes(from, to, since) {
      const rows = await run(
        "changes",
        null,
        { f: from.toString(), u: to.toString(), pt: text(since) },
        (ev, p, _lock, t) => {
          const inRange = sql`e.block_number BETWEEN ${p("f")}::bigint AND least(${p("u")}::bigint, head.head_block)`;
          // The windows an entry can leave; the boards by name, so the edge index (board, block_time) is ranged.
          const windows = Object.entries(BOARD_WINDOWS).filter(([, w]) => w !== null);
          const wins = sql.raw(windows.map(([label, w]) => `(${w}::bigint, '${label}')`).join(", "));
          const boards = sql.raw(DURATION_BOARDS.map((b) => `'${b}'`).join(", "));
          return sql`lk AS (
  SELECT e.kind, e.block_number, e.block_time, e.token_id, e.from_token_id, e.account, e.recipient AS other, e.owner
    FROM ${ev} e, head WHERE ${inRange}
), pe AS (
  SELECT e.kind, e.block_number, e.block_time, e.account, e.other FROM ${t.protocol} e, head WHERE ${inRange}
), marks AS (
  SELECT block_number AS mb, block_time AS mt FROM lk UNION SELECT block_number, block_time FROM pe
  UNION
  SELECT least(${p("u")}::bigint, h.head_block),
         CASE WHEN ${p("u")}::bigint >= h.head_block THEN h.head_time
              ELSE (SELECT e.block_time FROM ${ev} e WHERE e.block_number = ${p("u")}::bigint LIMIT 1) END
    FROM head h
), wins(w, label) AS (VALUES ${wins}
), exits AS (
  SELECT DISTINCT x.board, wins.label,
         (SELECT min(m.mb) FROM marks m WHERE m.mt - wins.w > x.block_time) AS block_number
    FROM ${t.entry} x, wins
   WHERE ${p("pt")}::bigint IS NOT NULL AND x.board IN (${boards})
     AND x.block_time >= ${p("pt")}::bigint - wins.w AND x.block_time < (SELECT max(mt) FROM marks) - wins.w
), rows AS (
  SELECT true AS lock, kind, block_number, token_id, from_token_id, account, other, owner,
         NULL::text AS board, NULL::text AS win FROM lk
  UNION ALL
  SELECT false, kind, block_number, NULL::numeric, NULL::numeric, account, other, NULL::text, NULL, NULL FROM pe
  UNION ALL
  SELECT false, NULL, block_number, NULL, NULL, NULL, NULL, NULL, board, label FROM exits
)
SELECT h.*, a.*, r.* FROM head h CROSS JOIN at a LEFT JOIN rows r ON true ORDER BY r.block_number`;
        },
      );
      return answer(rows, (rs) => {
        const out: BlockChange[] = [];
        for (const r of rs) {
          if (r.block_number == null) continue;
          const block = big(r.block_number);
          if (r.board != null) {
            const exit = { board: String(r.board), window: String(r.win) } as BoardExit;
            out.push({ block, tokenIds: [], accounts: [], kind: null, lock: false, exit });
            continue;
          }
          const tokenIds =
            r.token_id == null ? [] : [big(r.token_id), ...(r.from_token_id == null ? [] : [big(r.from_token_id)])];
          const accounts = [r.account, r.other, r.owner].filter((x) => x != null).map((x) => String(x) as Address);
          out.push({ block, tokenIds, accounts, kind: String(r.kind), lock: r.lock === true, exit: null });
        }
        return out;
      });
    },

    source: readSource,

    async sourceHead() {
      // The catalog's answer beside the head's, in the head's statement. A statement that fails (its tables not there
      // to plan it against: the views dropped) says nothing of the source: the catalog alone does, as `source` then
      // `probe` would have (none: null; one: the failure stands, as the probe's).
      let rows: Row[];
      try {
        rows = await run(
          "source",
          null,
          { s: await resolveSchema() },
          (_ev, p) => sql`src AS (SELECT ${sourceOf(p("s"))} AS source)
SELECT h.*, a.*, s.source FROM src s LEFT JOIN head h ON true LEFT JOIN at a ON true`,
        );
      } catch (error) {
        if ((await readSource()) === null) return null;
        throw error;
      }
      const source = rows[0]?.source;
      if (typeof source !== "string") return null;
      return { source, head: answer(rows[0]?.head_block == null ? [] : rows, () => null).head };
    },

    async journal(kept) {
      const schema = await resolveSchema();
      if (journals?.schema !== schema) {
        const rows = await rowsOf(
          db,
          sql`SELECT tablename FROM pg_tables WHERE schemaname = ${schema} AND left(tablename, 8) = '_reorg__' ORDER BY 1`,
        );
        // Listed again until there are some: Ponder creates its tables after the API may first ask.
        const tables = rows.map((r) => String(r.tablename));
        if (tables.length === 0) return null;
        journals = { schema, tables };
      }
      // Each journal's newest entry and the one asked about by its primary key (operation_id): index lookups only.
      const each = (what: (table: SQL) => SQL) =>
        sql.join(
          journals!.tables.map((name) => sql`(${what(sql`${sql.identifier(schema)}.${sql.identifier(name)}`)})`),
          sql` UNION ALL `,
        );
      const newest = each((j) => sql`SELECT operation_id, checkpoint FROM ${j} ORDER BY operation_id DESC LIMIT 1`);
      const asked =
        kept === null
          ? sql`true`
          : sql`EXISTS (${each((j) => sql`SELECT 1 FROM ${j} WHERE operation_id = ${Number(kept)}`)})`;
      const rows = await timedQuery(options.onQuery, "index_journal", () =>
        rowsOf(
          db,
          sql`SELECT n.operation_id::text AS newest_id, substring(n.checkpoint FROM 27 FOR 16) AS newest_block,
  ${asked} AS kept, c.latest_checkpoint AS latest,
  substring(c.latest_checkpoint FROM 27 FOR 16) AS head_block,
  substring(c.finalized_checkpoint FROM 27 FOR 16) AS finalized_block,
  (SELECT string_agg(t.oid::text, ',' ORDER BY t.oid) FROM pg_catalog.pg_trigger t
     JOIN pg_catalog.pg_class r ON r.oid = t.tgrelid JOIN pg_catalog.pg_namespace s ON s.oid = r.relnamespace
    WHERE s.nspname = ${schema} AND t.tgname = 'reorg') AS triggers
FROM (SELECT latest_checkpoint, finalized_checkpoint FROM ${sql.identifier(schema)}.${sql.identifier("_ponder_checkpoint")}
       ORDER BY latest_checkpoint LIMIT 1) c
LEFT JOIN (SELECT * FROM (${newest}) u ORDER BY operation_id DESC LIMIT 1) n ON true`,
        ),
      );
      const r = rows[0];
      if (r === undefined) return null;
      return {
        newest: r.newest_id == null ? null : { id: big(r.newest_id), block: big(r.newest_block) },
        kept: r.kept === true || r.kept === "t",
        latest: String(r.latest),
        head: big(r.head_block),
        finalized: big(r.finalized_block),
        triggers: r.triggers == null ? null : String(r.triggers),
      } satisfies JournalMark;
    },

    async finalEvent(signal) {
      // Ordered by block alone, so each side is one backward scan of its block index (any event of the block will do).
      const rows = await run(
        "final_event",
        null,
        {},
        (ev, _p, _lock, t) => sql`fe AS (
  SELECT * FROM (
    (SELECT e.block_number, e.tx_hash FROM ${ev} e, head h WHERE e.block_number <= h.finalized_block
      ORDER BY e.block_number DESC LIMIT 1)
    UNION ALL
    (SELECT e.block_number, e.tx_hash FROM ${t.protocol} e, head h WHERE e.block_number <= h.finalized_block
      ORDER BY e.block_number DESC LIMIT 1)) u
   ORDER BY block_number DESC LIMIT 1
)
SELECT h.*, a.*, f.block_number AS final_block, f.tx_hash AS final_tx FROM head h CROSS JOIN at a LEFT JOIN fe f ON true`,
        false,
        signal,
      );
      return answer(rows, (rs) => {
        const r = rs[0];
        return r?.final_block == null ? null : { block: big(r.final_block), txHash: String(r.final_tx) as Hex };
      });
    },

    async seal(at, ask, signal, basis) {
      const rows = await run(
        "seal",
        at,
        { ...sealValues(ask), pb: text(basis) },
        // With a basis block (a ranking carried from its statement: cursorSeal.ts), in the same snapshot: the digest of
        // the seal's range up to it, and the lock events after it as a notification carries them (indexSignal.ts).
        (ev, p, _lock, t) => sql`${sealed(ev, t, p)}, basis AS (
  SELECT CASE WHEN s.seal_from IS NOT NULL THEN ${eventsDigest(ev, t, sql`s.seal_from`, sql`${p("pb")}::bigint`)} END AS basis_digest,
         (SELECT string_agg(r.line, ';' ORDER BY r.block_number, r.log_index) FROM (
            SELECT ${sql.raw(CARRIED_COLUMNS)} AS line, e.block_number, e.log_index FROM ${ev} e
             WHERE e.block_number > ${p("pb")}::bigint AND e.block_number <= a.at_block) r) AS basis_lines
    FROM seal s CROSS JOIN at a WHERE ${p("pb")}::bigint IS NOT NULL AND a.in_range
)
SELECT h.*, a.*, s.*, b.* FROM head h CROSS JOIN at a CROSS JOIN seal s LEFT JOIN basis b ON true`,
        false,
        signal,
      );
      return answer(rows, (rs): BasisFound | null => {
        const r = rs[0];
        if (basis === undefined || r === undefined) return null;
        const digest = r.basis_digest == null ? null : cutDigest(r.basis_digest);
        return { digest, lines: r.basis_lines == null ? "" : String(r.basis_lines) };
      });
    },
  };
}

/**
 * The seal's range starts at a multiple of this many blocks below Ponder's finalized one (2 minutes on Base), so a
 * first page at a block not yet final says the same cursor while the finalized block moves on: its body, and so its
 * ETag, stay the same and a revalidation is a 304. It costs at most this many blocks' events more in the digest.
 */
export const SEAL_STEP = 64n;

/** A statement's seal columns: null when none was read (a final block); the digest cut to 96 bits. */
function sealOf(row: Row): Seal | null {
  if (row.seal_digest == null) return null;
  return { from: big(row.seal_from), digest: cutDigest(row.seal_digest) };
}

/** An md5 digest (hex) as a seal carries it: 96 bits of base64url. */
const cutDigest = (md5: unknown): string => Buffer.from(String(md5), "hex").subarray(0, 12).toString("base64url");
