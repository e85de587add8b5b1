/**
 * The index database's two pools (api/server/indexDatabase.ts) on a real Postgres: every connection starts with
 * the session settings (read back from the server), and opening connections under concurrent queries makes pg
 * print nothing (its "will be removed in pg@9.0" deprecation is what a query in the pool's `connect` event gave).
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLIENT_CONNECTION_CHECK_MS } from "../../api/read/statements";
import { indexPoolConfig, WHOLE_INDEX_DB } from "../../api/server/indexDatabase";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** The settings of the connection a query runs on; the sleep keeps it busy so concurrent queries open others. */
const SETTINGS = `SELECT pg_backend_pid() AS pid,
  current_setting('client_connection_check_interval') AS check_interval,
  current_setting('work_mem') AS work_mem, current_setting('jit') AS jit, pg_sleep(0.1)::text AS slept`;

type Settings = { pid: number; check_interval: string; work_mem: string; jit: string };

/** `n` queries at once on a new pool: each on a connection of its own, the pool opening them all. */
async function settingsOfEveryConnection(config: pg.PoolConfig, n: number): Promise<Settings[]> {
  const pool = new pg.Pool(config);
  try {
    const results = await Promise.all(Array.from({ length: n }, () => pool.query<Settings>(SETTINGS)));
    return results.map((r) => r.rows[0]!);
  } finally {
    await pool.end();
  }
}

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
beforeEach(() => {
  warnings.length = 0;
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
});
/** Node emits a warning on the next tick after the call that caused it. */
const settled = () => new Promise((r) => setImmediate(r));

describe("the index database's connections", () => {
  it("per-request pool: every connection checks its client every 250 ms, with the index's work_mem and no JIT", async () => {
    const rows = await settingsOfEveryConnection(indexPoolConfig(PG_URL, "requests", 4), 4);
    expect(new Set(rows.map((r) => r.pid)).size).toBe(4);
    for (const row of rows) {
      expect(row).toMatchObject({ check_interval: `${CLIENT_CONNECTION_CHECK_MS}ms`, work_mem: "64MB", jit: "off" });
    }
    await settled();
    expect(warnings.map(String)).toEqual([]);
  });

  it("whole-index pool: every connection has the index's work_mem and no JIT", async () => {
    const n = WHOLE_INDEX_DB.connections;
    const rows = await settingsOfEveryConnection(indexPoolConfig(PG_URL, "wholeIndex"), n);
    expect(new Set(rows.map((r) => r.pid)).size).toBe(n);
    for (const row of rows) expect(row).toMatchObject({ work_mem: "64MB", jit: "off" });
    await settled();
    expect(warnings.map(String)).toEqual([]);
  });

  // Last: Node prints a deprecation once per process. It shows the check above would have seen the old way.
  it("(the check sees it) a statement issued in the pool's connect event makes pg warn", async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    pool.on("connect", (client) => {
      client.query(`SET client_connection_check_interval = ${CLIENT_CONNECTION_CHECK_MS}`).catch(() => {});
    });
    try {
      await pool.query("SELECT 1");
    } finally {
      await pool.end();
    }
    await settled();
    expect(warnings.map(String)).toEqual([expect.stringContaining("will be removed in pg@9.0")]);
  });
});
