import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IndexDatabase, openIndexDatabase } from "../../api/server/indexDatabase";
import { boundedReadiness, READY_PROBE_MS } from "../../api/server/readiness";

// The one /ready rule both serving processes use (the API process over the views schema, npm start over
// Ponder's in-process PGlite): bounded, three documented outcomes, no internals.
describe("boundedReadiness", () => {
  it("index present → ready; absent → index missing", async () => {
    expect(await boundedReadiness(async () => true)()).toEqual({ ready: true });
    expect(await boundedReadiness(async () => false)()).toEqual({ ready: false, reason: "index missing" });
  });

  it("a failing database → database unreachable, the error's text nowhere in the answer", async () => {
    const state = await boundedReadiness(async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:5432 at node_modules/pg-pool/index.js:45:11");
    })();
    expect(state).toEqual({ ready: false, reason: "database unreachable" });
  });

  it("a database that never answers → database unreachable after READY_PROBE_MS, not later", async () => {
    const t0 = performance.now();
    const state = await boundedReadiness(() => new Promise<boolean>(() => {}))();
    const ms = performance.now() - t0;
    expect(state).toEqual({ ready: false, reason: "database unreachable" });
    expect(ms).toBeGreaterThanOrEqual(READY_PROBE_MS - 5);
    expect(ms).toBeLessThan(READY_PROBE_MS + 400);
  });
});

// The API process's /ready (api/server/indexDatabase.ts) on a real Postgres, while a flood fills the request pool:
// its queue refuses the excess as load (`busy`, api/server/indexPool.ts), and /ready must still say the database
// answers — a replica taken out of the load balancer for being busy would send its load to the others.
describe("/ready while the index pool is full", () => {
  const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const SCHEMA = `ready_busy_${process.pid}`;
  let admin: pg.Client;
  let holder: pg.Client;
  let database: IndexDatabase | undefined;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    holder = new pg.Client({ connectionString: PG_URL });
    await Promise.all([admin.connect(), holder.connect()]);
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.query(`CREATE SCHEMA ${SCHEMA}; CREATE TABLE ${SCHEMA}.lock (id int)`);
  });
  afterAll(async () => {
    await holder.query("ROLLBACK").catch(() => {});
    await database?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await Promise.all([admin.end(), holder.end()]);
  });

  it("answers ready while every request connection waits and the queue is refused as busy", async () => {
    const refused: string[] = [];
    database = openIndexDatabase({ url: PG_URL, schema: SCHEMA, onRefused: (why) => refused.push(why) });
    expect(await database.readiness()).toEqual({ ready: true });
    // Every statement on the table waits behind this lock (until the pool's 2 s statement timeout).
    await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.lock IN ACCESS EXCLUSIVE MODE`);
    const owner = "0x00000000000000000000000000000000000000aa" as const;
    const flood = Array.from({ length: 1_200 }, () => database?.locks.liveLocksOf(owner).catch((e: unknown) => e));
    await new Promise((r) => setTimeout(r, 100));
    expect(refused.length).toBeGreaterThan(0);
    expect(database.pool().waiting).toBeGreaterThan(0);
    const states = [];
    for (let i = 0; i < 3; i++) states.push(await database.readiness());
    expect(states).toEqual([{ ready: true }, { ready: true }, { ready: true }]);
    await holder.query("ROLLBACK");
    await Promise.all(flood);
  });
});
