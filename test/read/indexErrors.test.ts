/**
 * The index's Postgres errors in the API's terms (api/read/runtime.ts `guarded`), on a real Postgres:
 * - the views schema not created yet (42P01 / 3F000): 503 INDEX_UNAVAILABLE `not started`, as /ready's "index
 *   missing" — not `unreachable`, not logged as the database failing, not a failed read for /ready's streak;
 * - a read chosen as a deadlock's victim (40P01, as during Ponder's `CREATE OR REPLACE VIEW` switch) is read again,
 *   once: two sessions locking two tables in opposite orders, the read's session the one Postgres aborts.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";
import { ReadHealth } from "../../api/read/readHealth";
import { guarded, type IndexRuntime, pgCodeOf } from "../../api/read/runtime";
import { type IndexDatabase, openIndexDatabase } from "../../api/server/indexDatabase";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SCHEMA = `index_errors_${process.pid}`;

let admin: pg.Client;
beforeAll(async () => {
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
});
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await admin.end();
});

describe("the views schema not created yet", () => {
  let database: IndexDatabase;
  afterAll(async () => database?.close());

  it("503 INDEX_UNAVAILABLE 'not started', nothing logged as a database failure", async () => {
    const lines: Record<string, unknown>[] = [];
    database = openIndexDatabase({ url: PG_URL, schema: `${SCHEMA}_absent` });
    const app = createApp({
      config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
      rpc: null,
      index: { atBlock: database.atBlock },
      logger: createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
    });
    for (const path of ["/stats", "/locks/1", "/leaderboards/ve"]) {
      const res = await app.request(`/api/index/v1${path}`);
      expect(res.status, path).toBe(503);
      const body = (await res.json()) as { error: string; detail: { reason: string } };
      expect(body, path).toMatchObject({ error: "INDEX_UNAVAILABLE", detail: { reason: "not started" } });
    }
    expect(lines.filter((l) => l.msg === "lock index read failed")).toEqual([]);
  });
});

describe("a read chosen as a deadlock's victim", () => {
  it("is read again once and answers; the streak of failed reads is not started", async () => {
    await admin.query(`CREATE SCHEMA ${SCHEMA}; CREATE TABLE ${SCHEMA}.a (x int); CREATE TABLE ${SCHEMA}.b (x int)`);
    await admin.query(`INSERT INTO ${SCHEMA}.a VALUES (1); INSERT INTO ${SCHEMA}.b VALUES (2)`);
    // The switch's session: holds b, then wants a. It waits long before checking for a deadlock, so the reader's
    // session (which checks after 50 ms) is the one Postgres aborts.
    const switcher = new pg.Client({ connectionString: PG_URL });
    const reader = new pg.Client({ connectionString: PG_URL });
    await Promise.all([switcher.connect(), reader.connect()]);
    try {
      await switcher.query("SET deadlock_timeout = '5s'");
      await reader.query("SET deadlock_timeout = '50ms'");
      await switcher.query(`BEGIN; LOCK TABLE ${SCHEMA}.b IN ACCESS EXCLUSIVE MODE`);
      const codes: (string | undefined)[] = [];
      let switched: Promise<unknown> = Promise.resolve();
      let reads = 0;
      // The reader holds a (its first statement in the transaction), then reads b: waits for the switcher.
      const read = async () => {
        reads++;
        await reader.query("BEGIN");
        try {
          await reader.query(`SELECT x FROM ${SCHEMA}.a`);
          if (reads === 1) {
            // The switcher now waits for a (Postgres checks a wait for a cycle once, after deadlock_timeout: the
            // reader's wait, begun after, finds it).
            switched = switcher
              .query(`LOCK TABLE ${SCHEMA}.a IN ACCESS EXCLUSIVE MODE`)
              .then(() => switcher.query("COMMIT"));
            await new Promise((r) => setTimeout(r, 200));
          }
          const { rows } = await reader.query(
            `SELECT (SELECT x FROM ${SCHEMA}.a) + (SELECT x FROM ${SCHEMA}.b) AS sum`,
          );
          await reader.query("COMMIT");
          return rows[0].sum as number;
        } catch (error) {
          codes.push(pgCodeOf(error));
          await reader.query("ROLLBACK");
          throw error;
        }
      };
      const health = new ReadHealth();
      const rt = { health, warn: () => {}, notified: undefined } as unknown as IndexRuntime;
      expect(await guarded(rt, read)).toBe(3);
      expect(codes).toEqual(["40P01"]);
      expect(reads).toBe(2);
      expect(health.failingForMs()).toBe(0);
      await switched;
    } finally {
      await Promise.all([switcher.end(), reader.end()]);
    }
  });
});
