/**
 * The index signal on a real Postgres: Ponder's `_ponder_checkpoint` table (its columns as Ponder 0.17.7 creates it)
 * behind a views schema's view, as `ponder start --views-schema` leaves them. One committed checkpoint update reaches
 * every process's listener, each over one LISTEN connection; a rolled-back one says nothing; a reorg's revert of
 * Ponder's journal tables (`_reorg__*`, as Ponder 0.17.7 creates and reverts them) is told with the next head, even
 * one past the old head, and a finalize's deletes are not; a lost trigger is found by the audit poll (counted
 * `missed`) and installed again; a killed connection falls back to polls and reconnects.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IndexSignal, type IndexSignalEvent, type Reverted } from "../../api/read/indexSignal";
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

/**
 * Ponder's revertMultichain to `ancestor`, in its one transaction (database/actions.js; of the user rows' restore, only
 * the deletes of rows the orphaned blocks inserted).
 */
async function revert(ancestor: number) {
  await admin.query("BEGIN");
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

function signal(events: IndexSignalEvent[], o: { auditMs?: number; pollMs?: number } = {}) {
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

async function until<T>(read: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
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
    CREATE SEQUENCE base_v1.operation_id AS integer INCREMENT BY 1;`);
  for (const t of JOURNALS) {
    await admin.query(`CREATE TABLE base_v1.${t} (id text PRIMARY KEY, v integer NOT NULL);
      CREATE TABLE base_v1._reorg__${t} (id text NOT NULL, v integer NOT NULL,
        operation_id integer PRIMARY KEY DEFAULT nextval('base_v1.operation_id'), operation integer NOT NULL,
        checkpoint varchar(75) NOT NULL);
      CREATE INDEX ON base_v1._reorg__${t} (checkpoint);`);
  }
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
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database() AND query ILIKE 'LISTEN%'",
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
      await until(() => (told.length === 1 ? true : undefined));
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
      const seen: bigint[] = [];
      s.subscribe((block) => seen.push(block));
      // Block the reconnect for a moment: the trigger's table locked, so installing it waits.
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE base_v1._ponder_checkpoint IN SHARE ROW EXCLUSIVE MODE");
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock-index-signal'",
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
});
