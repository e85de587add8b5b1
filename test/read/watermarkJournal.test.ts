/**
 * A revert told where no trigger tells it (api/read/indexSignal.ts WatermarkSignal with LockIndex.journal): the local
 * stack and an API process on Ponder's own schema hear the index through the watermark's polls, where a reorg showed
 * only as the head going back — one whose new branch Ponder commits up to or past the old head within a poll was not
 * seen, and every answer kept per block at the replaced heights stayed the orphaned branch's (red team rt132/rt133).
 *
 * On PGlite, with Ponder's journal as Ponder 0.17.7 makes it (`_reorg__*` tables numbered by one sequence,
 * drizzle/kit getReorgTable; a `reorg` trigger on each of its tables) and its revert and finalize as
 * database/actions.js and runtime/multichain.js run them: a revert deletes every entry from the first above the fork
 * up, in a transaction that drops the triggers and creates them again; finalization deletes the entries at or below
 * the finalized checkpoint.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLockIndex } from "../../api/read/atBlock";
import type { IndexMark, LockIndex } from "../../api/read/contract";
import { HELD_POLLS, type Reverted, WatermarkSignal } from "../../api/read/indexSignal";

const S = "ponder_local";
let client: PGlite;
let index: LockIndex;

/** Ponder's checkpoint: 10 digits of timestamp, 16 of chain id, 16 of block, then the event position. */
const checkpoint = (block: number, branch = 0) =>
  `${1_700_000_000 + block * 10 + branch}${"31337".padStart(16, "0")}${String(block).padStart(16, "0")}${"0".repeat(33)}`;
/** A checkpoint's block, in SQL. */
const blockOf = "substring(checkpoint FROM 27 FOR 16)::bigint";

/** Block `block` of branch `branch` committed as Ponder commits it: its journal entries, then its checkpoint. */
async function commit(block: number, entries: number, branch = 0) {
  for (let i = 0; i < entries; i++) {
    const table = i % 2 === 0 ? "_reorg__lock_event" : "_reorg__lock";
    await client.query(`INSERT INTO ${S}.${table} (operation, checkpoint) VALUES (0, $1)`, [checkpoint(block, branch)]);
  }
  await client.query(`UPDATE ${S}._ponder_checkpoint SET latest_checkpoint = $1`, [checkpoint(block, branch)]);
}

/** Ponder's journal triggers on its tables (createTriggers), made again with each revert. */
const createTriggers = `CREATE OR REPLACE TRIGGER reorg AFTER INSERT OR UPDATE OR DELETE ON ${S}.lock_event
      FOR EACH ROW EXECUTE PROCEDURE ${S}.journal_nothing();
    CREATE OR REPLACE TRIGGER reorg AFTER INSERT OR UPDATE OR DELETE ON ${S}.lock
      FOR EACH ROW EXECUTE PROCEDURE ${S}.journal_nothing();`;
const dropTriggers = `DROP TRIGGER IF EXISTS reorg ON ${S}.lock_event; DROP TRIGGER IF EXISTS reorg ON ${S}.lock;`;

/**
 * Ponder's revert to the fork block `ancestor`, in one transaction: the triggers dropped, every entry from the first
 * above the fork up deleted, the triggers created again; the checkpoint unwritten.
 */
async function revert(ancestor: number) {
  const above = `SELECT min(operation_id) AS min FROM (SELECT operation_id FROM ${S}._reorg__lock_event WHERE ${blockOf} > $1
      UNION ALL SELECT operation_id FROM ${S}._reorg__lock WHERE ${blockOf} > $1) u`;
  await client.transaction(async (tx) => {
    await tx.exec(dropTriggers);
    const { rows } = await tx.query<{ min: number | null }>(above, [ancestor]);
    const min = rows[0]?.min;
    if (min != null) {
      await tx.query(`DELETE FROM ${S}._reorg__lock_event WHERE operation_id >= $1`, [min]);
      await tx.query(`DELETE FROM ${S}._reorg__lock WHERE operation_id >= $1`, [min]);
    }
    await tx.exec(createTriggers);
  });
}

/** Ponder's finalize: the checkpoint's finalized block, and the journal at or below it deleted. */
async function finalize(block: number) {
  await client.query(`UPDATE ${S}._ponder_checkpoint SET finalized_checkpoint = $1`, [checkpoint(block)]);
  for (const t of ["_reorg__lock_event", "_reorg__lock"])
    await client.query(`DELETE FROM ${S}.${t} WHERE ${blockOf} <= $1`, [block]);
}

/** The signal over a watermark the test polls, and what it told. */
function watched(journal: LockIndex["journal"]) {
  let listener: ((mark: IndexMark) => void) | undefined;
  let reads = 0;
  const watermark = {
    subscribe(l: (mark: IndexMark) => void) {
      listener = l;
      return () => {
        listener = undefined;
      };
    },
  };
  const counted = journal
    ? async (kept: bigint | null) => {
        try {
          return await journal(kept);
        } finally {
          reads++;
        }
      }
    : undefined;
  const signal = new WatermarkSignal(watermark, counted);
  const told: [bigint, Reverted | undefined][] = [];
  signal.subscribe((block, _time, reverted) => told.push([block, reverted]));
  /** One watermark poll (the mark's block as the checkpoint says), and the journal read it starts. */
  const poll = async () => {
    const { rows } = await client.query<{ b: string }>(
      `SELECT substring(latest_checkpoint FROM 27 FOR 16) AS b FROM ${S}._ponder_checkpoint`,
    );
    const before = reads;
    listener!({ maxTokenId: 0n, indexedBlock: BigInt(rows[0]!.b) });
    for (let i = 0; i < 500 && journal && reads === before; i++) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setImmediate(r));
  };
  return { told, poll };
}

beforeAll(async () => {
  client = new PGlite();
  await client.exec(`CREATE SCHEMA ${S};
    CREATE TABLE ${S}._ponder_checkpoint (chain_name text PRIMARY KEY, chain_id bigint NOT NULL,
      safe_checkpoint varchar(75) NOT NULL, latest_checkpoint varchar(75) NOT NULL, finalized_checkpoint varchar(75) NOT NULL);
    CREATE SEQUENCE ${S}.operation_id AS integer INCREMENT BY 1;
    CREATE TABLE ${S}._reorg__lock_event (operation_id integer PRIMARY KEY DEFAULT nextval('${S}.operation_id'),
      operation integer NOT NULL, checkpoint varchar(75) NOT NULL);
    CREATE TABLE ${S}._reorg__lock (operation_id integer PRIMARY KEY DEFAULT nextval('${S}.operation_id'),
      operation integer NOT NULL, checkpoint varchar(75) NOT NULL);
    CREATE TABLE ${S}.lock_event (id integer PRIMARY KEY);
    CREATE TABLE ${S}.lock (id integer PRIMARY KEY);
    CREATE FUNCTION ${S}.journal_nothing() RETURNS trigger AS $$ BEGIN RETURN NULL; END; $$ LANGUAGE plpgsql;
    ${createTriggers}
    CREATE SCHEMA views;`);
  await client.query(`INSERT INTO ${S}._ponder_checkpoint VALUES ('devnet', 31337, $1, $1, $1)`, [checkpoint(1)]);
  index = createLockIndex({ db: drizzle(client), schema: S });
});

afterAll(async () => {
  await client?.close();
});

describe("the watermark's signal reads Ponder's journal", () => {
  it("tells a revert whose new branch passes the old head within one poll, and one told only by its journal", async () => {
    const { told, poll } = watched(index.journal!.bind(index));
    await commit(10, 2);
    await poll();
    await commit(11, 1);
    await poll();
    expect(told).toEqual([
      [10n, undefined],
      [11n, undefined],
    ]);

    // A reorg from 11 (fork at 10); the new branch's 11 and 12 committed before the next poll: the head went up.
    await revert(10);
    await commit(11, 1, 1);
    await commit(12, 2);
    await poll();
    expect(told.at(-1)).toEqual([12n, { from: 2n, finalized: 1n }]);

    // A revert read before the new branch commits is held (the index's head still names the orphaned block): told with
    // the next checkpoint, here a new 12 without an entry of ours, at the old head's height.
    await revert(11);
    await poll();
    expect(told).toHaveLength(3);
    await commit(12, 0, 2);
    await poll();
    expect(told.at(-1)).toEqual([12n, { from: 2n, finalized: 1n }]);
    expect(told).toHaveLength(4);

    // Finalization deletes the journal's entries too, at or below the finalized block: not a revert.
    await commit(13, 1);
    await poll();
    await finalize(13);
    await commit(14, 0);
    await poll();
    expect(told.slice(4)).toEqual([
      [13n, undefined],
      [14n, undefined],
    ]);
    // After it, a revert is told from the new finalized block.
    await commit(15, 2);
    await poll();
    await revert(14);
    await commit(15, 1, 1);
    await poll();
    expect(told.slice(6)).toEqual([
      [15n, undefined],
      [15n, { from: 14n, finalized: 13n }],
    ]);

    // A new branch without an entry of ours committed before the poll that sees the revert, and no block after it (a
    // devnet mines on demand): told HELD_POLLS polls later, not never.
    await commit(16, 1);
    await poll();
    await revert(15);
    await commit(16, 0, 2);
    const heard = told.length;
    for (let i = 0; i < HELD_POLLS; i++) {
      await poll();
      expect(told).toHaveLength(heard);
    }
    await poll();
    expect(told.slice(heard)).toEqual([[16n, { from: 14n, finalized: 13n }]]);
  });

  it("without the journal (the signal before), the same reorg is told as a plain head", async () => {
    await commit(20, 1);
    const { told, poll } = watched(undefined);
    await poll();
    await revert(19);
    await commit(20, 1, 1);
    await commit(21, 1);
    await poll();
    expect(told).toEqual([
      [20n, undefined],
      [21n, undefined],
    ]);
  });

  it("a schema without a journal (a views schema) is told the watermark's heads", async () => {
    const views = createLockIndex({ db: drizzle(client), schema: "views" });
    expect(await views.journal!(null)).toBeNull();
    const { told, poll } = watched(views.journal!.bind(views));
    await commit(30, 1);
    await poll();
    await commit(31, 0);
    await poll();
    expect(told).toEqual([
      [30n, undefined],
      [31n, undefined],
    ]);
  });

  it("tells a revert none of whose entries a poll read (committed and reverted between two polls) by its triggers", async () => {
    const { told, poll } = watched(index.journal!.bind(index));
    await commit(40, 1);
    await poll();
    // The old branch's 41 with two entries, committed and reverted (fork at 40) before the next poll; the new branch's
    // 41 and 42 without an entry of ours. The entry the last poll read (40's) is kept: only the triggers changed.
    await commit(41, 2);
    await revert(40);
    await commit(41, 0, 1);
    await commit(42, 0, 1);
    await poll();
    expect(told).toEqual([[40n, undefined]]);
    // Held as a revert seen with no newer entry: told with the next checkpoint, from the block after the finalized.
    await commit(43, 0, 1);
    await poll();
    expect(told).toEqual([
      [40n, undefined],
      [43n, { from: 14n, finalized: 13n }],
    ]);
    await commit(44, 1, 1);
    await poll();
    expect(told.at(-1)).toEqual([44n, undefined]);
  });

  it("the journal's first triggers (a back-fill ends, a restart's recovery made them) are not a revert", async () => {
    await client.exec(dropTriggers);
    const { told, poll } = watched(index.journal!.bind(index));
    await commit(50, 1);
    await poll();
    await client.exec(createTriggers);
    await commit(51, 1);
    await poll();
    await commit(52, 0);
    await poll();
    expect(told).toEqual([
      [50n, undefined],
      [51n, undefined],
      [52n, undefined],
    ]);
  });
});
