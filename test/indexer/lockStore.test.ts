/**
 * The lock store against Ponder's real table layout (created by Ponder's own DDL generator from ponder.schema.ts)
 * in PGlite, or Postgres when DATABASE_URL is set: which rows count as live, their order, readiness, and the
 * PGlite TEMP-table shadow it must see through.
 */
import path from "node:path";
import pg from "pg";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLockStore } from "../../api/read/store";
import * as schema from "../../ponder.schema";
import { createTestDatabase, type IndexDb, openIndexDb, REPO_ROOT, type TestDatabase } from "../support/ponder";

const SCHEMA = "store_test";
const alice = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const bob = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const E18 = 10n ** 18n;

describe(`lock store (${process.env.DATABASE_URL ? "postgres" : "pglite"})`, () => {
  let database: TestDatabase;
  let idx: IndexDb;

  beforeAll(async () => {
    // Ponder's DDL generator (0.16, 0.17) (what `ponder start` runs); not in the package's exports map, hence the path.
    const kit = (await import(path.join(REPO_ROOT, "node_modules/ponder/dist/esm/drizzle/kit/index.js"))) as {
      getSql(schema: object): { tables: { sql: string[] }; indexes: { sql: string[] } };
    };
    const ddl = kit.getSql({ lock: schema.lock });
    database = await createTestDatabase();
    idx = await openIndexDb(database.forPonder(SCHEMA));
    await idx.query(`CREATE SCHEMA ${SCHEMA}`);
    await idx.query(ddl.tables.sql.find((s) => s.includes('CREATE TABLE "lock"')) as string);
    for (const statement of ddl.indexes.sql) await idx.query(statement);
    await idx.query(`CREATE TABLE _ponder_meta (key text PRIMARY KEY, value jsonb NOT NULL)`);
    const row = (id: number, owner: string | null, amount: bigint, burned = false, autoMax = false) =>
      `(${id}, ${owner ? `'${owner}'` : "NULL"}, ${amount}, ${burned ? 0 : 1_800_000_000 + id}, ${autoMax}, false, ${burned}, 1, 1, 1, 1)`;
    await idx.query(
      `INSERT INTO lock VALUES ${[
        row(7, alice, 3_000n * E18, false, true),
        row(2, alice, 1_000n * E18),
        row(5, bob, 2_000n * E18),
        row(3, null, 0n, true), // burned (merged or unlocked)
        row(11, alice, 5_000n * E18),
      ].join(", ")}`,
    );
  });

  afterAll(async () => {
    await idx?.close();
    await database?.drop();
  });

  it("lists an owner's live locks by token id, whatever the address case", async () => {
    const store = createLockStore({ db: idx.db });
    const expected = [
      { tokenId: 2n, amount: 1_000n * E18, lockEnd: 1_800_000_002n, autoMax: false },
      { tokenId: 7n, amount: 3_000n * E18, lockEnd: 1_800_000_007n, autoMax: true },
      { tokenId: 11n, amount: 5_000n * E18, lockEnd: 1_800_000_011n, autoMax: false },
    ];
    expect(await store.liveLocksOf(getAddress(alice))).toEqual(expected);
    expect(await store.liveLocksOf(alice)).toEqual(expected);
    expect(await store.liveLocksOf(bob)).toEqual([
      { tokenId: 5n, amount: 2_000n * E18, lockEnd: 1_800_000_005n, autoMax: false },
    ]);
    expect(await store.liveLocksOf("0x0000000000000000000000000000000000000001")).toEqual([]);
  });

  it("never lists a burned row or an emptied one, even if it kept an owner", async () => {
    await idx.query(`INSERT INTO lock VALUES (20, '${bob}', 0, 0, false, false, true, 1, 1, 1, 1)`);
    await idx.query(`INSERT INTO lock VALUES (21, '${bob}', 0, 0, false, false, false, 1, 1, 1, 1)`);
    const store = createLockStore({ db: idx.db });
    expect((await store.liveLocksOf(bob)).map((l) => l.tokenId)).toEqual([5n]);
  });

  it("reads Ponder's readiness flag; no row or is_ready 0 is not ready", async () => {
    const store = createLockStore({ db: idx.db, schema: SCHEMA });
    expect(await store.isReady()).toBe(false);
    await idx.query(`INSERT INTO _ponder_meta VALUES ('app', '{"is_ready": 0, "is_locked": 1}')`);
    expect(await store.isReady()).toBe(false);
    await idx.query(`UPDATE _ponder_meta SET value = jsonb_set(value, '{is_ready}', '1') WHERE key = 'app'`);
    expect(await store.isReady()).toBe(true);
  });

  it("sees through a same-named TEMP table in its session (what Ponder's flush leaves in PGlite)", async () => {
    // Ponder's flush leaves `CREATE TEMP TABLE "lock"` behind, empty, in its one PGlite session; pg_temp comes
    // first in the search path, so an unqualified query would read it and find nothing.
    await idx.query(`CREATE TEMP TABLE lock AS SELECT * FROM ${SCHEMA}.lock WITH NO DATA`);
    expect(await idx.query(`SELECT count(*)::int AS n FROM lock`)).toEqual([{ n: 0 }]);
    const store = createLockStore({ db: idx.db });
    expect((await store.liveLocksOf(alice)).map((l) => l.tokenId)).toEqual([2n, 7n, 11n]);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    "lockIdsOf answers the same through a prepared statement on the pool as through drizzle",
    async () => {
      await idx.query(`CREATE TABLE IF NOT EXISTS _ponder_checkpoint (chain_name text, latest_checkpoint text)`);
      // Ponder's checkpoint: 10 digits of timestamp, 16 of chain id, 16 of block number, then the rest.
      const checkpoint = `1800000000${"31337".padStart(16, "0")}${"123".padStart(16, "0")}`.padEnd(75, "0");
      await idx.query(`INSERT INTO _ponder_checkpoint VALUES ('local', '${checkpoint}')`);
      const url = (database.forPonder(SCHEMA) as { url: string }).url;
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        const prepared = createLockStore({ db: idx.db, schema: SCHEMA, prepared: (st) => pool.query(st) });
        const viaDrizzle = createLockStore({ db: idx.db, schema: SCHEMA });
        for (const owner of [
          getAddress(alice),
          getAddress(bob),
          "0x0000000000000000000000000000000000000001" as const,
        ]) {
          // Twice: the second run binds the statement the first one prepared on that connection.
          for (let i = 0; i < 2; i++)
            expect(await prepared.lockIdsOf(owner)).toEqual(await viaDrizzle.lockIdsOf(owner));
        }
        expect(await prepared.lockIdsOf(getAddress(alice))).toEqual({
          tokenIds: [2n, 7n, 11n],
          maxTokenId: 21n,
          indexedBlock: 123n,
        });
      } finally {
        await pool.end();
      }
    },
  );
});
