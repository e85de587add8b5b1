/**
 * An index read its request's deadline cancels (docs/api.md "Errors, rate limits, deadlines": min(RPC_TIMEOUT_MS, 10 s); RPC_TIMEOUT_MS may
 * be set as low as 100 ms, below the index's own 2 s statement timeout) is answered with the route's documented error —
 * 503 INDEX_UNAVAILABLE — never a 500 INTERNAL_ERROR with an "unhandled error" log line and its stack; a client that
 * hangs up during such a read logs nothing at error level either. Such reads are failed reads for /ready's streak
 * (READY_INDEX_FAILURE_MS): the index did not answer within its requests' time. On the API process as operators run it
 * (dist/server/main.js over a Postgres index, test/support/servedIndex.ts); another session's table lock holds the
 * index's reads past the deadline (as a `pg_restore --single-transaction` or a loaded Postgres would).
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const DEADLINE_MS = 1_000;
/** READY_INDEX_FAILURE_MS: reads failing this long turn /ready 503 (its minimum). */
const READY_AFTER_MS = 1_000;

describe("an index read past RPC_TIMEOUT_MS's deadline (API process, Postgres)", () => {
  let served: ServedIndex;

  beforeAll(async () => {
    served = await startServedIndex({
      serverUrl: PG_URL,
      schema: "deadlinecancel",
      synthetic: { events: 200, owners: 4, seed: 7 },
      env: { RPC_TIMEOUT_MS: String(DEADLINE_MS), LOG_LEVEL: "info", READY_INDEX_FAILURE_MS: String(READY_AFTER_MS) },
    });
  }, 120_000);

  afterAll(async () => {
    await served?.stop();
  });

  it("answers 503 INDEX_UNAVAILABLE at the deadline, not a 500; no error-level line, nor for a hang-up", async () => {
    const tokenId = served.index.events[0]!.tokenId;
    const block = served.index.events.at(-1)!.blockNumber;
    const paths = ["/api/index/v1/stats", `/api/index/v1/locks/${tokenId}`];
    for (const p of paths) expect((await fetch(`${served.api.url}${p}`)).status, p).toBe(200);
    // A past block nobody asked for yet: its stats are a statement's, not an answer already made.
    paths.push(`/api/index/v1/stats?block=${block - 3n}`);

    const holder = new pg.Client({ connectionString: served.databaseUrl });
    await holder.connect();
    try {
      await holder.query(
        // The index's tables, not Ponder's checkpoint: /ready's own check of the database still answers, so only the
        // failed reads' streak can tell it that every index read fails.
        `BEGIN; LOCK TABLE ${served.schema}.lock, ${served.schema}.lock_event IN ACCESS EXCLUSIVE MODE`,
      );
      const logFrom = served.api.log().length;
      for (const p of paths) {
        const t0 = performance.now();
        const res = await fetch(`${served.api.url}${p}`, { signal: AbortSignal.timeout(15_000) });
        const ms = performance.now() - t0;
        const body = (await res.json()) as { ok: boolean; error: string; detail?: Record<string, unknown> };
        expect([p, res.status, body.error, body.detail?.reason]).toEqual([p, 503, "INDEX_UNAVAILABLE", "unreachable"]);
        expect(res.headers.get("cache-control")).toBe("no-store");
        // At the deadline (plus the grace the deadline gives a route), not at the 2 s statement timeout's failure.
        expect(ms, p).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
        expect(ms, p).toBeLessThan(DEADLINE_MS + 900);
      }
      // Reads the deadline cancelled are reads the index did not answer: past READY_INDEX_FAILURE_MS of them, /ready
      // reads the index itself and says so (it answered 200 while every index route was 503: a cancelled read was
      // not counted).
      const ready = await fetch(`${served.api.url}/ready`, { signal: AbortSignal.timeout(5_000) });
      expect([ready.status, ((await ready.json()) as { reason?: string }).reason]).toEqual([
        503,
        "index reads failing",
      ]);
      // A client that hangs up while its read waits behind the lock.
      await fetch(`${served.api.url}/api/index/v1/stats?block=${block - 5n}`, {
        signal: AbortSignal.timeout(300),
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, DEADLINE_MS + 500));
      const lines = served.api.log().slice(logFrom);
      expect(lines).not.toMatch(/"level":"error"/);
      expect(lines).not.toMatch(/unhandled error/);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
    for (const p of paths) expect((await fetch(`${served.api.url}${p}`)).status, p).toBe(200);
    expect((await fetch(`${served.api.url}/ready`)).status).toBe(200);
  }, 60_000);
});
