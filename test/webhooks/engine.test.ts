/**
 * The webhook worker idles while no subscription exists (api/webhooks/engine.ts): on the real store (an in-process
 * PGlite, as the local stack runs it) with every statement counted, a process with no webhook issues no statement on
 * the outbox — only a rare look at the subscriptions — and a registration in this process (what POST /webhooks does),
 * or one by another replica (seen at the next look), has deliveries made as before, by a real HTTP receiver. On real
 * Postgres: the worker is a pool — a slow receiver holds only its own attempt, never the other webhooks', and 40 that
 * never answer do not delay a healthy one (their attempts give up the shared slots, their retries take back-off ones)
 * — that keeps each webhook's order and, with two processes on one outbox, sends each delivery once.
 */
import { createServer } from "node:http";
import type { Socket } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { Hono } from "hono";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AppEnv } from "../../api/http/env";
import { routeAnswers } from "../../api/live/routeAnswers";
import { createLogger } from "../../api/observability/logger";
import { createWebhookMetrics } from "../../api/observability/webhookMetrics";
import { createIndexRuntime, NO_INDEX } from "../../api/read/runtime";
import { WEBHOOK_TIMING, type WebhookSettings, type WebhookTiming } from "../../api/webhooks/engine";
import { Webhooks } from "../../api/webhooks/service";
import { pgliteSql, pgSql, type Sql } from "../../api/webhooks/sql";
import { platformConfig } from "../support/platformApp";
import { WebhookReceiver } from "../support/webhookReceiver";

const SCHEMA = "webhooks";
const SETTINGS: WebhookSettings = {
  operatorToken: null,
  allowPrivate: "loopback",
  retryScheduleMs: [100],
  timeoutMs: 2_000,
  maxSubscriptions: 10,
};
const logger = createLogger({ level: "error", write: () => {} });

/** The store's statements as the database receives them, transactions' included. */
function counting(sql: Sql): { sql: Sql; statements: string[] } {
  const statements: string[] = [];
  const counted = (q: Pick<Sql, "query">): Pick<Sql, "query"> => ({
    query: (text, values) => {
      statements.push(text);
      return q.query(text, values);
    },
  });
  return {
    statements,
    sql: {
      ...counted(sql),
      transaction: (work) => sql.transaction((tx) => work(counted(tx))),
      close: () => sql.close(),
    },
  };
}

const outbox = (statements: string[]) => statements.filter((s) => s.includes(`${SCHEMA}".delivery`));
const looks = (statements: string[]) => statements.filter((s) => s.includes("SELECT EXISTS (SELECT 1 FROM"));
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

/** One process's webhooks on a real Postgres schema, its engine started as startWebhooks' is. */
async function startOnPostgres(schema: string, settings: WebhookSettings = SETTINGS) {
  const webhooks = new Webhooks(pgSql(PG_URL, 3), schema, settings, logger, createWebhookMetrics(), {
    ...WEBHOOK_TIMING,
    pollMs: 100,
    subscribedCheckMs: 60_000,
    backlogMs: 60_000,
  });
  await webhooks.ready();
  const rt = createIndexRuntime({ source: NO_INDEX, config: platformConfig(), rpc: null, logger });
  webhooks.attach(rt, routeAnswers(new Hono<AppEnv>(), "webhook"));
  opened.push({ close: () => webhooks.close() });
  return webhooks;
}

/** One process's webhooks on `db`, its engine started on a runtime without an index (so it feeds nothing itself). */
async function startWebhooks(db: PGlite, timing: WebhookTiming) {
  const { sql, statements } = counting(pgliteSql(db));
  const webhooks = new Webhooks(sql, SCHEMA, SETTINGS, logger, createWebhookMetrics(), timing);
  await webhooks.ready();
  statements.length = 0; // the tables' creation, once per process, is not the worker's
  const rt = createIndexRuntime({ source: NO_INDEX, config: platformConfig(), rpc: null, logger });
  webhooks.attach(rt, routeAnswers(new Hono<AppEnv>(), "webhook"));
  opened.push({ close: () => webhooks.close() });
  return { webhooks, statements };
}

async function database(): Promise<PGlite> {
  const db = new PGlite();
  await db.waitReady;
  return db;
}

async function receiver(port = 0): Promise<WebhookReceiver> {
  const r = new WebhookReceiver();
  r.port = port;
  await r.up();
  opened.push({ close: () => r.down() });
  return r;
}

/** How many servers that never answer the fairness cases run (each under several webhook paths). */
const HANGING_SERVERS = 8;

/**
 * A receiver that accepts the connection and reads the request, then never answers (a hung endpoint): it counts the
 * requests, the blocks they carried and the most it held open at once. On a port the OS picks: a fixed port in the
 * ephemeral range was taken by another test file's outgoing connections in a loaded CI run (EADDRINUSE, and the
 * listen never called back: the case timed out).
 */
async function hangingServer() {
  const sockets = new Set<Socket>();
  const state = { url: "", requests: 0, blocks: [] as number[], mostOpen: 0, open: 0 };
  const server = createServer((req) => {
    state.requests++;
    state.open++;
    state.mostOpen = Math.max(state.mostOpen, state.open);
    req.on("close", () => state.open--);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => state.blocks.push(Number(JSON.parse(Buffer.concat(chunks).toString("utf8")).block)));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  opened.push({
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  });
  return state;
}

/** One delivery for `subscription` in the outbox, as a feeder inserts it (this process's, or another replica's). */
async function enqueue(webhooks: Webhooks, subscription: string, block: bigint): Promise<void> {
  await enqueueAll(webhooks, [subscription], block);
}

/** One delivery of `block` for each subscription, inserted in one feed (as the feeder does for a block). */
async function enqueueAll(webhooks: Webhooks, subscriptions: string[], block: bigint): Promise<void> {
  await webhooks.store.feed(async () => ({
    to: block,
    rows: subscriptions.map((subscription) => ({
      subscription,
      block,
      topic: "stats",
      type: "index.stats",
      payload: `{"block":"${block}"}`,
    })),
  }));
}

const blocksOf = (received: { body: string }[]) => received.map((r) => Number(JSON.parse(r.body).block));

describe("the webhook worker", () => {
  it("issues no outbox statement while no subscription exists, and delivers at once after a registration here", async () => {
    const db = await database();
    // The worker's poll and the gauges' read every 100 ms: 10 claims and 10 backlog reads a second if it polled idle.
    const { webhooks, statements } = await startWebhooks(db, {
      ...WEBHOOK_TIMING,
      pollMs: 100,
      subscribedCheckMs: 60_000,
      backlogMs: 100,
    });
    await sleep(1_000);
    expect(outbox(statements)).toEqual([]);
    expect(looks(statements)).toHaveLength(1);
    expect(webhooks.polling).toBe(false);

    const r = await receiver();
    const hook = (await webhooks.store.create(r.url, ["stats"], "whsec_AAAA", 10))!;
    webhooks.wake();
    expect(webhooks.polling).toBe(true);
    const at = Date.now();
    await enqueue(webhooks, hook.id, 7n);
    const [got] = await r.until((acked) => (acked.length > 0 ? acked : false), 5_000);
    // Found by the poll (100 ms), not by the next look at the subscriptions (a minute away).
    expect(Date.now() - at).toBeLessThan(2_000);
    expect(JSON.parse(got!.body)).toEqual({ block: "7" });
    expect(outbox(statements).length).toBeGreaterThan(0);
  });

  it("wakes for a subscription another replica registered at its next look, and idles again when it is deleted", async () => {
    const db = await database();
    const { webhooks, statements } = await startWebhooks(db, {
      ...WEBHOOK_TIMING,
      pollMs: 100,
      subscribedCheckMs: 300,
      backlogMs: 100,
    });
    // Another replica: the same tables, its own store; it tells this process nothing.
    const other = new Webhooks(pgliteSql(db), SCHEMA, SETTINGS, logger);
    await sleep(700);
    expect(outbox(statements)).toEqual([]);
    const idleLooks = looks(statements).length;
    expect(idleLooks).toBeGreaterThanOrEqual(2);
    expect(idleLooks).toBeLessThanOrEqual(4);

    const r = await receiver();
    const hook = (await other.store.create(r.url, ["stats"], "whsec_AAAA", 10))!;
    await enqueue(other, hook.id, 9n);
    await r.until((acked) => acked.length > 0, 5_000);
    expect(webhooks.polling).toBe(true);

    await other.store.remove(hook.id);
    await sleep(500);
    expect(webhooks.polling).toBe(false);
    const before = outbox(statements).length;
    await sleep(700);
    expect(outbox(statements).length).toBe(before);
  });
});

describe("the webhook worker's pool, on Postgres", () => {
  const schemas: string[] = [];
  const schemaNamed = (name: string) => {
    const schema = `wh_pool_${name}_${process.pid}_${Date.now()}`;
    schemas.push(schema);
    return schema;
  };
  afterAll(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await c.end();
  });

  it("a slow receiver holds only its own attempt: another webhook's deliveries arrive at once meanwhile", async () => {
    // 3 s to answer: inside the attempt's timeout (10 s here), so every one of its attempts succeeds, slowly.
    const slowDelayMs = 3_000;
    const webhooks = await startOnPostgres(schemaNamed("slow"), { ...SETTINGS, timeoutMs: 10_000 });
    const slow = await receiver();
    slow.delayMs = slowDelayMs;
    const fast = await receiver();
    const slowHook = (await webhooks.store.create(slow.url, ["stats"], "whsec_AAAA", 10))!;
    const fastHook = (await webhooks.store.create(fast.url, ["stats"], "whsec_AAAA", 10))!;
    webhooks.wake();

    // Three blocks at once: the slow receiver's first attempt is in flight for 3 s, the fast one's three go meanwhile.
    const at = Date.now();
    for (const block of [1n, 2n, 3n]) await enqueueAll(webhooks, [slowHook.id, fastHook.id], block);
    await fast.until((acked) => acked.length >= 3, 10_000);
    expect(Date.now() - at).toBeLessThan(slowDelayMs * 0.67);
    expect(slow.received.length).toBe(1);

    // A block made while the slow receiver is still answering reaches the fast one promptly.
    await sleep(200);
    const made = Date.now();
    await enqueueAll(webhooks, [slowHook.id, fastHook.id], 4n);
    await fast.until((acked) => acked.length >= 4, 10_000);
    expect(Date.now() - made).toBeLessThan(slowDelayMs * 0.67);

    // Each webhook, slow or not, in block order, each delivery once.
    await slow.until((acked) => acked.length >= 4, 4 * slowDelayMs + 5_000);
    expect(blocksOf(fast.acked())).toEqual([1, 2, 3, 4]);
    expect(blocksOf(slow.acked())).toEqual([1, 2, 3, 4]);
    // The last answer is recorded before it is sent: wait for the worker to record it too.
    for (let i = 0; i < 100 && (await webhooks.store.deliveries({ status: "pending", limit: 1 })).length > 0; i++)
      await sleep(100);
    const delivered = await webhooks.store.deliveries({ status: "delivered", limit: 20 });
    expect(delivered.map((d) => d.attempts)).toEqual(Array(8).fill(1));
  }, 30_000);

  it("40 receivers that never answer do not delay a healthy one: its deliveries arrive within 1 s (p99), in order, once", async () => {
    // Each attempt of a hanging receiver lasts the whole timeout; retried 0.5 s after each, for longer than the test.
    const settings = { ...SETTINGS, timeoutMs: 3_000, retryScheduleMs: Array(40).fill(500), maxSubscriptions: 100 };
    const webhooks = await startOnPostgres(schemaNamed("fair"), settings);
    const healthy = await receiver();
    // 40 webhooks on 8 servers (5 paths each) that accept the connection and read the request, then never answer.
    const hanging = await Promise.all(Array.from({ length: HANGING_SERVERS }, () => hangingServer()));
    const hooks: string[] = [];
    for (const h of hanging) {
      for (let i = 0; i < 5; i++) {
        hooks.push((await webhooks.store.create(`${h.url}/${i}`, ["stats"], "whsec_AAAA", 100))!.id);
      }
    }
    const healthyHook = (await webhooks.store.create(healthy.url, ["stats"], "whsec_AAAA", 100))!;
    // Fed as the feeder feeds (one transaction per block, the healthy webhook's row last), waking its worker; a
    // delivery's wait is from its commit to its arrival.
    const made = new Map<number, number>();
    const BLOCKS = 30;
    for (let block = 1; block <= BLOCKS; block++) {
      await enqueueAll(webhooks, [...hooks, healthyHook.id], BigInt(block));
      made.set(block, Date.now());
      webhooks.wake();
      await sleep(250);
    }
    await healthy.until((acked) => acked.length >= BLOCKS, 20_000);
    const byBlock = healthy.acked().map((r) => r.at - made.get(Number(JSON.parse(r.body).block))!);
    const waits = [...byBlock].sort((x, y) => x - y);
    const p99 = waits[Math.ceil(waits.length * 0.99) - 1]!;
    expect(p99, `waits (ms) by block: ${byBlock.join(" ")}`).toBeLessThan(1_000);
    expect(blocksOf(healthy.received)).toEqual(Array.from({ length: BLOCKS }, (_, i) => i + 1));
    expect(new Set(healthy.received.map((r) => r.id)).size).toBe(BLOCKS);
    // The hanging ones are still attempted, each one at a time (its oldest delivery, block 1), within the global cap.
    const attempts = hanging.map((h) => h.requests);
    expect(attempts.every((n) => n >= 5)).toBe(true);
    for (const h of hanging) expect(h.blocks.every((b) => b === 1)).toBe(true);
    expect(Math.max(...hanging.map((h) => h.mostOpen))).toBeLessThanOrEqual(5);
  }, 60_000);

  it("160 receivers that never answer (more than a fixed cap of 128 held) do not delay a healthy one either", async () => {
    // Their first attempts go slow after 250 ms and stay in flight to their timeout: with a fixed cap of 128 in all,
    // 160 of them held every slot and the healthy receiver waited for their timeouts (red team rthook 4).
    const settings = { ...SETTINGS, timeoutMs: 4_000, retryScheduleMs: Array(40).fill(500), maxSubscriptions: 200 };
    const webhooks = await startOnPostgres(schemaNamed("many"), settings);
    const healthy = await receiver();
    const hanging = await Promise.all(Array.from({ length: HANGING_SERVERS }, () => hangingServer()));
    const hooks: string[] = [];
    for (const h of hanging) {
      for (let i = 0; i < 20; i++) {
        hooks.push((await webhooks.store.create(`${h.url}/${i}`, ["stats"], "whsec_AAAA", 200))!.id);
      }
    }
    const healthyHook = (await webhooks.store.create(healthy.url, ["stats"], "whsec_AAAA", 200))!;
    const made = new Map<number, number>();
    const BLOCKS = 12;
    for (let block = 1; block <= BLOCKS; block++) {
      await enqueueAll(webhooks, [...hooks, healthyHook.id], BigInt(block));
      made.set(block, Date.now());
      webhooks.wake();
      await sleep(250);
    }
    await healthy.until((acked) => acked.length >= BLOCKS, 30_000);
    const byBlock = healthy.acked().map((r) => r.at - made.get(Number(JSON.parse(r.body).block))!);
    expect(Math.max(...byBlock), `waits (ms) by block: ${byBlock.join(" ")}`).toBeLessThan(1_500);
    expect(blocksOf(healthy.received)).toEqual(Array.from({ length: BLOCKS }, (_, i) => i + 1));
    // Every hanging webhook was attempted, one at a time.
    expect(hanging.reduce((n, h) => n + h.requests, 0)).toBeGreaterThanOrEqual(160);
    expect(Math.max(...hanging.map((h) => h.mostOpen))).toBeLessThanOrEqual(20);
  }, 60_000);

  it("two processes on one outbox: every webhook's blocks arrive in order, each once, slow receivers or not", async () => {
    const schema = schemaNamed("two");
    const [a, b] = [await startOnPostgres(schema), await startOnPostgres(schema)];
    const receivers = await Promise.all([0, 1, 2, 3].map(() => receiver()));
    receivers[0]!.delayMs = 700;
    receivers[1]!.delayMs = 300;
    const hooks = [];
    for (const r of receivers) hooks.push((await a.store.create(r.url, ["stats"], "whsec_AAAA", 10))!);
    a.wake();
    b.wake();
    for (let block = 1n; block <= 6n; block++) {
      await enqueueAll(
        block % 2n === 0n ? a : b,
        hooks.map((h) => h.id),
        block,
      );
      await sleep(150);
    }
    for (const r of receivers) await r.until((acked) => acked.length >= 6, 20_000);
    await sleep(500);
    for (const r of receivers) {
      expect(blocksOf(r.received)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(new Set(r.received.map((x) => x.id)).size).toBe(6);
    }
  }, 30_000);
});
