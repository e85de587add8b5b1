/**
 * The index signal on a real Postgres: Ponder's `_ponder_checkpoint` table (its columns as Ponder 0.17.7 creates it)
 * behind a views schema's view, as `ponder start --views-schema` leaves them. One committed checkpoint update reaches
 * every process's listener, each over one LISTEN connection; a rolled-back one says nothing; a reorg's revert of
 * Ponder's journal tables (`_reorg__*`, as Ponder 0.17.7 creates and reverts them) is told with the next head, even
 * one past the old head, and a finalize's deletes are not; each head carries the count of writes to `lock_event`
 * (none where it cannot be trusted); a lost trigger is found by the audit poll (counted `missed`) and installed
 * again; a killed connection falls back to polls and reconnects.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CARRIED_ROWS,
  IndexSignal,
  type IndexSignalEvent,
  type Reverted,
  triggerSql,
} from "../../api/read/indexSignal";
import { createTestDatabase, type TestDatabase } from "../support/ponder";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

let database: TestDatabase;
let url: string;
let admin: pg.Client;

/** Ponder's checkpoint string: 10 digits of timestamp, 16 of chain id, 16 of block, then the event position. */
const checkpoint = (block: number) =>
  `${"1700000000"}${"31337".padStart(16, "0")}${String(block).padStart(16, "0")}${"0".repeat(33)}`;

const setBlock = (block: number) =>
  admin.query(`UPDATE base_v1._ponder_checkpoint SET latest_checkpoint = $1`, [checkpoint(block)]);

const JOURNALS = ["x", "y"];

/** A row of table `table` written at `block`, and its journal row, as Ponder's trigger and commitBlock leave them. */
async function write(table: string, id: string, block: number) {
  await admin.query(`INSERT INTO base_v1.${table} VALUES ($1, $2)`, [id, block]);
  await admin.query(`INSERT INTO base_v1._reorg__${table} (id, v, operation, checkpoint) VALUES ($1, $2, 0, $3)`, [
    id,
    block,
    checkpoint(block),
  ]);
}

/** Ponder's journal triggers on its tables (`reorg`; here writing nothing: the journal rows are written by `write`). */
const createTriggers = JOURNALS.map(
  (t) => `CREATE TRIGGER reorg AFTER INSERT OR UPDATE OR DELETE ON base_v1.${t} FOR EACH ROW
    EXECUTE PROCEDURE base_v1.journal_nothing();`,
).join("\n");
const dropTriggers = JOURNALS.map((t) => `DROP TRIGGER IF EXISTS reorg ON base_v1.${t};`).join("\n");

/**
 * Ponder's revertMultichain to `ancestor`, in its one transaction (database/actions.js; of the user rows' restore, only
 * the deletes of rows the orphaned blocks inserted), its journal triggers dropped before and created again after
 * (runtime/multichain.js, the `reorg` case).
 */
async function revert(ancestor: number) {
  await admin.query("BEGIN");
  await admin.query(dropTriggers);
  const { rows } = await admin.query(
    `SELECT MIN(operation_id) AS operation_id FROM (${JOURNALS.map(
      (t) => `SELECT MIN(operation_id) AS operation_id FROM base_v1._reorg__${t}
        WHERE SUBSTRING(checkpoint, 11, 16)::numeric = 31337 AND checkpoint > '${checkpoint(ancestor)}'`,
    ).join(" UNION ALL ")}) AS all_mins`,
  );
  const min = rows[0].operation_id ?? "NULL";
  for (const t of JOURNALS) {
    await admin.query(`WITH reverted1 AS (
        DELETE FROM base_v1._reorg__${t} WHERE ${min} IS NOT NULL AND operation_id >= ${min} RETURNING *
      ), inserted AS (
        DELETE FROM base_v1.${t} AS t WHERE EXISTS (SELECT * FROM reverted1 WHERE t.id = reverted1.id AND operation = 0)
        RETURNING *
      ) SELECT COUNT(*) FROM inserted`);
  }
  await admin.query(createTriggers);
  await admin.query("COMMIT");
}

/** Ponder's finalizeMultichain to `block`: the finalized checkpoint, then the journal rows at or below it. */
async function finalize(block: number) {
  await admin.query("BEGIN");
  await admin.query(`UPDATE base_v1._ponder_checkpoint SET finalized_checkpoint = $1 WHERE chain_id = 31337`, [
    checkpoint(block),
  ]);
  const { rows } = await admin.query(
    `SELECT MIN(operation_id) AS operation_id FROM (${JOURNALS.map(
      (t) => `SELECT MIN(operation_id) AS operation_id FROM base_v1._reorg__${t} WHERE checkpoint > (
        SELECT finalized_checkpoint FROM base_v1._ponder_checkpoint WHERE chain_id = SUBSTRING(checkpoint, 11, 16)::numeric)`,
    ).join(" UNION ALL ")}) AS all_mins`,
  );
  const min = rows[0].operation_id ?? "NULL";
  await admin.query(`WITH ${JOURNALS.map(
    (t, i) =>
      `deleted_${i} AS (DELETE FROM base_v1._reorg__${t} WHERE ${min} IS NULL OR operation_id < ${min} RETURNING *)`,
  ).join(", ")}
    SELECT MAX(checkpoint) FROM (${JOURNALS.map((_, i) => `SELECT checkpoint FROM deleted_${i}`).join(" UNION ALL ")}) AS d`);
  await admin.query("COMMIT");
}

/** The signal's LISTEN connection killed, its reconnect held (the trigger's table locked) until the caller commits. */
async function drop(events: IndexSignalEvent[]) {
  const before = events.filter((e) => e === "disconnected").length;
  await admin.query("BEGIN");
  await admin.query("LOCK TABLE base_v1._ponder_checkpoint IN SHARE ROW EXCLUSIVE MODE");
  await admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database()",
  );
  await until(() => (events.filter((e) => e === "disconnected").length > before ? true : undefined));
}

function signal(
  events: IndexSignalEvent[],
  o: { auditMs?: number; pollMs?: number; head?: () => Promise<bigint | null> } = {},
) {
  return new IndexSignal({
    viewsSchema: "views",
    connect: async () => {
      const client = new pg.Client({ connectionString: url, application_name: "lock-index-signal" });
      await client.connect();
      return client;
    },
    head: async () => {
      const { rows } = await admin.query(
        "SELECT substring(latest_checkpoint FROM 27 FOR 16)::bigint AS b FROM views._ponder_checkpoint",
      );
      return rows[0] ? BigInt(rows[0].b) : null;
    },
    reconnectMinMs: 50,
    ...o,
    onEvent: (e) => events.push(e),
  });
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  database = await createTestDatabase(PG_URL);
  url = (database.forPonder("base_v1") as { url: string }).url;
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA base_v1; CREATE SCHEMA views;
    CREATE TABLE base_v1._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
      safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL);
    CREATE VIEW views._ponder_checkpoint AS SELECT * FROM base_v1._ponder_checkpoint;
    CREATE SEQUENCE base_v1.operation_id AS integer INCREMENT BY 1;
    CREATE TABLE base_v1.lock_event (id text PRIMARY KEY, block_number numeric(78,0) NOT NULL,
      token_id numeric(78,0) NOT NULL DEFAULT 1, owner text, lock_amount numeric(78,0) NOT NULL DEFAULT 0,
      lock_end numeric(78,0) NOT NULL DEFAULT 0, auto_max boolean NOT NULL DEFAULT false,
      burned boolean NOT NULL DEFAULT false, from_token_id numeric(78,0), log_index integer NOT NULL DEFAULT 0);`);
  for (const t of JOURNALS) {
    await admin.query(`CREATE TABLE base_v1.${t} (id text PRIMARY KEY, v integer NOT NULL);
      CREATE TABLE base_v1._reorg__${t} (id text NOT NULL, v integer NOT NULL,
        operation_id integer PRIMARY KEY DEFAULT nextval('base_v1.operation_id'), operation integer NOT NULL,
        checkpoint varchar(75) NOT NULL);
      CREATE INDEX ON base_v1._reorg__${t} (checkpoint);`);
  }
  await admin.query(`CREATE FUNCTION base_v1.journal_nothing() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RETURN NULL; END $$`);
  await admin.query(createTriggers);
  await admin.query(`INSERT INTO base_v1._ponder_checkpoint VALUES ('devnet', 31337, $1, $1, $1)`, [checkpoint(100)]);
});

afterAll(async () => {
  await admin?.end();
  await database?.drop();
});

describe("IndexSignal on Postgres", () => {
  it("one committed block reaches two processes, each over one LISTEN connection; a rollback says nothing", async () => {
    const ea: IndexSignalEvent[] = [];
    const eb: IndexSignalEvent[] = [];
    const [a, b] = [signal(ea).start(), signal(eb).start()];
    try {
      await until(() => (a.listening && b.listening ? true : undefined));
      // One connection each (the signal's only own; the heads are read here on `admin`), which has listened.
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database()",
      );
      expect(rows[0].n).toBe(2);
      const seenA: bigint[] = [];
      const seenB: bigint[] = [];
      const timesA: (bigint | undefined)[] = [];
      a.subscribe((block, time) => {
        seenA.push(block);
        timesA.push(time);
      });
      b.subscribe((block) => seenB.push(block));
      await admin.query("BEGIN");
      await setBlock(101);
      await new Promise((r) => setTimeout(r, 200));
      expect(seenA).toEqual([]); // not before the commit
      await admin.query("COMMIT");
      await until(() => (seenA.length && seenB.length ? true : undefined));
      expect([seenA, seenB]).toEqual([[101n], [101n]]);
      // The NOTIFY's checkpoint carries the block's time: no probe of the head is needed to compute it ahead.
      expect(timesA).toEqual([1_700_000_000n]);
      await admin.query("BEGIN");
      await setBlock(102);
      await admin.query("ROLLBACK");
      await setBlock(103);
      await until(() => (seenA.length === 2 && seenB.length === 2 ? true : undefined));
      expect([seenA, seenB]).toEqual([
        [101n, 103n],
        [101n, 103n],
      ]);
      // A head below the last one (Ponder's next block after a reorg revert) is told too.
      await setBlock(102);
      await until(() => (seenA.length === 3 ? true : undefined));
      expect(seenA[2]).toBe(102n);
      expect(ea.filter((e) => e === "notified").length).toBeGreaterThanOrEqual(3);
      expect(ea).not.toContain("missed");
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("a reorg's revert is told with the next head, past the old one or at it; a finalize's deletes are not", async () => {
    const events: IndexSignalEvent[] = [];
    const s = signal(events).start();
    try {
      await until(() => (s.listening ? true : undefined));
      const told: [bigint, Reverted | undefined][] = [];
      s.subscribe((block, _time, reverted) => told.push([block, reverted]));
      await setBlock(400);
      // The first head told may be the signal's first poll of the head the previous test left (it reads after the
      // subscription under load): wait for 400's, and count from it.
      await until(() => (told.at(-1)?.[0] === 400n ? true : undefined));
      told.splice(0, told.length - 1);
      await write("x", "a", 395);
      await write("x", "b", 398);
      await write("y", "c", 399);
      await write("x", "d", 400);
      // Finalized to 396: the journal's row of 395 goes, and nothing is told of it.
      await finalize(396);
      await setBlock(401);
      await until(() => (told.length === 2 ? true : undefined));
      expect(told[1]).toEqual([401n, undefined]);
      // A reorg from 398 (the fork at 397): nothing is told until the new branch's first block commits, here past
      // the old head in one step.
      await revert(397);
      expect((await admin.query("SELECT id FROM base_v1.x UNION ALL SELECT id FROM base_v1.y")).rows).toEqual([
        { id: "a" },
      ]);
      await new Promise((r) => setTimeout(r, 200));
      expect(told.length).toBe(2);
      await setBlock(403);
      await until(() => (told.length === 3 ? true : undefined));
      expect(told[2]).toEqual([403n, { from: 398n, finalized: 396n }]);
      // Another reorg whose new branch commits at the old height: the same head, told again with the revert.
      await write("y", "e", 403);
      await revert(402);
      await setBlock(403);
      await until(() => (told.length === 4 ? true : undefined));
      expect(told[3]).toEqual([403n, { from: 403n, finalized: 396n }]);
      // A revert that deleted nothing (no row of ours above the fork) tells nothing.
      await revert(403);
      await setBlock(404);
      await until(() => (told.length === 5 ? true : undefined));
      expect(told[4]).toEqual([404n, undefined]);
      expect(events).not.toContain("missed");
    } finally {
      await s.stop();
    }
  });

  it("a poll that read the head before a notification is not told after it (no head below the last, no 'missed')", async () => {
    const events: IndexSignalEvent[] = [];
    let gate: Promise<void> | undefined;
    let readWhileGated = false;
    const readHead = async () => {
      const { rows } = await admin.query(
        "SELECT substring(latest_checkpoint FROM 27 FOR 16)::bigint AS b FROM views._ponder_checkpoint",
      );
      return rows[0] ? BigInt(rows[0].b) : null;
    };
    const s = signal(events, {
      auditMs: 50,
      head: async () => {
        const block = await readHead();
        if (gate) {
          readWhileGated = true;
          await gate;
        }
        return block;
      },
    }).start();
    try {
      await setBlock(500);
      await until(() => (s.listening && s.head === 500n ? true : undefined));
      const told: bigint[] = [];
      s.subscribe((block) => told.push(block));
      let release = () => {};
      gate = new Promise((r) => {
        release = r;
      });
      // An audit poll reads 500 and is held; 501 commits and is told meanwhile; then the poll's answer arrives.
      await until(() => (readWhileGated ? true : undefined));
      await setBlock(501);
      await until(() => (told.length === 1 ? true : undefined));
      gate = undefined;
      release();
      await new Promise((r) => setTimeout(r, 300));
      expect(told).toEqual([501n]);
      expect(s.head).toBe(501n);
      expect(events).not.toContain("missed");
    } finally {
      await s.stop();
    }
  });

  it("each head carries the lock events' write count: equal without a write between, never equal across one", async () => {
    const s = signal([]).start();
    const role = `lock_index_writer_${process.pid}`;
    try {
      await until(() => (s.listening ? true : undefined));
      const told: { block: bigint; writes: string | undefined }[] = [];
      s.subscribe((block, _time, _reverted, writes) => told.push({ block, writes }));
      const head = async (block: number, write?: string) => {
        await admin.query("BEGIN");
        if (write) await admin.query(write);
        await setBlock(block);
        await admin.query("COMMIT");
        return until(() => told.find((t) => t.block === BigInt(block)));
      };
      const a = await head(600);
      expect(a.writes).toMatch(/^\d+\.\d+$/);
      // A block without a lock event: the same count.
      expect((await head(601)).writes).toBe(a.writes);
      expect((await head(602)).writes).toBe(a.writes);
      // A block's own rows, in its transaction.
      const b = await head(603, "INSERT INTO base_v1.lock_event VALUES ('e1', 603), ('e2', 603)");
      expect(b.writes).not.toBe(a.writes);
      expect((await head(604)).writes).toBe(b.writes);
      // A write in a transaction of its own (a revert's deletes carry no checkpoint): the next head's count moved.
      await admin.query("DELETE FROM base_v1.lock_event WHERE id = 'e2'");
      const c = await head(605);
      expect(c.writes).not.toBe(b.writes);
      // A statement that changed no row still counts (never "unchanged" when something may have been); a
      // rolled-back write too.
      const d = await head(606, "UPDATE base_v1.lock_event SET block_number = 0 WHERE false");
      expect(d.writes).not.toBe(c.writes);
      await admin.query("BEGIN; INSERT INTO base_v1.lock_event VALUES ('e3', 607); ROLLBACK");
      const e = await head(607);
      expect(e.writes).not.toBe(d.writes);
      await admin.query("TRUNCATE base_v1.lock_event");
      const f = await head(608);
      expect(f.writes).not.toBe(e.writes);
      // Ponder's role needs no right on the views schema's sequence (the functions are the schema owner's).
      await admin.query(`CREATE ROLE ${role};
        GRANT USAGE ON SCHEMA base_v1 TO ${role}; GRANT SELECT, INSERT, UPDATE ON base_v1.lock_event, base_v1._ponder_checkpoint TO ${role}`);
      await admin.query(`SET ROLE ${role}`);
      const g = await head(609, "INSERT INTO base_v1.lock_event VALUES ('e4', 609)");
      expect((await head(610)).writes).toBe(g.writes);
      await admin.query("RESET ROLE");
      expect(g.writes).not.toBe(f.writes);
      // The counting trigger disabled or the sequence gone: no count (so nothing is taken as unchanged), and
      // Ponder's writes and commits go on.
      await admin.query("ALTER TABLE base_v1.lock_event DISABLE TRIGGER views_writes_count");
      expect((await head(611, "INSERT INTO base_v1.lock_event VALUES ('e5', 611)")).writes).toBeUndefined();
      await admin.query("ALTER TABLE base_v1.lock_event ENABLE TRIGGER views_writes_count");
      expect((await head(612)).writes).toMatch(/^\d+\.\d+$/);
      await admin.query("DROP SEQUENCE views.lock_index_writes");
      expect((await head(613, "INSERT INTO base_v1.lock_event VALUES ('e6', 613)")).writes).toBeUndefined();
      expect((await admin.query("SELECT count(*)::int AS n FROM base_v1.lock_event")).rows[0].n).toBe(3);
      // Installed again (a new sequence: another oid, so no count before it equals one after).
      await s.stop();
      const again = signal([]).start();
      try {
        await until(() => (again.listening ? true : undefined));
        // The signal's first poll after connecting takes the head it finds (613, polled: no count); 614 after it, so
        // that its notification, not that poll, tells it (under load the poll could come after the subscription).
        await until(() => (again.head === 613n ? true : undefined));
        const later: { block: bigint; writes: string | undefined }[] = [];
        again.subscribe((block, _t, _r, writes) => later.push({ block, writes }));
        await setBlock(614);
        const told = await until(() => later.find((t) => t.block === 614n));
        expect(told.writes).toMatch(/^\d+\.0$/);
        expect(told.writes?.split(".")[0]).not.toBe(g.writes?.split(".")[0]);
      } finally {
        await again.stop();
      }
    } finally {
      await admin.query("RESET ROLE").catch(() => {});
      await s.stop();
      await admin.query(`DROP OWNED BY ${role}; DROP ROLE IF EXISTS ${role}`).catch(() => {});
    }
  });

  it("a head carries the lock events since the checkpoint it replaced, up to the cap; rewrites counted apart", async () => {
    const s = signal([]).start();
    try {
      await until(() => (s.listening ? true : undefined));
      const told: { block: bigint; writes?: string; carried?: string }[] = [];
      s.subscribe((block, _t, _r, writes, carried) => told.push({ block, writes, carried }));
      const head = async (block: number, ...writes: string[]) => {
        await admin.query("BEGIN");
        for (const w of writes) await admin.query(w);
        await setBlock(block);
        await admin.query("COMMIT");
        return until(() => told.find((t) => t.block === BigInt(block)));
      };
      const owner = `0x${"ab".repeat(20)}`;
      const row = (id: string, block: number, token: number, log: number, extra = "") =>
        `INSERT INTO base_v1.lock_event (id, block_number, token_id, owner, lock_amount, lock_end, auto_max, burned,
           from_token_id, log_index) VALUES ('${id}', ${block}, ${token}, ${extra || `'${owner}', 1000000000000000000000, 1800000000, true, false, NULL`}, ${log})`;
      const base = await head(700);
      const [rewrites, from] = base.carried!.split(":");
      expect(rewrites).toMatch(/^\d+\.\d+$/);
      expect(from).toMatch(/^\d+$/);
      // A block's own events, a merge among them (token 12 merged into 11), in block and log order.
      const a = await head(
        701,
        row("c2", 701, 12, 2, `NULL, 0, 1700000000, false, true, NULL`),
        row("c1", 701, 11, 1, `'${owner}', 5, 1800000000, false, false, 12`),
      );
      expect(a.carried).toBe(`${rewrites}:700:11,${owner},5,1800000000,f,f,12,701,1;12,,0,1700000000,f,t,,701,2`);
      // A block without any: none carried, the same rewrites count.
      expect((await head(702)).carried).toBe(`${rewrites}:701:`);
      // Events committed before the checkpoint (an earlier transaction) and in its own, over several blocks.
      await admin.query(row("c3", 705, 13, 0));
      const b = await head(710, row("c4", 710, 13, 3));
      expect(b.carried).toBe(
        `${rewrites}:702:13,${owner},1000000000000000000000,1800000000,t,f,,705,0;13,${owner},1000000000000000000000,1800000000,t,f,,710,3`,
      );
      // Up to the cap: all carried, in order; one more: nothing carried (the count still there).
      const full = Array.from({ length: CARRIED_ROWS }, (_, i) => row(`f${i}`, 711, 200 + i, i));
      const full1 = await head(711, ...full);
      expect(full1.carried?.split(":")[1]).toBe("710");
      expect(
        full1.carried
          ?.split(":")[2]
          ?.split(";")
          .map((r) => r.split(",")[0]),
      ).toEqual(Array.from({ length: CARRIED_ROWS }, (_, i) => String(200 + i)));
      const many = Array.from({ length: CARRIED_ROWS + 1 }, (_, i) => row(`m${i}`, 712, 100 + i, i));
      const c = await head(712, ...many);
      expect(c.writes).toMatch(/^\d+\.\d+$/);
      expect(c.carried).toBeUndefined();
      // Rows within the cap but past the bytes a NOTIFY can hold (every number at uint256's width): none carried, and
      // Ponder's commit goes on (pg_notify refuses a payload over 8,000 bytes, which would fail it).
      const wide = 2n ** 256n - 1n;
      const wideRows = Array.from({ length: 30 }, (_, i) =>
        row(`w${i}`, 713, 0, i, `'${owner}', ${wide}, ${wide}, true, false, ${wide}`).replace(
          ", 0, '",
          `, ${wide - BigInt(i)}, '`,
        ),
      );
      const w = await head(713, ...wideRows);
      expect(wideRows[0]).toContain(String(wide - 0n));
      expect(w.writes).toMatch(/^\d+\.\d+$/);
      expect(w.carried).toBeUndefined();
      // A delete (a revert's, in a transaction of its own) moves the rewrites count; inserts never do.
      await admin.query("DELETE FROM base_v1.lock_event WHERE id = 'm16'");
      const d = await head(714);
      expect(d.carried?.split(":")[0]).not.toBe(rewrites);
      expect(d.carried?.split(":").slice(1).join(":")).toBe("713:");
      // A checkpoint going back carries nothing; nor a read that fails (a column gone): Ponder's commit goes on.
      expect((await head(705)).carried).toBeUndefined();
      await admin.query("ALTER TABLE base_v1.lock_event RENAME COLUMN owner TO owner_gone");
      const e = await head(715, row("c5", 715, 14, 0).replace("owner,", "owner_gone,"));
      expect(e.writes).toMatch(/^\d+\.\d+$/);
      expect(e.carried).toBeUndefined();
      await admin.query("ALTER TABLE base_v1.lock_event RENAME COLUMN owner_gone TO owner");
      expect((await head(716)).carried).toMatch(/^\d+\.\d+:715:$/);
    } finally {
      await s.stop();
    }
  });

  it("a lost trigger is found by the audit poll (missed) and installed again", async () => {
    const events: IndexSignalEvent[] = [];
    const s = signal(events, { auditMs: 300 }).start();
    try {
      await until(() => (s.listening ? true : undefined));
      const seen: bigint[] = [];
      s.subscribe((block) => seen.push(block));
      const reverts: Reverted[] = [];
      s.subscribe((_block, _time, reverted) => reverted && reverts.push(reverted));
      // Both go, as when a redeploy points the views at a new schema; both come back.
      await admin.query(`DROP TRIGGER views_block_notify ON base_v1._ponder_checkpoint;
        DROP TRIGGER views_revert_notify ON base_v1._reorg__x`);
      await setBlock(500);
      await until(() => (seen.includes(500n) ? true : undefined));
      expect(events).toContain("missed");
      await setBlock(501);
      await until(() => (seen.includes(501n) ? true : undefined), 250);
      expect(events.at(-1)).toBe("notified");
      await write("x", "g", 502);
      await revert(501);
      await setBlock(503);
      await until(() => (seen.includes(503n) ? true : undefined));
      expect(reverts).toEqual([{ from: 502n, finalized: 396n }]);
    } finally {
      await s.stop();
    }
  });

  it("a killed connection falls back to polls, then reconnects and listens again", async () => {
    const events: IndexSignalEvent[] = [];
    const s = signal(events, { pollMs: 100, auditMs: 60_000 }).start();
    try {
      await until(() => (s.listening ? true : undefined));
      // Listening for longer than a poll: the next poll is at the audit's pace. Before, it stayed there when the
      // connection was lost (the fallback's first poll up to `auditMs` later), and this test passed only when the kill
      // came before the first poll.
      await new Promise((r) => setTimeout(r, 300));
      const seen: bigint[] = [];
      s.subscribe((block) => seen.push(block));
      // Block the reconnect for a moment: the trigger's table locked, so installing it waits.
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE base_v1._ponder_checkpoint IN SHARE ROW EXCLUSIVE MODE");
      await admin.query(
        // This database's only: an API process of another test file (or run) on the same server listens under the name.
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database()",
      );
      await until(() => (events.includes("disconnected") ? true : undefined));
      expect(s.listening).toBe(false);
      // Learned by the fallback poll (this session sees its own update; no NOTIFY reaches a process not listening).
      await setBlock(300);
      await until(() => (seen.includes(300n) ? true : undefined));
      expect(events.slice(events.indexOf("disconnected"))).toContain("polled");
      expect(s.listening).toBe(false);
      await admin.query("COMMIT");
      await until(() => (s.listening ? true : undefined));
      expect(events).toContain("connected");
      await setBlock(301);
      await until(() => (seen.includes(301n) ? true : undefined));
      expect(events.at(-1)).toBe("notified");
    } finally {
      await s.stop();
    }
  });

  it("a revert while the LISTEN connection is down is told with the next head once it listens again", async () => {
    const events: IndexSignalEvent[] = [];
    const s = signal(events, { pollMs: 100, auditMs: 200 }).start();
    try {
      await until(() => (s.listening ? true : undefined));
      const told: [bigint, Reverted | undefined][] = [];
      s.subscribe((block, _time, reverted) => told.push([block, reverted]));
      const { rows } = await admin.query(
        "SELECT substring(finalized_checkpoint FROM 27 FOR 16)::bigint AS b FROM base_v1._ponder_checkpoint",
      );
      const finalized = BigInt(rows[0].b);
      await write("x", "r1", 601);
      await setBlock(601);
      await until(() => (told.at(-1)?.[0] === 601n ? true : undefined));
      // Ponder's journal triggers made again with no revert of ours heard (its restart's recovery): read again by the
      // audit, so the reconnect below does not take them for a lost revert.
      await admin.query(`BEGIN; ${dropTriggers} ${createTriggers} COMMIT`);
      await new Promise((r) => setTimeout(r, 600));
      await drop(events);
      await admin.query("COMMIT");
      await until(() => (s.listening ? true : undefined));
      await setBlock(602);
      await until(() => (told.at(-1)?.[0] === 602n ? true : undefined));
      expect(told.at(-1)).toEqual([602n, undefined]);
      // The connection lost again; meanwhile Ponder reverts 602's block (the fork at 600), whose NOTIFY reaches no one.
      await write("y", "r2", 602);
      await drop(events);
      await revert(600);
      await until(() => (s.listening ? true : undefined));
      // The new branch's block at the old height: the same head, told with the revert (before: not told at all).
      await setBlock(602);
      await until(() => (told.at(-1)?.[1] !== undefined ? true : undefined));
      expect(told.at(-1)).toEqual([602n, { from: finalized + 1n, finalized }]);
      // Listening since: the next revert is told once, from its notification.
      await write("x", "r3", 603);
      await setBlock(603);
      await revert(602);
      await setBlock(604);
      await until(() => (told.at(-1)?.[0] === 604n ? true : undefined));
      expect(told.filter(([, r]) => r !== undefined)).toEqual([
        [602n, { from: finalized + 1n, finalized }],
        [604n, { from: 603n, finalized }],
      ]);
    } finally {
      await s.stop();
    }
  });

  // Last: the views end on base_v2. A redeploy's views switch (docs/operations.md) while the old indexer keeps
  // committing to base_v1: its heads are not the views' and must not be told (the red team's F1: head reads pinned
  // to them were 503 "unreachable" for as long as both indexers ran).
  it("after the views move to another schema, the old schema's commits and reverts are not told and its triggers go", async () => {
    const events: IndexSignalEvent[] = [];
    const s = signal(events, { auditMs: 60_000, pollMs: 100 }).start();
    const triggersOn = async (schema: string) =>
      (
        await admin.query(
          `SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND NOT t.tgisinternal AND t.tgname LIKE 'views\\_%' ORDER BY 1`,
          [schema],
        )
      ).rows.map((r) => String(r.tgname));
    const setV2 = (block: number) =>
      admin.query(`UPDATE base_v2._ponder_checkpoint SET latest_checkpoint = $1`, [checkpoint(block)]);
    try {
      // Listening, and its first poll (of the head the previous test left) told: it would otherwise reach the
      // subscriber below when it reads after the subscription under load (a CI run saw [301n, 800n, 791n]).
      const left = BigInt(
        (
          await admin.query(
            "SELECT substring(latest_checkpoint FROM 27 FOR 16)::bigint AS b FROM views._ponder_checkpoint",
          )
        ).rows[0].b,
      );
      await until(() => (s.listening && s.head === left ? true : undefined));
      const seen: bigint[] = [];
      const reverts: Reverted[] = [];
      s.subscribe((block, _time, reverted) => {
        seen.push(block);
        if (reverted) reverts.push(reverted);
      });
      await setBlock(800);
      await until(() => (seen.includes(800n) ? true : undefined));
      expect(await triggersOn("base_v1")).toContain("views_block_notify");

      // The new deployment (its tables as Ponder makes them), and the views moved to it, as Ponder's createViews does.
      await admin.query(`CREATE SCHEMA base_v2;
        CREATE TABLE base_v2._ponder_checkpoint (LIKE base_v1._ponder_checkpoint INCLUDING ALL);
        CREATE TABLE base_v2.lock_event (LIKE base_v1.lock_event INCLUDING ALL);
        CREATE SEQUENCE base_v2.operation_id AS integer INCREMENT BY 1;
        ${JOURNALS.map(
          (t) => `CREATE TABLE base_v2.${t} (LIKE base_v1.${t} INCLUDING ALL);
        CREATE TABLE base_v2._reorg__${t} (LIKE base_v1._reorg__${t} INCLUDING ALL);
        ALTER TABLE base_v2._reorg__${t} ALTER COLUMN operation_id SET DEFAULT nextval('base_v2.operation_id');`,
        ).join("\n")}`);
      await admin.query(`INSERT INTO base_v2._ponder_checkpoint VALUES ('devnet', 31337, $1, $1, $1)`, [
        checkpoint(790),
      ]);
      await admin.query("CREATE OR REPLACE VIEW views._ponder_checkpoint AS SELECT * FROM base_v2._ponder_checkpoint");

      // Another API process learnt it first and installed the triggers on base_v2: its commit, from a schema this one
      // does not know the views at, is not told, and has it read the views' schema: base_v2's head, polled; the
      // triggers on base_v1, which the views left, dropped.
      await admin.query(
        triggerSql(
          "views",
          "base_v2",
          JOURNALS.map((t) => `_reorg__${t}`),
          true,
        ),
      );
      await setV2(791);
      await until(async () => ((await triggersOn("base_v1")).length === 0 ? true : undefined));
      await until(() => (seen.includes(791n) ? true : undefined));
      expect(seen).toEqual([800n, 791n]);
      expect(events.at(-1)).toBe("polled");
      expect(await triggersOn("base_v2")).toEqual([
        "views_block_notify",
        "views_revert_notify",
        "views_revert_notify",
        "views_writes_count",
      ]);

      // The old indexer keeps committing, and reverting (its triggers back, as a process of an older release puts
      // them): none of it is told; base_v2's commits are, as notified.
      await admin.query(
        triggerSql(
          "views",
          "base_v1",
          JOURNALS.map((t) => `_reorg__${t}`),
          true,
        ),
      );
      await write("x", "h", 801);
      await setBlock(801);
      await revert(800);
      await setBlock(802);
      await setV2(792);
      await until(() => (seen.includes(792n) ? true : undefined));
      await setV2(793);
      await until(() => (seen.includes(793n) ? true : undefined));
      expect(seen).toEqual([800n, 791n, 792n, 793n]);
      expect(reverts).toEqual([]);
      expect(events.at(-1)).toBe("notified");

      // A reorg of base_v2 is still told with its next head.
      await admin.query(`UPDATE base_v2._ponder_checkpoint SET finalized_checkpoint = $1`, [checkpoint(700)]);
      await admin.query(`INSERT INTO base_v2._reorg__x (id, v, operation, checkpoint) VALUES ('i', 794, 0, $1)`, [
        checkpoint(794),
      ]);
      await admin.query("DELETE FROM base_v2._reorg__x WHERE id = 'i'");
      await setV2(795);
      await until(() => (seen.includes(795n) ? true : undefined));
      expect(reverts).toEqual([{ from: 794n, finalized: 700n }]);
    } finally {
      await s.stop();
    }
  });
});
