/**
 * LockIndex.changes (api/read/atBlock.ts), the streams' one read per head, on PGlite with Ponder's own DDL for the
 * four tables it reads: each lock event and each protocol event of the range with its kind and accounts, and — only
 * when the previous block's timestamp is given — each duration board entry that left a trailing window, at the first
 * block of the range whose known timestamp puts it out (an entry of time ts counts at T iff ts ≥ T − window: the
 * window includes its start, as the reference's board SQL).
 * Both ways the API runs a statement: prepared text (the API process) and drizzle (Ponder's in-process db).
 */
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createLockIndex } from "../../api/read/atBlock";
import type { BlockChange, LockIndex } from "../../api/read/contract";
import * as ponderSchema from "../../ponder.schema";
import { REPO_ROOT } from "../support/ponder";
import { checkpointOf, META_DDL } from "../support/syntheticIndex";

const SCHEMA = "changes";
const DAY = 86_400n;
const BASE = 1_800_000_000n;
const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";
const CAROL = "0x00000000000000000000000000000000000ca201";
const TX = `0x${"ab".repeat(32)}`;

let prepared: LockIndex;
let viaDrizzle: LockIndex;

beforeAll(async () => {
  const client = new PGlite();
  const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
    getSql(schema: object): { tables: { sql: string[] } };
  };
  const { lock, lockEvent, protocolEvent, boardEntry } = ponderSchema;
  const ddl = kit
    .getSql({ lock, lockEvent, protocolEvent, boardEntry })
    .tables.sql.filter((t) => !t.includes("_reorg__"));
  await client.exec(`CREATE SCHEMA "${SCHEMA}"; SET search_path TO "${SCHEMA}"`);
  for (const t of ddl) await client.exec(t);
  await client.exec(`CREATE TABLE "_ponder_checkpoint" ("chain_name" text PRIMARY KEY, "chain_id" bigint NOT NULL,
    "safe_checkpoint" varchar(75) NOT NULL, "latest_checkpoint" varchar(75) NOT NULL,
    "finalized_checkpoint" varchar(75) NOT NULL)`);
  for (const ddl of META_DDL) await client.exec(ddl);
  const head = checkpointOf(8453, 120n, BASE + 40n);
  await client.query(`INSERT INTO "_ponder_checkpoint" VALUES ('base', 8453, $1, $1, $2)`, [
    head,
    checkpointOf(8453, 90n, BASE - 60n),
  ]);
  // Block 100 (BASE): alice creates lock 1. Block 101 (BASE + 2): bob takes the throne from alice.
  await client.query(
    `INSERT INTO lock_event VALUES ('e1', 'create', 1, $1, 5, 9999999999, false, NULL, NULL, $1, 5, false, false,
      100, $2, $3, 0)`,
    [ALICE, String(BASE), TX],
  );
  await client.query(`INSERT INTO protocol_event VALUES ('p1', 'takeover', $1, $2, '{}', 101, $3, $4, 1)`, [
    BOB,
    ALICE,
    String(BASE + 2n),
    TX,
  ]);
  const entry = (id: string, board: string, who: string, block: bigint, time: bigint) =>
    client.query(`INSERT INTO board_entry VALUES ($1, $2, $3, 1, $4, $5)`, [
      id,
      board,
      who,
      String(block),
      String(time),
    ]);
  await entry("b1", "takeovers", BOB, 101n, BASE + 2n);
  // Exactly at block 100's window start (BASE − 24 h): in at 99 and at 100 (inclusive), out at 101.
  await entry("b5", "furnace-claim", ALICE, 10n, BASE - DAY);
  // In the 24 h window at block 99 (BASE − 2), out at block 101 (BASE + 2 − 24 h > its time), still in at 100.
  await entry("b2", "royalties", CAROL, 11n, BASE + 1n - DAY);
  // Already out at block 99: not an exit of this range.
  await entry("b3", "furnace-eth", CAROL, 9n, BASE - 10n - DAY);
  // Leaves the 7 d window between block 101 and the head (BASE + 40): at the head.
  await entry("b4", "takeover-eth", BOB, 8n, BASE + 30n - 7n * DAY);
  // Exactly at the head's 7 d window start: still in at the head, so no exit in any range here.
  await entry("b6", "king-claim-mined", ALICE, 9n, BASE + 40n - 7n * DAY);
  prepared = createLockIndex({
    db: drizzle(client),
    schema: SCHEMA,
    prepared: ({ text, values }) => client.query(text, values) as Promise<{ rows: Record<string, unknown>[] }>,
  });
  viaDrizzle = createLockIndex({ db: drizzle(client), schema: SCHEMA });
}, 60_000);

const events = (changes: BlockChange[]) => changes.filter((c) => c.exit === null);
/** The exits as [block, board, window], by block then board (rows of one block come in no set order). */
const exits = (changes: BlockChange[]) =>
  changes
    .filter((c) => c.exit !== null)
    .map((c) => [c.block, c.exit?.board, c.exit?.window] as const)
    .sort((x, y) => (x[0] !== y[0] ? (x[0] < y[0] ? -1 : 1) : String(x[1]).localeCompare(String(y[1]))));

describe("LockIndex.changes", () => {
  for (const [name, reader] of [
    ["prepared", () => prepared],
    ["drizzle", () => viaDrizzle],
  ] as const) {
    it(`${name}: lock and protocol events with their kinds and accounts; no exits without the start's time`, async () => {
      const { value } = await reader().changes(100n, 120n);
      expect(events(value)).toEqual([
        { block: 100n, tokenIds: [1n], accounts: [ALICE, ALICE], kind: "create", lock: true, exit: null },
        { block: 101n, tokenIds: [], accounts: [BOB, ALICE], kind: "takeover", lock: false, exit: null },
      ]);
      expect(exits(value)).toEqual([]);
    });

    it(`${name}: with block 99's timestamp, the entries that left a window, each at its first block out`, async () => {
      const { value } = await reader().changes(100n, 120n, BASE - 2n);
      expect(exits(value)).toEqual([
        [101n, "furnace-claim", "24h"],
        [101n, "royalties", "24h"],
        [120n, "takeover-eth", "7d"],
      ]);
      // A range that ends before the royalties entry leaves (block 100 only, its end not the head): nothing — the
      // entry exactly at block 100's window start (BASE − 24 h) is still in at 100.
      expect(exits((await reader().changes(100n, 100n, BASE - 2n)).value)).toEqual([]);
      // From block 101 on (block 100's time given): the entry at BASE − 24 h was in at 100, so it leaves at 101.
      expect(exits((await reader().changes(101n, 120n, BASE)).value)).toEqual([
        [101n, "furnace-claim", "24h"],
        [101n, "royalties", "24h"],
        [120n, "takeover-eth", "7d"],
      ]);
      // From block 102 on (block 101's time given): the 7 d exit alone, at the head.
      expect(exits((await reader().changes(102n, 120n, BASE + 2n)).value)).toEqual([[120n, "takeover-eth", "7d"]]);
    });
  }
});
