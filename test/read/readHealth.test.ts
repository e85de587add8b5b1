/**
 * /ready when the index's reads fail while its database still answers (issue 30, 7), on the API process as operators
 * run it (dist/server/main.js over a Postgres index, test/support/servedIndex.ts): a table lock held by another
 * session makes every read of the index time out while /ready's own check (the tables are there) still passes.
 * After READY_INDEX_FAILURE_MS of reads failing with no success between, /ready answers 503 "index reads failing"
 * (docs/operations.md, Probes); once the lock goes, the next /ready is 200 again with no other traffic.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReadHealth, readHealthReadiness } from "../../api/read/readHealth";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
/** Short, so the test is; the default (30 s) is the same rule. */
const FAIL_AFTER_MS = 3_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("readHealthReadiness", () => {
  const probe = { probe: async () => ({ head: { block: 1n, time: 1n, finalized: 1n }, eventTime: null }) };

  it("ready until the streak reaches its bound; a success anywhere ends it", async () => {
    const health = new ReadHealth();
    let reads = 0;
    const failing = {
      probe: () => {
        reads++;
        return Promise.reject(new Error("canceling statement due to lock timeout"));
      },
    };
    const ready = readHealthReadiness({ base: undefined, health, index: failing, failAfterMs: 50 });
    health.failed();
    expect(await ready()).toEqual({ ready: true });
    expect(reads).toBe(0); // no read of its own while the streak is short
    await sleep(60);
    expect(await ready()).toEqual({ ready: false, reason: "index reads failing" });
    health.succeeded();
    expect(await ready()).toEqual({ ready: true });
  });

  it("the base's answer first; a probe read that succeeds ends the streak; one that hangs is bounded", async () => {
    const health = new ReadHealth();
    health.failed(performance.now() - 1_000);
    const down = readHealthReadiness({
      base: async () => ({ ready: false, reason: "database unreachable" }),
      health,
      index: probe,
      failAfterMs: 50,
    });
    expect(await down()).toEqual({ ready: false, reason: "database unreachable" });
    const hanging = readHealthReadiness({
      base: undefined,
      health,
      index: { probe: () => new Promise(() => {}) },
      failAfterMs: 50,
      probeMs: 100,
    });
    const t0 = performance.now();
    expect(await hanging()).toEqual({ ready: false, reason: "index reads failing" });
    expect(performance.now() - t0).toBeLessThan(1_000); // at the probe's 100 ms, not never
    expect(await readHealthReadiness({ base: undefined, health, index: probe, failAfterMs: 50 })()).toEqual({
      ready: true,
    });
    expect(health.failingForMs()).toBe(0);
  });
});

describe("/ready on the API process while a table lock makes every index read fail", () => {
  let served: ServedIndex;

  beforeAll(async () => {
    served = await startServedIndex({
      serverUrl: PG_URL,
      schema: "readhealth",
      synthetic: { events: 200, owners: 4, seed: 5 },
      env: { READY_INDEX_FAILURE_MS: String(FAIL_AFTER_MS) },
    });
  }, 120_000);

  afterAll(async () => {
    await served?.stop();
  });

  const ready = async () => {
    const res = await fetch(`${served.api.url}/ready`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it(`503 "index reads failing" once reads have failed for READY_INDEX_FAILURE_MS, 200 again when they can`, async () => {
    const tokenId = served.index.events[0]!.tokenId;
    const read = () => fetch(`${served.api.url}/api/index/v1/locks/${tokenId}`).then((r) => r.status);
    expect(await read()).toBe(200);
    expect(await ready()).toMatchObject({ status: 200 });

    const holder = new pg.Client({ connectionString: served.databaseUrl });
    await holder.connect();
    let held = true;
    try {
      await holder.query(
        `BEGIN; LOCK TABLE ${served.schema}.lock, ${served.schema}.lock_event, ${served.schema}._ponder_checkpoint IN ACCESS EXCLUSIVE MODE`,
      );
      // Readers keep trying (each fails at the 2 s statement timeout) while /ready is polled.
      const statuses: number[] = [];
      let firstFailure: number | null = null;
      let reading = true;
      const readers = Array.from({ length: 3 }, async () => {
        while (reading) {
          const status = await read();
          statuses.push(status);
          if (status === 503) firstFailure ??= performance.now();
        }
      });
      let unreadyAt: number | null = null;
      let unready: Record<string, unknown> | null = null;
      const until = performance.now() + 2_500 + FAIL_AFTER_MS + 3_000;
      while (performance.now() < until) {
        const r = await ready();
        if (r.status === 503) {
          unreadyAt = performance.now();
          unready = r.body;
          break;
        }
        expect(r.status).toBe(200);
        // Ready throughout the first READY_INDEX_FAILURE_MS of failures.
        if (firstFailure !== null) expect(performance.now() - firstFailure).toBeLessThan(FAIL_AFTER_MS + 1_000);
        await sleep(100);
      }
      expect(firstFailure, "the index reads never failed behind the lock").not.toBeNull();
      expect(unready).toEqual({ ok: false, status: "unready", reason: "index reads failing" });
      const after = unreadyAt! - firstFailure!;
      console.log(
        `/ready 503 ${Math.round(after)} ms after the first failed read (READY_INDEX_FAILURE_MS ${FAIL_AFTER_MS})`,
      );
      expect(after).toBeGreaterThanOrEqual(FAIL_AFTER_MS - 50);
      expect(after).toBeLessThan(FAIL_AFTER_MS + 1_500);
      // It stays unready while the lock holds, each answer within its bound (the probe read is cut at 500 ms).
      const t0 = performance.now();
      expect(await ready()).toMatchObject({ status: 503 });
      expect(performance.now() - t0).toBeLessThan(1_000);
      reading = false;
      await Promise.all(readers);
      expect(statuses.every((s) => s === 503)).toBe(true);

      // The lock goes; no other traffic: the next /ready reads the index itself and is 200.
      await holder.query("COMMIT");
      held = false;
      const released = performance.now();
      let back: number | null = null;
      while (performance.now() - released < 5_000) {
        if ((await ready()).status === 200) {
          back = performance.now() - released;
          break;
        }
        await sleep(50);
      }
      console.log(`/ready 200 again ${back === null ? "never" : `${Math.round(back)} ms`} after the lock went`);
      expect(back).not.toBeNull();
      expect(back!).toBeLessThan(1_000);
      expect(await read()).toBe(200);
    } finally {
      if (held) await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
    }
  }, 60_000);
});
