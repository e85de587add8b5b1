/**
 * One signal per indexed block, for every API process: Postgres LISTEN/NOTIFY fed by the indexer's own commit.
 *
 * Ponder 0.17.7 indexes a realtime block in one transaction that writes the block's rows and then updates its one
 * `_ponder_checkpoint` row (`latest_checkpoint`; runtime/multichain.js, "update_checkpoints"). A row trigger on that
 * table calls pg_notify with the new checkpoint, and Postgres delivers a NOTIFY only when its transaction commits:
 * the signal says exactly "the rows of block N are readable", never earlier, and a rolled-back block says nothing.
 * (pg_notify from an indexing handler would not do: Ponder buffers a handler's writes and flushes them later.)
 * A reorg revert writes no checkpoint; the next block's does, and may be past the old head (Ponder batches blocks when
 * busy). So the revert is heard itself: it deletes, in one transaction, the rows of Ponder's journal (`_reorg__*`, one
 * per table) above the fork (database/actions.js revertMultichain), and a statement trigger on each journal table
 * notifies the first deleted row's checkpoint on a second channel. Ponder's finalize deletes journal rows too, at or
 * below the finalized checkpoint; a revert's are above it, which tells the two apart. The revert is told with the next
 * head (`reverted`): only then is the new branch's state readable, and one head says both what was orphaned and where
 * to read again. A head below the last one is still a reorg where the revert's notification was lost.
 *
 * Why not Redis pub/sub: it would need one watcher process polling the database and publishing, an extra moving part
 * with its own failover; the trigger makes Postgres itself the publisher, and every replica already talks to it.
 *
 * Each notification also says whether the index's lock events were written since the last one: a statement trigger on
 * Ponder's `lock_event` table (every insert, update, delete and truncate, in any transaction: a block's rows, a
 * revert's deletes) advances a sequence in the views schema, and the checkpoint's notification carries the sequence's
 * value after the checkpoint (`writes`, "<oid>.<n>"; none when the trigger or the sequence is missing or disabled).
 * Two heads with the same `writes` have the same lock events at or below the older one and none above it, so what
 * is read of the lock events at the older holds at the newer (api/read/quietBlocks.ts). Sequences are not
 * transactional: a rolled-back write advances it too, which only says "written" when nothing was. The functions are
 * SECURITY DEFINER (the views schema's owner: Ponder's role needs no right on the sequence) and cannot fail Ponder's
 * transaction (a missing sequence is NULL, not an error).
 *
 * With the count, a block that wrote lock events carries them (`carried`, "<rewrites>:<old block>:<row>;<row>…",
 * `rewrites` a second sequence's "<oid>.<n>" counting only updates, deletes and truncates of the table): the checkpoint
 * trigger reads the lock events of the blocks between the checkpoint it replaces and the new one — an index range
 * scan by block, at most CARRIED_ROWS + 1 rows (about one Base block in thirty has any; a backfill's batch over the cap,
 * or rows past CARRIED_BYTES, carry none) — with the columns the changed-locks statement reads (api/read/atBlock.ts veLockDelta), so a process
 * that read the old block's changes can make the new block's without a statement (api/read/quietBlocks.ts). Only when
 * the checkpoint moves up; a failure there (the function's owner unable to read the table) carries nothing, inside a
 * block of its own, never failing Ponder's transaction.
 *
 * Each process holds ONE listening connection (not one per stream or client), reconnecting with exponential
 * back-off. NOTIFY is lost while that connection is down, and silently if the trigger disappears (a redeploy points
 * the views at a new Ponder schema): a slow poll of the head (one statement per process every `auditMs`, `pollMs`
 * while not listening) catches both; a head that moved without a notification counts as `missed`, and the triggers
 * are installed again. A revert lost with the connection is found when it listens again: Ponder makes its journal
 * triggers again in every revert's transaction, and their object ids, read on the connection as it listens, after
 * each revert heard and at each audit, differ from the last read's.
 *
 * A redeploy points the views at a new Ponder schema while the old indexer may keep committing to its own, whose
 * triggers would go on announcing heads the views do not have. So every notification names the schema of the table
 * whose trigger fired (its last word, `@<schema>`), and only those of the schema behind the views (as last read) are
 * told. That schema is read again (`recheck`) when a notification of another arrives, when a reader finds the index
 * below the head told, and when the index's source changes (api/read/runtime.ts); once it moved, the triggers are
 * installed on the new one and dropped from every other schema's tables.
 */

import type { IndexMark, JournalMark } from "./contract";

/** What the signal needs of a Postgres connection (node-postgres' Client has it). */
export type ListenConnection = {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error" | "end", listener: (error?: Error) => void): unknown;
  end(): Promise<void>;
};

export type IndexSignalOptions = {
  /** A new dedicated connection (not from a pool: it stays LISTENing). */
  connect: () => Promise<ListenConnection>;
  /** The views schema the API reads (`ponder start --views-schema`); its `_ponder_checkpoint` view names the table. */
  viewsSchema: string;
  /** The index's head now (one statement), for the poll. */
  head: () => Promise<bigint | null>;
  /** The poll while not listening. */
  pollMs?: number;
  /** The poll while listening (it only audits). */
  auditMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  onEvent?: (event: IndexSignalEvent) => void;
  onFailure?: (cause: unknown) => void;
};

/** For the metrics: how each head arrived, and the connection's changes. */
export type IndexSignalEvent = "notified" | "polled" | "missed" | "connected" | "disconnected";

/**
 * A reorg the index reverted since the last head: `from`, the first block it orphaned that had rows of ours (the new
 * head may be below it); `finalized`, the finalized block then (nothing at or below it was orphaned; a block between
 * it and `from` held no row of ours on the old branch but may on the new one).
 */
export type Reverted = { from: bigint; finalized: bigint };

/**
 * Told a new head's block, its time when the signal carries it (a NOTIFY's checkpoint does; a poll of the head
 * number does not), the reorg reverted before it when the signal heard one (the head may be above the last), and the
 * lock events' write count at its commit when the notification carries it (equal at two heads: no write between),
 * and the lock events of the blocks since the checkpoint it replaced when it carries those (`carried`).
 */
export type IndexSignalListener = (
  block: bigint,
  time?: bigint,
  reverted?: Reverted,
  writes?: string,
  carried?: string,
) => void;

/** What the streams ask of the signal. */
export type IndexSignalSource = {
  /** Told every new head (a block the index committed; lower than the last one, or `reverted`, after a reorg). */
  subscribe(listener: IndexSignalListener): () => void;
  /** The last head seen, or null before the first. */
  readonly head: bigint | null;
  /** True while the LISTEN connection is up. */
  readonly listening: boolean;
  /**
   * The index was found below the head told (a read pinned to it was above the index's head): the views may have moved
   * to another schema. Where the signal follows the views' schema, it reads it again now (at most once per poll).
   */
  recheck?(): void;
};

export const SIGNAL_DEFAULTS = { pollMs: 1_000, auditMs: 10_000, reconnectMinMs: 250, reconnectMaxMs: 30_000 };

/** The channel of a views schema: Postgres identifiers are ≤ 63 bytes, as Ponder's schema names are (config.ts). */
export const signalChannel = (viewsSchema: string) => `${viewsSchema}_block`.slice(0, 63);

/** The channel of a views schema's reverts (a process that does not know it listens to the heads only). */
export const revertChannel = (viewsSchema: string) => `${viewsSchema}_revert`.slice(0, 63);

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The schema of the table behind the views schema's `_ponder_checkpoint` view. */
const BASE_SCHEMA_SQL = `SELECT DISTINCT tn.nspname AS schema
  FROM pg_class v
  JOIN pg_namespace vn ON vn.oid = v.relnamespace
  JOIN pg_rewrite r ON r.ev_class = v.oid
  JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass
  JOIN pg_class t ON t.oid = d.refobjid AND t.oid <> v.oid
  JOIN pg_namespace tn ON tn.oid = t.relnamespace
 WHERE vn.nspname = $1 AND v.relname = '_ponder_checkpoint' AND t.relname = '_ponder_checkpoint'`;

/** Ponder's journal tables in its schema: one per table it indexes into. */
const JOURNAL_TABLES_SQL = `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE '\\_reorg\\_\\_%'`;

/**
 * Ponder's journal triggers in its schema `$1` (`reorg`, one per table it indexes into; Ponder 0.17.7 drops and creates
 * them again in every revert's transaction and in its crash recovery, so their object ids change) and its finalized
 * checkpoint, read through the views (what the API's user is sure to be allowed to read).
 */
const journalTriggersSql = (viewsSchema: string) => `SELECT (SELECT string_agg(t.oid::text, ',' ORDER BY t.oid)
    FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class r ON r.oid = t.tgrelid
    JOIN pg_catalog.pg_namespace s ON s.oid = r.relnamespace WHERE s.nspname = $1 AND t.tgname = 'reorg') AS triggers,
  (SELECT min(finalized_checkpoint) FROM ${quote(viewsSchema)}._ponder_checkpoint) AS finalized`;

/** The table whose writes are counted (the ve board's changed locks are read from it: api/read/atBlock.ts). */
export const COUNTED_TABLE = "lock_event";

const COUNTED_TABLE_SQL = `SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = '${COUNTED_TABLE}'`;

/**
 * The most lock events a notification carries: a block (or the blocks since the last checkpoint) with more is read by
 * its statement. A row is ~110 bytes on Base (a small token id, an address, an amount of ~22 digits) and at most ~330
 * (every number at uint256's width), and NOTIFY's payload is at most 8,000 bytes, of which the checkpoint and the
 * counts take under 150 and the schema's name under 70: so the rows also stay within CARRIED_BYTES, else none are
 * carried — pg_notify would fail Ponder's commit past 8,000.
 */
export const CARRIED_ROWS = 48;

/** The most bytes the carried rows may take in a notification (see CARRIED_ROWS). */
export const CARRIED_BYTES = 7_600;

/**
 * One carried lock event: the columns veLockDelta reads, in order, `,`-separated (atBlock.ts; its seal statement reads
 * the same lines to check a ranking made from carried events: cursorSeal.ts).
 */
export const CARRIED_COLUMNS = `concat(token_id, ',', coalesce(owner::text, ''), ',', lock_amount, ',', lock_end, ',',
       CASE WHEN auto_max THEN 't' ELSE 'f' END, ',', CASE WHEN burned THEN 't' ELSE 'f' END, ',',
       coalesce(from_token_id::text, ''), ',', block_number, ',', log_index)`;

/**
 * The sequences counting the writes of COUNTED_TABLE (every statement) and its rewrites (updates, deletes, truncates:
 * a revert's deletes), and the trigger's name.
 */
const writesSequence = (viewsSchema: string) => `${quote(viewsSchema)}.lock_index_writes`;
const rewritesSequence = (viewsSchema: string) => `${quote(viewsSchema)}.lock_index_rewrites`;
const writesTrigger = (viewsSchema: string) => `${viewsSchema}_writes_count`.slice(0, 63);

/** The names of the signal's triggers (triggerSql), whichever schema's tables carry them. */
const triggerNames = (viewsSchema: string) => [
  `${viewsSchema}_block_notify`.slice(0, 63),
  `${viewsSchema}_revert_notify`.slice(0, 63),
  writesTrigger(viewsSchema),
];

/** The signal's triggers on the tables of any schema but the one behind the views (one the views left). */
const STALE_TRIGGERS_SQL = `SELECT n.nspname AS schema, c.relname AS table, t.tgname AS trigger
  FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE t.tgname = ANY($1::text[]) AND NOT t.tgisinternal AND n.nspname <> $2`;

/**
 * The functions (in the views schema, which the API owns) and the triggers on Ponder's tables: the checkpoint's, and
 * each journal table's (`journalTables`) for its reverts; idempotent.
 */
export function triggerSql(
  viewsSchema: string,
  baseSchema: string,
  journalTables: readonly string[],
  counted = false,
): string {
  const fn = `${quote(viewsSchema)}.lock_index_block_notify`;
  const countFn = `${quote(viewsSchema)}.lock_index_write_count`;
  const sequence = writesSequence(viewsSchema).replaceAll("'", "''");
  const rewrites = rewritesSequence(viewsSchema).replaceAll("'", "''");
  const countTrigger = writesTrigger(viewsSchema).replaceAll("'", "''");
  const revertFn = `${quote(viewsSchema)}.lock_index_revert_notify`;
  const channel = signalChannel(viewsSchema).replaceAll("'", "''");
  const reverts = revertChannel(viewsSchema).replaceAll("'", "''");
  const revertTrigger = quote(`${viewsSchema}_revert_notify`.slice(0, 63));
  // The finalized checkpoint is read from the journal's own schema (the base the views point at may have moved on).
  // The write count is read only while its trigger is there and enabled on the table beside the checkpoint's.
  return `CREATE SEQUENCE IF NOT EXISTS ${writesSequence(viewsSchema)};
CREATE SEQUENCE IF NOT EXISTS ${rewritesSequence(viewsSchema)};
CREATE OR REPLACE FUNCTION ${countFn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
  PERFORM nextval(to_regclass('${sequence}'));
  IF TG_OP <> 'INSERT' THEN
    PERFORM nextval(to_regclass('${rewrites}'));
  END IF;
  RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
  seq regclass := to_regclass('${sequence}');
  reseq regclass := to_regclass('${rewrites}');
  n bigint;
  m bigint;
  writes text;
  carried text;
  old_block numeric;
  new_block numeric;
  found_rows bigint;
  found_text text;
BEGIN
  IF seq IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_trigger
     WHERE tgrelid = to_regclass(format('%I.${COUNTED_TABLE}', TG_TABLE_SCHEMA)) AND tgname = '${countTrigger}'
       AND tgenabled <> 'D') THEN
    EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s', seq) INTO n;
    writes := seq::oid || '.' || n;
    IF reseq IS NOT NULL AND TG_OP = 'UPDATE' THEN
      EXECUTE format('SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM %s', reseq) INTO m;
      BEGIN
        old_block := substring(OLD.latest_checkpoint FROM 27 FOR 16)::numeric;
        new_block := substring(NEW.latest_checkpoint FROM 27 FOR 16)::numeric;
        IF new_block > old_block THEN
          EXECUTE format('SELECT count(*), string_agg(r.line, '';'' ORDER BY r.block_number, r.log_index) FROM (
            SELECT ${CARRIED_COLUMNS.replaceAll("'", "''")} AS line, block_number, log_index
              FROM %I.${COUNTED_TABLE} WHERE block_number > $1 AND block_number <= $2
             ORDER BY block_number, log_index LIMIT ${CARRIED_ROWS + 1}) r', TG_TABLE_SCHEMA)
            INTO found_rows, found_text USING old_block, new_block;
          IF found_rows <= ${CARRIED_ROWS} AND coalesce(octet_length(found_text), 0) <= ${CARRIED_BYTES} THEN
            carried := reseq::oid || '.' || m || ':' || old_block || ':' || coalesce(found_text, '');
          END IF;
        END IF;
      EXCEPTION WHEN OTHERS THEN
        carried := NULL;
      END;
    END IF;
  END IF;
  PERFORM pg_notify('${channel}',
    NEW.latest_checkpoint || coalesce(' ' || writes, '') || coalesce(' ' || carried, '') || ' @' || TG_TABLE_SCHEMA);
  RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER ${quote(`${viewsSchema}_block_notify`.slice(0, 63))}
  AFTER INSERT OR UPDATE ON ${quote(baseSchema)}."_ponder_checkpoint"
  FOR EACH ROW EXECUTE FUNCTION ${fn}();
CREATE OR REPLACE FUNCTION ${revertFn}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  first text;
  finalized text;
BEGIN
  SELECT min(checkpoint) INTO first FROM reverted;
  EXECUTE format('SELECT finalized_checkpoint FROM %I._ponder_checkpoint WHERE chain_id = $1', TG_TABLE_SCHEMA)
    INTO finalized USING substring(first FROM 11 FOR 16)::numeric;
  IF first > finalized THEN
    PERFORM pg_notify('${reverts}', first || ' ' || finalized || ' @' || TG_TABLE_SCHEMA);
  END IF;
  RETURN NULL;
END;
$$;
${journalTables
  .map(
    (table) => `CREATE OR REPLACE TRIGGER ${revertTrigger}
  AFTER DELETE ON ${quote(baseSchema)}.${quote(table)} REFERENCING OLD TABLE AS reverted
  FOR EACH STATEMENT EXECUTE FUNCTION ${revertFn}();`,
  )
  .join("\n")}${
  counted
    ? `
CREATE OR REPLACE TRIGGER ${quote(writesTrigger(viewsSchema))}
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${quote(baseSchema)}.${quote(COUNTED_TABLE)}
  FOR EACH STATEMENT EXECUTE FUNCTION ${countFn}();`
    : ""
}`;
}

/**
 * The schema a notification came from (its last word, "@<schema>": the table's whose trigger fired), and the words
 * before it; undefined where the payload names none (a function installed by an API process before it did). Last, so
 * that a process that reads only the words before ignores it.
 */
export function notifiedSchema(payload: string): { words: string[]; schema?: string } {
  const words = payload.split(" ");
  const last = words.at(-1);
  if (words.length < 2 || last === undefined || !last.startsWith("@")) return { words };
  return { words: words.slice(0, -1), schema: last.slice(1) };
}

/**
 * A checkpoint notification's payload: the checkpoint, then the write count when the trigger had it, then the lock
 * events carried with it ("<rewrites>:<old block>:<rows>", parsed where used: api/read/quietBlocks.ts), then the
 * schema of the table whose trigger fired (notifiedSchema).
 */
export function notifiedCheckpoint(payload: string): {
  checkpoint: string;
  writes?: string;
  carried?: string;
  schema?: string;
} {
  const { words, schema } = notifiedSchema(payload);
  const from = schema === undefined ? {} : { schema };
  const [checkpoint = "", writes, carried] = words;
  if (writes === undefined || !/^\d+\.\d+$/.test(writes)) return { checkpoint, ...from };
  return carried !== undefined && /^\d+\.\d+:\d+:/.test(carried)
    ? { checkpoint, writes, carried, ...from }
    : { checkpoint, writes, ...from };
}

/** The block of a Ponder checkpoint: 10 digits of timestamp, 16 of chain id, 16 of block (utils/checkpoint.js). */
export function checkpointBlock(checkpoint: string): bigint | null {
  const digits = checkpoint.slice(26, 42);
  return /^\d{16}$/.test(digits) ? BigInt(digits) : null;
}

/** The block time of a Ponder checkpoint (its first 10 digits), as the index's probe reads it (atBlock.ts head). */
export function checkpointTime(checkpoint: string): bigint | null {
  const digits = checkpoint.slice(0, 10);
  return /^\d{10}$/.test(digits) ? BigInt(digits) : null;
}

/**
 * The signal's trigger on a schema the views left could not be dropped (no right to, its table locked past a second):
 * the signal still listens, and that schema's notifications are not told (the payload names its schema).
 */
export class StaleTriggerError extends Error {
  override name = "StaleTriggerError";
  constructor(
    readonly table: string,
    options?: { cause?: unknown },
  ) {
    super(`index signal: its trigger on ${table} (a schema the views left) was not dropped`, options);
  }
}

export class IndexSignal implements IndexSignalSource {
  readonly #o: Required<Omit<IndexSignalOptions, "onEvent" | "onFailure">> & IndexSignalOptions;
  readonly #listeners = new Set<IndexSignalListener>();
  #connection: ListenConnection | undefined;
  #listening = false;
  #head: bigint | null = null;
  /** A revert heard since the last head, told with the next one. */
  #reverted: Reverted | null = null;
  #stopped = true;
  #backoff: number;
  #timers = new Set<NodeJS.Timeout>();
  #lastPollAt = 0;
  /** Counts the notifications heard: a poll that read the head before one is older than it, and says nothing. */
  #notified = 0;
  /**
   * The schema behind the views as last read (install): a notification from another one's trigger is a schema the
   * views left (a redeploy's old indexer, still committing) or one they moved to since (another process installed
   * its triggers first), and is not told; it has the views' schema read again (recheck).
   */
  #base: string | undefined;
  #rechecking = false;
  /**
   * Ponder's journal triggers in the schema behind the views as last read on the listening connection (once it
   * listens, after each revert heard, at each audit): found made again when the connection listens again, they are a
   * revert whose notification was lost with the connection.
   */
  #journalTriggers: { base: string; oids: string } | null = null;
  /** The next poll's timer; undefined while a poll runs. */
  #pollTimer: NodeJS.Timeout | undefined;
  /** That read on a connection that has just listened, until it answers. */
  #relistening: Promise<void> | undefined;
  #installing: Promise<void> = Promise.resolve();
  #lastRecheckAt = Number.NEGATIVE_INFINITY;

  constructor(options: IndexSignalOptions) {
    this.#o = { ...SIGNAL_DEFAULTS, ...options };
    this.#backoff = this.#o.reconnectMinMs;
  }

  get head(): bigint | null {
    return this.#head;
  }

  get listening(): boolean {
    return this.#listening;
  }

  subscribe(listener: IndexSignalListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): this {
    if (!this.#stopped) return this;
    this.#stopped = false;
    void this.#connect();
    this.#schedulePoll();
    return this;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    const connection = this.#connection;
    this.#connection = undefined;
    this.#listening = false;
    await connection?.end().catch(() => {});
  }

  #later(ms: number, run: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      run();
    }, ms);
    t.unref();
    this.#timers.add(t);
    return t;
  }

  #saw(block: bigint, how: IndexSignalEvent, time?: bigint, writes?: string, carried?: string): void {
    const reverted = this.#reverted;
    // The same head again is news only after a revert: the new branch committed at the old height.
    if (block === this.#head && reverted === null) return;
    this.#reverted = null;
    this.#head = block;
    this.#o.onEvent?.(how);
    for (const listener of this.#listeners) listener(block, time, reverted ?? undefined, writes, carried);
  }

  /** Whether a notification is of the schema behind the views (one naming none is taken: an older function's). */
  #ours(schema: string | undefined): boolean {
    if (schema === undefined || this.#base === undefined || schema === this.#base) return true;
    this.recheck();
    return false;
  }

  /**
   * A revert's notification: one per journal table it deleted from, all before the next head's. Ponder made its
   * journal triggers again in the revert's transaction: they are read again, so that a later reconnect does not take
   * them for a revert lost with the connection.
   */
  #heardRevert(payload: string, connection: ListenConnection): void {
    const { words, schema } = notifiedSchema(payload);
    if (!this.#ours(schema)) return;
    const [first = "", finalized = ""] = words;
    const from = checkpointBlock(first);
    const final = checkpointBlock(finalized);
    if (from === null || final === null) return;
    this.#revert(from, final);
    void this.#readTriggers(connection, false);
  }

  /** A revert held until the next head: with one held already, from the lower of each. */
  #revert(from: bigint, final: bigint): void {
    const was = this.#reverted;
    this.#reverted = {
      from: was !== null && was.from < from ? was.from : from,
      finalized: was !== null && was.finalized < final ? was.finalized : final,
    };
  }

  /**
   * Reads Ponder's journal triggers on `connection` and keeps them. `relistened`: the connection has just listened
   * (again, where triggers were read before), and triggers made again since the last read are a revert whose
   * notification was lost with it (a NOTIFY reaches only a connection listening at the commit): held as one heard,
   * from the block after the finalized one (which block was the first orphaned is not known), and told with the next
   * head. Before, such a revert was heard only where the head went back, and one whose new branch Ponder committed at
   * or past the old head was not: the answers kept per block at the replaced heights stayed the orphaned branch's.
   */
  async #readTriggers(connection: ListenConnection, relistened: boolean): Promise<void> {
    const base = this.#base;
    if (base === undefined) return;
    let row: Record<string, unknown> | undefined;
    try {
      row = (await connection.query(journalTriggersSql(this.#o.viewsSchema), [base])).rows[0];
    } catch (error) {
      this.#o.onFailure?.(error);
      return;
    }
    // None yet (Ponder creates them once it reaches the head), or a restart's recovery between its drop and create.
    if (typeof row?.triggers !== "string") return;
    const was = this.#journalTriggers;
    this.#journalTriggers = { base, oids: row.triggers };
    if (!relistened || was === null || was.base !== base || was.oids === row.triggers) return;
    const final = checkpointBlock(String(row.finalized ?? ""));
    if (final !== null) this.#revert(final + 1n, final);
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    let connection: ListenConnection | undefined;
    try {
      connection = await this.#o.connect();
      let down = false;
      const lost = (error?: Error) => {
        if (down) return;
        down = true;
        if (this.#connection === connection) {
          this.#connection = undefined;
          this.#listening = false;
          this.#pollSooner();
          this.#o.onEvent?.("disconnected");
          if (error) this.#o.onFailure?.(error);
          void connection?.end().catch(() => {});
          this.#reconnect();
        }
      };
      connection.on("error", lost);
      connection.on("end", lost);
      const channel = signalChannel(this.#o.viewsSchema);
      const reverts = revertChannel(this.#o.viewsSchema);
      connection.on("notification", (message) => {
        if (message.payload === undefined) return;
        if (message.channel === reverts) this.#heardRevert(message.payload, connection!);
        else if (message.channel === channel) {
          const { checkpoint, writes, carried, schema } = notifiedCheckpoint(message.payload);
          if (!this.#ours(schema)) return;
          this.#notified++;
          const block = checkpointBlock(checkpoint);
          const time = checkpointTime(checkpoint);
          if (block === null) return;
          const tell = () => this.#saw(block, "notified", time ?? undefined, writes, carried);
          // Heard before the read of a connection that has just listened answered (it may hold a revert lost with
          // the last connection, to be told with this head): after it, in order.
          if (this.#relistening === undefined) tell();
          else void this.#relistening.then(tell);
        }
      });
      await this.#install(connection);
      await connection.query(`LISTEN ${quote(channel)}; LISTEN ${quote(reverts)}`);
      if (this.#stopped) {
        await connection.end().catch(() => {});
        return;
      }
      this.#connection = connection;
      this.#listening = true;
      this.#backoff = this.#o.reconnectMinMs;
      this.#o.onEvent?.("connected");
      // What committed while we were not listening: a revert (Ponder's journal triggers made again), told with the
      // next notified head (Postgres may deliver one ahead of the read's answer: held until it), and the head.
      const relistening = this.#readTriggers(connection, true).finally(() => {
        if (this.#relistening === relistening) this.#relistening = undefined;
      });
      this.#relistening = relistening;
      void this.#poll(false);
    } catch (error) {
      this.#o.onFailure?.(error);
      await connection?.end().catch(() => {});
      this.#reconnect();
    }
  }

  #reconnect(): void {
    if (this.#stopped) return;
    const wait = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.#o.reconnectMaxMs);
    this.#later(wait, () => void this.#connect());
  }

  /** The schema behind the views now. */
  async #readBase(connection: ListenConnection): Promise<string> {
    const { rows } = await connection.query(BASE_SCHEMA_SQL, [this.#o.viewsSchema]);
    const base = rows[0]?.schema;
    if (typeof base !== "string") {
      throw new Error(`index signal: ${this.#o.viewsSchema}._ponder_checkpoint is not a view of Ponder's table`);
    }
    return base;
  }

  /**
   * Reads the schema behind the views again (joined while one runs, at most once per `pollMs`); when it moved, the
   * triggers are installed on the new one and dropped from the old, and the head is polled (the last one told was
   * the old schema's: notified heads are not used until the new one's first notification).
   */
  recheck(): void {
    const connection = this.#connection;
    if (this.#rechecking || connection === undefined || performance.now() - this.#lastRecheckAt < this.#o.pollMs) {
      return;
    }
    this.#rechecking = true;
    this.#lastRecheckAt = performance.now();
    void (async () => {
      try {
        if ((await this.#readBase(connection)) === this.#base) return;
        await this.#install(connection);
        await this.#poll(false);
      } catch (error) {
        this.#o.onFailure?.(error);
      } finally {
        this.#rechecking = false;
      }
    })();
  }

  /**
   * The triggers, installed under a transaction-scoped advisory lock so replicas starting together do not race; then
   * dropped from any schema the views left (an old indexer still running would announce heads the views do not
   * have), each in a transaction of its own that waits at most a second for its table.
   */
  #install(connection: ListenConnection): Promise<void> {
    // One at a time on the connection (the audit's and a recheck's would interleave their transactions).
    const installing = this.#installing.then(() => this.#installOnce(connection));
    this.#installing = installing.catch(() => {});
    return installing;
  }

  async #installOnce(connection: ListenConnection): Promise<void> {
    const base = await this.#readBase(connection);
    await connection.query("BEGIN");
    try {
      await connection.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `lock_index_signal:${this.#o.viewsSchema}`,
      ]);
      const journal = await connection.query(JOURNAL_TABLES_SQL, [base]);
      const tables = journal.rows.map((r) => String(r.tablename));
      const counted = (await connection.query(COUNTED_TABLE_SQL, [base])).rows.length > 0;
      await connection.query(triggerSql(this.#o.viewsSchema, base, tables, counted));
      await connection.query("COMMIT");
    } catch (error) {
      await connection.query("ROLLBACK").catch(() => {});
      throw error;
    }
    this.#base = base;
    await this.#dropStale(connection, base);
  }

  /** The signal's triggers on another schema's tables, dropped; one that cannot be (no right, a lock held) stays. */
  async #dropStale(connection: ListenConnection, base: string): Promise<void> {
    const { rows } = await connection.query(STALE_TRIGGERS_SQL, [triggerNames(this.#o.viewsSchema), base]);
    for (const row of rows) {
      await connection.query("BEGIN");
      try {
        await connection.query("SET LOCAL lock_timeout = '1s'");
        await connection.query(
          `DROP TRIGGER IF EXISTS ${quote(String(row.trigger))} ON ${quote(String(row.schema))}.${quote(String(row.table))}`,
        );
        await connection.query("COMMIT");
      } catch (error) {
        await connection.query("ROLLBACK").catch(() => {});
        this.#o.onFailure?.(new StaleTriggerError(`${row.schema}.${row.table}`, { cause: error }));
      }
    }
  }

  #schedulePoll(): void {
    if (this.#stopped) return;
    this.#pollTimer = this.#later(this.#listening ? this.#o.auditMs : this.#o.pollMs, () => {
      this.#pollTimer = undefined;
      // The journal's triggers read again while listening: ones Ponder made again without a revert heard (its
      // restart's recovery, a revert that deleted no row of ours) are not taken for a lost revert at a later reconnect.
      const connection = this.#listening ? this.#connection : undefined;
      if (connection) void this.#readTriggers(connection, false);
      void this.#poll(this.#listening).finally(() => this.#schedulePoll());
    });
  }

  /**
   * The connection lost: the next poll within `pollMs`, not at the audit's pace it was scheduled at while listening
   * (before, the first poll after a loss came up to `auditMs` later). A poll running now schedules the next itself.
   */
  #pollSooner(): void {
    const timer = this.#pollTimer;
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(timer);
    this.#pollTimer = undefined;
    this.#schedulePoll();
  }

  /** One read of the head; `audit`: a head that moved while listening was missed (its trigger is reinstalled). */
  async #poll(audit: boolean): Promise<void> {
    this.#lastPollAt = performance.now();
    const notified = this.#notified;
    let block: bigint | null;
    try {
      block = await this.#o.head();
    } catch (error) {
      this.#o.onFailure?.(error);
      return;
    }
    // A notification heard while the poll read is as new as the poll or newer: the poll's head may be the one before
    // it, and told after it would read as a head below the last (a reorg) that never happened.
    if (notified !== this.#notified) return;
    if (block === null || block === this.#head) return;
    if (audit && this.#listening) {
      this.#o.onEvent?.("missed");
      const connection = this.#connection;
      if (connection) await this.#install(connection).catch((error: unknown) => this.#o.onFailure?.(error));
    }
    this.#saw(block, "polled");
  }

  /** For tests: when the last poll ran (performance.now()). */
  get lastPollAt(): number {
    return this.#lastPollAt;
  }
}

/**
 * The signal where there is no LISTEN to be had (PGlite under `npm start`, or no views schema): one poll of the head
 * per process every `pollMs`, started by the first subscriber and stopped with the last.
 */
export class PolledSignal implements IndexSignalSource {
  readonly #listeners = new Set<IndexSignalListener>();
  #head: bigint | null = null;
  #timer: NodeJS.Timeout | undefined;
  readonly listening = false;

  constructor(
    readonly read: () => Promise<bigint | null>,
    readonly pollMs = SIGNAL_DEFAULTS.pollMs,
  ) {}

  get head(): bigint | null {
    return this.#head;
  }

  subscribe(listener: IndexSignalListener): () => void {
    this.#listeners.add(listener);
    if (this.#timer === undefined) this.#tick();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        clearTimeout(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  #tick(): void {
    this.#timer = setTimeout(() => {
      void this.read()
        .then((block) => {
          if (block === null || block === this.#head) return;
          this.#head = block;
          for (const listener of this.#listeners) listener(block);
        })
        .catch(() => {})
        .finally(() => {
          if (this.#timer !== undefined && this.#listeners.size > 0) this.#tick();
        });
    }, this.pollMs);
    this.#timer.unref();
  }
}

/** Polls a revert seen without a newer checkpoint waits for one before it is told (250 ms each by default). */
export const HELD_POLLS = 2;

/**
 * The signal where there is no views schema to LISTEN on (an API process on Ponder's own schema, the local stack):
 * the index's watermark, which the process polls anyway (api/read/watermark.ts, every 250 ms: Ponder's checkpoint and
 * the lock table's highest id), told on as a head each time its indexed block changes. No statement of its own — a
 * poll of the head would read the event table, and wait behind whatever holds it.
 *
 * With `journal` (LockIndex.journal), each poll also reads Ponder's journal, where a revert shows without a trigger:
 * the newest entry read before is gone while its block is above the finalized one (finalization deletes only entries at
 * or below it), or the journal's triggers are not the last read's (JournalMark.triggers: Ponder makes them again in
 * each revert's transaction) — which also hears a revert of entries committed and deleted between two reads, none of
 * them read (the last read's entry is kept): a kept answer at the orphaned block stayed the old branch's (CI's
 * localReorg run on cd2a1b5). Before, a reorg showed only as the head going back, and one whose new branch Ponder
 * commits up to or past the old head within a poll was not seen at all: every answer kept per block at the replaced
 * heights stayed the orphaned branch's (red team rt132/rt133). The revert is told with the head, as a notified one
 * (`reverted`, from the block after the finalized one: which block was the first orphaned is not known here), once the
 * new branch is readable: at once when entries newer than the one gone exist (the journal's sequence never goes back,
 * and a block's entries commit with its checkpoint; heard by the triggers alone, newer entries may be the fork
 * block's), else with the next checkpoint committed — a revert writes none, and between it and the new branch's first
 * block the index's head still names the old one — or, when none comes, HELD_POLLS polls later (the new branch may have
 * been committed before the poll that saw the revert, and no block may follow soon: a devnet mines on demand). The
 * heads meanwhile are held back. Left: a block of the old branch committed and reverted within one poll, with the new
 * branch's first block later than HELD_POLLS polls, is told before that block is readable (a read between may keep the
 * reverted state for a replaced height).
 * Where the schema has no journal (a views schema, or not yet) or the read fails, the watermark's head is told.
 */
export class WatermarkSignal implements IndexSignalSource {
  readonly #listeners = new Set<IndexSignalListener>();
  #head: bigint | null = null;
  #unsubscribe: (() => void) | undefined;
  /** The newest journal entry at the last read. */
  #newest: { id: bigint; block: bigint } | null = null;
  /** The journal's triggers at the last read that found some (JournalMark.triggers). */
  #triggers: string | null = null;
  /** A revert seen and not told yet: the finalized block it keeps, the checkpoint when it was seen, polls since. */
  #pending: { finalized: bigint; latest: string; polls: number } | null = null;
  #reading = false;
  readonly listening = false;

  constructor(
    readonly watermark: { subscribe(listener: (mark: IndexMark) => void): () => void },
    readonly journal?: (kept: bigint | null) => Promise<JournalMark | null>,
  ) {}

  get head(): bigint | null {
    return this.#head;
  }

  subscribe(listener: IndexSignalListener): () => void {
    this.#listeners.add(listener);
    this.#unsubscribe ??= this.watermark.subscribe((mark) => {
      if (this.journal) void this.#read(mark);
      else if (mark.indexedBlock !== null) this.#tell(mark.indexedBlock);
    });
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#unsubscribe?.();
        this.#unsubscribe = undefined;
      }
    };
  }

  /** One read of the journal (none beside one in flight: the next poll reads again). */
  async #read(mark: IndexMark): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    let j: JournalMark | null;
    try {
      j = await this.journal!(this.#newest?.id ?? null);
    } catch {
      // The watermark's head then, unless a revert waits to be told with the next checkpoint.
      if (this.#pending === null && mark.indexedBlock !== null) this.#tell(mark.indexedBlock);
      return;
    } finally {
      this.#reading = false;
    }
    if (j === null) {
      // No journal (yet: Ponder creates it after the API may first ask; or a views schema, which has none).
      if (mark.indexedBlock !== null) this.#tell(mark.indexedBlock);
      return;
    }
    const before = this.#newest;
    this.#newest = j.newest;
    const triggers = this.#triggers;
    if (j.triggers !== null) this.#triggers = j.triggers;
    // The entry read last gone above the finalized block, or the journal's triggers made again since the last read.
    const gone = before !== null && !j.kept && before.block > j.finalized;
    if (gone || (triggers !== null && j.triggers !== null && j.triggers !== triggers)) {
      const finalized =
        this.#pending === null || j.finalized < this.#pending.finalized ? j.finalized : this.#pending.finalized;
      this.#pending = { finalized, latest: j.latest, polls: 0 };
      // Entries newer than the one gone are the new branch's; with the entry kept, newer ones may be the fork's own.
      if (!gone || j.newest === null || j.newest.id <= before.id) return;
    } else if (this.#pending !== null && j.latest === this.#pending.latest && ++this.#pending.polls < HELD_POLLS)
      return;
    const pending = this.#pending;
    this.#pending = null;
    this.#tell(j.head, pending === null ? undefined : { from: pending.finalized + 1n, finalized: pending.finalized });
  }

  #tell(block: bigint, reverted?: Reverted): void {
    if (reverted === undefined && block === this.#head) return;
    this.#head = block;
    for (const l of this.#listeners) l(block, undefined, reverted);
  }
}
