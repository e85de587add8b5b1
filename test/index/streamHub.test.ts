/**
 * One stream's back-pressure, on the web stream @hono/node-server pipes to the response: a client that reads gets
 * every byte; one that leaves STREAM_MAX_QUEUED_BYTES unread is closed and counted `unread`, and its memory let go.
 */
import { describe, expect, it } from "vitest";
import { AnswerMemo, EventStream, STREAM_MAX_QUEUED_BYTES, StreamHub } from "../../api/index/streamHub";
import { parseTopics } from "../../api/live/topics";
import { createStreamMetrics } from "../../api/observability/streamMetrics";
import type { IndexRuntime } from "../../api/read/runtime";

const event = "x".repeat(16 * 1024);

describe("EventStream", () => {
  it("a reader that keeps up gets every event; none is dropped", async () => {
    const metrics = createStreamMetrics();
    const s = new EventStream([], "127.0.0.1", metrics);
    const reader = s.body.getReader();
    let bytes = 0;
    for (let i = 0; i < 200; i++) {
      s.event(BigInt(i), "stats", event);
      const { value } = await reader.read();
      bytes += value?.byteLength ?? 0;
    }
    expect(s.closed).toBe(false);
    expect(bytes).toBeGreaterThan(200 * event.length);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(0);
    expect(metrics.events.get({ event: "stats" })).toBe(200);
  });

  it("a stream left unread past its cap is closed and counted; later writes are ignored", async () => {
    const metrics = createStreamMetrics();
    let closed = 0;
    const s = new EventStream([], "127.0.0.1", metrics);
    s.onClose = () => closed++;
    const writes = Math.ceil((STREAM_MAX_QUEUED_BYTES + 128 * 1024) / event.length) + 2;
    for (let i = 0; i < writes; i++) s.event(BigInt(i), "stats", event);
    expect(s.closed).toBe(true);
    expect(closed).toBe(1);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(1);
    s.event(999n, "stats", event);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(1);
    // The queue is discarded (the stream errors, so the server aborts the response instead of flushing a megabyte).
    await expect(s.body.getReader().read()).rejects.toThrow("unread");
  });
});

describe("AnswerMemo: the hub's shared answers, bounded by bytes", () => {
  const text = (n: number, c = "x") => c.repeat(n);

  it("one fetch per key however many ask; oldest out once the bytes pass the bound", async () => {
    const memo = new AnswerMemo(1000);
    let fetched = 0;
    const fetch = (n: number) => () => {
      fetched++;
      return Promise.resolve(text(n));
    };
    const [a, b] = await Promise.all([memo.get("a@1", fetch(400)), memo.get("a@1", fetch(400))]);
    expect(a).toBe(b);
    expect(fetched).toBe(1);
    await memo.get("b@1", fetch(400));
    expect(memo.bytes).toBe(800);
    await memo.get("c@1", fetch(400));
    // 1200 > 1000: the oldest (a) went; b and c stay.
    expect([memo.size, memo.bytes]).toEqual([2, 800]);
    await memo.get("a@1", fetch(400));
    expect(fetched).toBe(4);
    expect([memo.size, memo.bytes]).toEqual([2, 800]);
  });

  it("a single answer above the bound is kept alone; a failed fetch is not kept", async () => {
    const memo = new AnswerMemo(1000);
    await memo.get("small", () => Promise.resolve(text(10)));
    await memo.get("huge", () => Promise.resolve(text(5000)));
    expect([memo.size, memo.bytes]).toEqual([1, 5000]);
    await expect(memo.get("bad", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    await Promise.resolve();
    expect(memo.size).toBe(1);
    // A null answer (a lock not minted yet) is kept and costs nothing; the huge one, no longer the newest, goes.
    expect(await memo.get("none", () => Promise.resolve(null))).toBeNull();
    expect([memo.size, memo.bytes]).toEqual([1, 0]);
  });

  it("10,000 answers of 100 kB stay under the bound: 32 MiB by default", async () => {
    const memo = new AnswerMemo();
    const page = text(100 * 1024);
    for (let i = 0; i < 10_000; i++) await memo.get(`board@${i}`, () => Promise.resolve(page));
    expect(memo.bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(memo.size).toBe(Math.floor((32 * 1024 * 1024) / page.length));
  });
});

describe("StreamHub: a catch-up", () => {
  /** A hub over an index whose head is 1,000 with a stats change in every block; each answer takes 2 ms to read. */
  function hubOf(reads: { n: number }) {
    const changes = Array.from({ length: 1_000 }, (_, i) => ({
      block: BigInt(i + 1),
      tokenIds: [],
      accounts: [],
      kind: null,
      lock: true,
      exit: null,
    }));
    const rt = {
      signal: { subscribe: () => () => {}, head: null, listening: true },
      index: {
        probe: async () => ({ head: { block: 1_000n, time: 1n } }),
        changes: async (from: bigint, to: bigint) => ({
          value: changes.filter((c) => c.block >= from && c.block <= to),
          head: { block: 1_000n, time: 1n },
        }),
      },
      reorgs: { covering: () => null },
      warn: () => {},
    } as unknown as IndexRuntime;
    const fetchAnswer = async (path: string) => {
      reads.n++;
      await new Promise((r) => setTimeout(r, 2));
      return JSON.stringify({ path });
    };
    return new StreamHub(rt, fetchAnswer, { max: 10, perIp: 10, heartbeatMs: 60_000, replayBlocks: 10_000 });
  }

  it("stops reading when its client hangs up", async () => {
    const reads = { n: 0 };
    const hub = hubOf(reads);
    const [stats] = parseTopics("http://x/stream?stats");
    const stream = hub.open([stats!], "127.0.0.1", 0n);
    const reader = stream.body.getReader();
    while (reads.n < 5) await reader.read();
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 50));
    const after = reads.n;
    await new Promise((r) => setTimeout(r, 300));
    expect(reads.n - after).toBeLessThanOrEqual(1);
    expect(hub.size).toBe(0);
  });
});
