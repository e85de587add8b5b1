/**
 * The per-request pool's admission (api/server/indexPool.ts) on a real Postgres, and how the read model says it
 * (api/read/runtime.ts guarded): a checkout that waits out the pool's wait, and one arriving behind more statements
 * than the pool serves in that time (refused at once), are IndexPoolBusyError — 503 INDEX_UNAVAILABLE "busy" with
 * Retry-After, the database asked nothing; a database that refuses the connection stays "unreachable".
 */
import { afterEach, describe, expect, it } from "vitest";
import { IndexBusyError, IndexUnavailableError } from "../../api/http/errors";
import { IndexPoolBusyError } from "../../api/read/contract";
import { ReadHealth } from "../../api/read/readHealth";
import { guarded, type IndexRuntime } from "../../api/read/runtime";
import { indexPoolConfig } from "../../api/server/indexDatabase";
import { IndexPool } from "../../api/server/indexPool";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

const pools: IndexPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

function pool(url: string, max: number, waitMs: number, refused?: string[]): IndexPool {
  const p = new IndexPool(
    { ...indexPoolConfig(url, "requests", max), connectionTimeoutMillis: waitMs },
    { waitMs, ...(refused ? { onRefused: (why: string) => refused.push(why) } : {}) },
  );
  p.on("error", () => {});
  pools.push(p);
  return p;
}

/** A runtime for guarded alone: its health and its warning. */
function runtimeOf(health = new ReadHealth()): IndexRuntime {
  return { health, warn: () => {}, branch: null, notified: null } as unknown as IndexRuntime;
}

describe("the index's per-request pool", () => {
  it("a checkout that waits out the pool's wait is refused as busy (wait expired), with a retry time", async () => {
    const refused: string[] = [];
    const p = pool(PG_URL, 1, 1000, refused);
    const held = await p.connect();
    const started = performance.now();
    const error = await p.query("SELECT 1").catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(error).toBeInstanceOf(IndexPoolBusyError);
    expect(error).toMatchObject({ why: "wait expired", retryAfterSec: 1 });
    expect(refused).toEqual(["wait expired"]);
    held.release();
    expect((await p.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("more waiting than the pool serves within its wait: refused at once (queue full), the rest served", async () => {
    const refused: string[] = [];
    const p = pool(PG_URL, 2, 400, refused);
    // Each statement holds its connection ~50 ms: the pool serves 2 × 400 / 50 = 16 waiting in time, once measured,
    // and admits half of them.
    for (let i = 0; i < 4; i++) await Promise.all([p.query("SELECT pg_sleep(0.05)"), p.query("SELECT pg_sleep(0.05)")]);
    expect(p.holdMs).toBeGreaterThan(30);
    const capacity = p.queueCapacity;
    expect(capacity).toBeLessThan(15);
    const n = 2 + capacity + 20;
    const outcomes = await Promise.all(
      Array.from({ length: n }, async () => {
        const started = performance.now();
        try {
          await p.query("SELECT pg_sleep(0.05)");
          return { ok: true, ms: performance.now() - started };
        } catch (error) {
          return { ok: false, error, ms: performance.now() - started };
        }
      }),
    );
    // Those beyond the two idle connections and the capacity, refused in the same turn; the admitted are served (on
    // a machine loaded enough for one to wait out its 400 ms anyway, that one is refused too, as "wait expired").
    const atOnce = outcomes.filter((o) => !o.ok && (o.error as IndexPoolBusyError).why === "queue full");
    expect(atOnce.length).toBe(n - 2 - capacity);
    for (const r of atOnce) {
      expect(r.error).toBeInstanceOf(IndexPoolBusyError);
      expect(r.ms).toBeLessThan(50);
    }
    for (const r of outcomes.filter((o) => !o.ok && !atOnce.includes(o))) {
      expect(r.error).toMatchObject({ why: "wait expired" });
      expect(r.ms).toBeGreaterThanOrEqual(390);
    }
    expect(refused.filter((w) => w === "queue full").length).toBe(atOnce.length);
    expect(outcomes.filter((o) => o.ok).length).toBeGreaterThan(0);
  });

  it("read through the runtime: busy with Retry-After, not unreachable; a refused connection is unreachable", async () => {
    const p = pool(PG_URL, 1, 1000);
    const held = await p.connect();
    const health = new ReadHealth();
    const busy = await guarded(runtimeOf(health), () => p.query("SELECT 1")).catch((e: unknown) => e);
    held.release();
    expect(busy).toBeInstanceOf(IndexBusyError);
    expect((busy as IndexBusyError).status).toBe(503);
    expect((busy as IndexBusyError).toEnvelope()).toMatchObject({
      error: "INDEX_UNAVAILABLE",
      detail: { reason: "busy", why: "wait expired" },
      retryAfterSec: 1,
    });
    // Load is no failure of the database: /ready's streak is not started by it.
    expect(health.failingForMs()).toBe(0);

    // Nothing listens on port 1: the database does not answer.
    const down = pool("postgresql://postgres@127.0.0.1:1/postgres", 1, 1000);
    const unreachable = await guarded(runtimeOf(), () => down.query("SELECT 1")).catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(IndexUnavailableError);
    expect((unreachable as IndexUnavailableError).detail).toMatchObject({ reason: "unreachable" });
  });
});
