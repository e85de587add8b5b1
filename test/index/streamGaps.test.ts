/**
 * A stream never passes over a block silently (api/index/streamHub.ts): when the read of WHICH blocks changed (the
 * index's `changes` statement) fails during a catch-up, it is read once more, and if it still fails the stream is
 * closed before any event of those blocks — not made live past them. On real Postgres: a synthetic index in a schema
 * of its own, read through the app as the API process reads it (a pg pool, here with `lock_timeout` 300 ms), and the
 * table only that statement reads (`protocol_event`) locked by another session, so the read fails as a locked table
 * in the views schema makes it fail in production, while the answers (`stats`) still read.
 */
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { readSse } from "../support/sseReader";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const BASE = "/api/index/v1";
const SCHEMA = `stream_gaps_${process.pid}_${Date.now()}`;
const START = 46_183_959n;

let index: SyntheticIndex;
let writer: pg.Client;
let pool: pg.Pool;
let app: ReturnType<typeof createApp>;
const told = toldSignal();

const commit = (block: bigint) =>
  commitTold(told, (text, params) => writer.query(text, params), `"${SCHEMA}"`, index, block);

/** The blocks with a lock event (each changes `stats`), ascending. */
const eventBlocks = () => [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 300, owners: 20, seed: 11, startBlock: START });
  writer = new pg.Client({ connectionString: PG_URL });
  await writer.connect();
  await writeSyntheticIndex((text, params) => writer.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  // A statement waiting on a lock gives up after 300 ms, as one under the pool's statement timeout does in production.
  pool = new pg.Pool({ connectionString: PG_URL, max: 4, options: "-c lock_timeout=300" });
  app = createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(pool), schema: SCHEMA }), signal: told.signal },
    logger: silentLogger,
  });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await writer?.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await writer?.end();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a catch-up whose read of the changed blocks fails", () => {
  it("ends the stream before any block it could not check; the resume from its last id gets every block", async () => {
    const blocks = eventBlocks();
    const [last, head, next] = [blocks.at(-30)!, blocks.at(-15)!, blocks.at(-5)!];
    await commit(head);
    // Another session holds the table only the changes statement reads: that read fails, the answers do not.
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE "${SCHEMA}".protocol_event IN ACCESS EXCLUSIVE MODE`);
    const stats = await app.request(`${BASE}/stats?block=${head}`);
    expect(stats.status).toBe(200);

    const first = new AbortController();
    const s = readSse(
      await app.request(`${BASE}/stream?stats`, { headers: { "last-event-id": String(last) }, signal: first.signal }),
    );
    // Read twice (300 ms each), then closed.
    for (let i = 0; i < 40 && !s.ended(); i++) await sleep(100);
    await locker.query("ROLLBACK");
    await locker.end();
    // The index moves on; a stream left live past its failed catch-up would be sent this head's blocks only.
    await commit(next);
    await sleep(500);
    first.abort();
    // No event of a block it could not check: ids the client holds never skip a block with a change unseen.
    const ids = s.events.map((e) => BigInt(e.id!));
    const expected = blocks.filter((b) => b > last && b <= (ids.at(-1) ?? last));
    expect(ids).toEqual(expected);
    expect(s.ended()).toBe(true);

    // EventSource reconnects with the last id it was sent: the catch-up reads the blocks again, now every one.
    const again = new AbortController();
    const r = readSse(
      await app.request(`${BASE}/stream?stats`, { headers: { "last-event-id": String(last) }, signal: again.signal }),
    );
    await r.until((e) => e.id === String(next), 10_000);
    expect(r.events.map((e) => e.id)).toEqual(blocks.filter((b) => b > last && b <= next).map(String));
    again.abort();
    const metrics = await (await app.request("/api/metrics")).text();
    expect(metrics).toContain('api_streams_dropped_total{reason="read_failed"} 1');
  }, 30_000);
});

describe("a live head whose read of the changed blocks fails", () => {
  it("closes every stream before the block, each told a retry of its own within docs/api.md's bounds", async () => {
    const blocks = eventBlocks();
    const [head, next] = [blocks.at(-3)!, blocks.at(-1)!];
    await commit(head);
    const n = 6;
    const aborts = Array.from({ length: n }, () => new AbortController());
    const streams = await Promise.all(
      aborts.map(async (abort) => readSse(await app.request(`${BASE}/stream?stats`, { signal: abort.signal }))),
    );
    // Each live: its answer at the head sent, its catch-up done.
    for (const s of streams) await s.until((e) => e.id === String(head), 10_000);
    await sleep(200);
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE "${SCHEMA}".protocol_event IN ACCESS EXCLUSIVE MODE`);
    // The hub's read of head + 1 … next fails twice (300 ms each): every stream is closed at once.
    await commit(next);
    for (let i = 0; i < 40 && !streams.every((s) => s.ended()); i++) await sleep(100);
    await locker.query("ROLLBACK");
    await locker.end();
    for (const abort of aborts) abort.abort();

    for (const s of streams) {
      expect(s.ended()).toBe(true);
      // Nothing of the blocks it could not check; the client resumes from the head's id.
      expect(s.events.map((e) => e.id)).toEqual([String(head)]);
      // The open's retry, then the one sent before the close.
      expect(s.retries).toHaveLength(2);
      expect(s.retries[0]).toBe(2000);
    }
    const delays = streams.map((s) => s.retries[1]!);
    // 6 streams closed together: 2 s plus a point of a 2 s window (10 ms a stream, at least 2 s), each its own.
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(2000);
      expect(d).toBeLessThan(4000);
    }
    expect(new Set(delays).size).toBe(n);
  }, 30_000);
});
