/**
 * The documents a client chooses (api/graphql/documentCache.ts, compileGate.ts), through the app in-process over an
 * index that answers at once: the cache is bounded by bytes (LRU), which bounds what distinct documents retain on the
 * heap, and keeps a document on its second sighting (one-off documents retain nothing); a new document waits for a compile permit and past the queue is answered 503 COMPILE_QUEUE_FULL with
 * Retry-After in GraphQL's envelope, while a cached document never waits.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { CancelledError, HANG_UP } from "../../api/chain/rpc";
import { loadConfig } from "../../api/config";
import { CompileQueueFull, compileGate } from "../../api/graphql/compileGate";
import { ByteBoundedCache, documentCost } from "../../api/graphql/documentCache";
import { CancelSource } from "../../api/http/cancellation";
import { silentLogger } from "../../api/observability/logger";
import type { LockIndex } from "../../api/read/contract";
import { heapAfterCollection } from "../support/heap";

const heap = heapAfterCollection;

const head = { block: 1000n, time: 1_800_000_000n, finalized: 990n };
const at = <T>(value: T) => ({ head, block: head.block, time: head.time, inRange: true, value });

function appWith(env: Record<string, string>, readMs = 0) {
  const later = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), readMs));
  const index = {
    probe: async () => ({ head, eventTime: null }),
    events: () => later(at([])),
    locksOf: () => later(at([])),
    lock: () => later(at(null)),
  } as unknown as LockIndex;
  return createApp({
    config: { ...loadConfig({ NETWORK: "base", ...env }), rateLimit: { max: 1e9, windowSec: 60 } },
    rpc: null,
    index: { atBlock: index },
    logger: silentLogger,
  });
}

async function post(app: ReturnType<typeof appWith>, query: string) {
  const res = await app.request("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
}

/**
 * `post`, as a well-behaved client sends a new document: told COMPILE_QUEUE_FULL (the gate resting after a slow
 * compile, as a busy machine's first ones are), it waits the Retry-After it was given and asks again.
 */
async function postCompiled(app: ReturnType<typeof appWith>, query: string) {
  for (let attempt = 1; ; attempt++) {
    const answer = await post(app, query);
    if (answer.status !== 503 || answer.body.errors?.[0]?.extensions?.code !== "COMPILE_QUEUE_FULL" || attempt === 5) {
      return answer;
    }
    await new Promise((r) => setTimeout(r, 1000 * Number(answer.headers.get("retry-after"))));
  }
}

/** 30 aliased lists: near the alias and token limits, ~670 kB retained once compiled (bench/graphql-document-bytes). */
const atLimits = (i: number) =>
  `{ ${Array.from(
    { length: 30 },
    (_, a) => `a${a}: lockEvents(where: { tokenId: "${i * 30 + a}" }, limit: 1) { items { kind tokenId owner } }`,
  ).join(" ")} }`;

async function cachedDocuments(app: ReturnType<typeof appWith>): Promise<number> {
  const text = await (await app.request("/api/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith('api_cache_entries{cache="graphql_documents"}'));
  return Number(line?.split(" ").at(-1));
}

describe("ByteBoundedCache", () => {
  it("charges each entry its cost and drops the least recently used past its bytes", () => {
    const cache = new ByteBoundedCache<number>(3 * documentCost("x".repeat(100)));
    for (const k of ["a", "b", "c"]) cache.set(k.repeat(100), 1);
    cache.get("a".repeat(100)); // a is now the most recent: b goes first
    cache.set("d".repeat(100), 1);
    expect([cache.has("a".repeat(100)), cache.has("b".repeat(100)), cache.has("c".repeat(100))]).toEqual([
      true,
      false,
      true,
    ]);
    expect(cache.bytes).toBeLessThanOrEqual(cache.maxBytes);
    cache.set("e".repeat(10_000), 1); // larger than the whole cache: not kept, nothing else dropped for it
    expect(cache.size).toBe(3);
    expect(cache.evictions).toBe(1);
  });

  it("with a doorkeeper: a key is kept on its second set, not its first; forgotten sightings start over", () => {
    let told = 0;
    const cache = new ByteBoundedCache<number>(10 * documentCost("x".repeat(100)), documentCost, {
      entries: 2,
      onDecline: () => told++,
    });
    cache.set("a".repeat(100), 1);
    expect(cache.has("a".repeat(100))).toBe(false);
    cache.set("a".repeat(100), 2);
    expect(cache.get("a".repeat(100))).toBe(2);
    cache.set("a".repeat(100), 3); // kept already: replaced at once
    expect(cache.get("a".repeat(100))).toBe(3);
    // Two sightings remembered: b's is pushed out by c's and d's, so b's second set is a first again.
    for (const k of ["b", "c", "d", "b"]) cache.set(k.repeat(100), 1);
    expect(cache.has("b".repeat(100))).toBe(false);
    cache.set("b".repeat(100), 1);
    expect([cache.has("b".repeat(100)), cache.size, cache.declined, told]).toEqual([true, 2, 5, 5]);
  });
});

describe("the document cache through /graphql", () => {
  it("a flood of one-off documents is compiled and let go: nothing cached, nothing kept on the heap", async () => {
    const app = appWith({});
    for (let i = 0; i < 5; i++) expect((await postCompiled(app, atLimits(2e6 + i))).status).toBe(200); // warm-up
    const before = heap();
    for (let i = 0; i < 60; i++) {
      const { status, body } = await postCompiled(app, atLimits(3e6 + i));
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
    }
    await new Promise((r) => setTimeout(r, 2500)); // each request's 2 s deadline timer holds its context until then
    expect(await cachedDocuments(app)).toBe(0);
    const metrics = await (await app.request("/api/metrics")).text();
    expect(metrics).toMatch(/^api_graphql_documents_declined_total 65$/m); // the warm-up's 5 and the flood's 60
    // ~48 MB if each were kept (the byte bound would keep ~45 MB of them).
    expect(heap() - before).toBeLessThan(8 * 1024 * 1024);
    // Asked for a second time, a document is kept: the third asking costs no compile.
    expect((await postCompiled(app, atLimits(3e6))).status).toBe(200);
    expect(await cachedDocuments(app)).toBe(1);
  }, 120_000);

  it("keeps distinct documents within its byte bound, on the heap too", async () => {
    const app = appWith({ GRAPHQL_DOCUMENT_CACHE_MB: "4" });
    for (let i = 0; i < 5; i++) expect((await postCompiled(app, atLimits(1e6 + i))).status).toBe(200); // warm-up
    const before = heap();
    const N = 120; // ~80 MB if each were kept
    for (let i = 0; i < N; i++) {
      // Twice each: a document is kept on its second sighting.
      for (const _ of [1, 2]) {
        const { status, body } = await postCompiled(app, atLimits(i));
        expect(status).toBe(200);
        expect(body.errors).toBeUndefined();
      }
    }
    await new Promise((r) => setTimeout(r, 2500)); // each request's 2 s deadline timer holds its context until then
    const grown = heap() - before;
    const kept = await cachedDocuments(app);
    // 4 MB less a tenth for failed parses, at ~0.8 MB estimated each: a handful, not 120.
    expect(kept).toBeGreaterThan(0);
    expect(kept * documentCost(atLimits(0))).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(grown).toBeLessThan(16 * 1024 * 1024);
    // The most recent documents are the ones kept: asking again for the last costs no compile.
    const t0 = performance.now();
    expect((await postCompiled(app, atLimits(N - 1))).status).toBe(200);
    const cached = performance.now() - t0;
    const t1 = performance.now();
    expect((await postCompiled(app, atLimits(0))).status).toBe(200); // evicted long ago: compiled again
    const fresh = performance.now() - t1;
    expect(fresh).toBeGreaterThan(cached);
  }, 120_000);

  it("a new document past the compile queue is 503 COMPILE_QUEUE_FULL with Retry-After; a cached one runs", async () => {
    // One compile at a time and none waiting; each read takes 200 ms, so a permit is held until the first read.
    const app = appWith({ GRAPHQL_COMPILES_IN_FLIGHT: "1", GRAPHQL_COMPILE_QUEUE: "0" }, 200);
    const cachedDoc = `{ lockEvents(where: { tokenId: "1" }, limit: 1) { items { kind } } }`;
    expect((await postCompiled(app, cachedDoc)).status).toBe(200);
    expect((await postCompiled(app, cachedDoc)).status).toBe(200); // kept on its second sighting
    // Requests in one burst: the first new document takes the permit through its parse, validation and compile.
    const answers = await Promise.all([
      post(app, atLimits(1)),
      post(app, atLimits(2)),
      post(app, atLimits(3)),
      post(app, cachedDoc),
    ]);
    const statuses = answers.map((a) => a.status);
    expect(statuses[0]).toBe(200);
    expect(statuses[3]).toBe(200);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.body.errors[0].extensions.code).toBe("COMPILE_QUEUE_FULL");
    }
    const metrics = await (await app.request("/api/metrics")).text();
    expect(metrics).toMatch(new RegExp(`api_graphql_compiles_refused_total ${refused.length}\\b`));
  });
});

describe("compileGate", () => {
  it("queues in arrival order up to its queue, for at most its wait", async () => {
    const gate = compileGate({ inFlight: 1, queue: 1, waitMs: 100, share: 1 });
    const first = await gate.enter();
    const second = gate.enter();
    await expect(gate.enter()).rejects.toBeInstanceOf(CompileQueueFull); // the queue holds one
    expect(gate.waiting()).toBe(1);
    const t0 = performance.now();
    await expect(second).rejects.toBeInstanceOf(CompileQueueFull); // its 100 ms wait ran out
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    expect(gate.waiting()).toBe(0);
    const third = gate.enter();
    first();
    first(); // twice is harmless
    const release = await third;
    expect(gate.inFlight()).toBe(1);
    release();
    expect(gate.inFlight()).toBe(0);
  });

  it("refuses at once, with the seconds until the next permit, while the rest owed is longer than the wait", async () => {
    const gate = compileGate({ inFlight: 1, queue: 4, waitMs: 1_000, share: 0.01 });
    const first = await gate.enter();
    await new Promise((r) => setTimeout(r, 30)); // held ≥ 30 ms: ≥ 2.97 s of rest owed
    first();
    const t0 = performance.now();
    const refused = await gate.enter().catch((error: unknown) => error);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(refused).toBeInstanceOf(CompileQueueFull);
    expect((refused as CompileQueueFull).retryAfterSec).toBeGreaterThanOrEqual(3);
    expect(gate.waiting()).toBe(0);
  });

  it("a waiter whose request is cancelled (hang-up) rejects with a CancelledError, an Error the app's handler takes", async () => {
    // The signal's reason is a string ("hang-up", "deadline"): rejected with it, Hono rethrew it past onError and
    // @hono/node-server answered its own bare 500.
    const gate = compileGate({ inFlight: 1, queue: 4, waitMs: 1_000, share: 1 });
    const first = await gate.enter();
    const signal = new CancelSource();
    const waiting = gate.enter(signal).catch((error: unknown) => error);
    signal.abort(HANG_UP);
    const error = await waiting;
    expect(error).toBeInstanceOf(CancelledError);
    expect(gate.waiting()).toBe(0);
    const gone = new CancelSource();
    gone.abort("deadline");
    expect(await gate.enter(gone).catch((e: unknown) => e)).toBeInstanceOf(CancelledError);
    first();
  });

  it("rests after each permit so compilations take at most their share of the time", async () => {
    const gate = compileGate({ inFlight: 1, queue: 4, waitMs: 1_000, share: 0.25 });
    const first = await gate.enter();
    await new Promise((r) => setTimeout(r, 60)); // held 60 ms: the next is owed 180 ms of rest
    first();
    const t0 = performance.now();
    (await gate.enter())();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(170);
  });
});
