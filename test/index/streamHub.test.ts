/**
 * One stream's back-pressure, on the web stream @hono/node-server pipes to the response: a client that reads gets
 * every byte; one that leaves STREAM_MAX_QUEUED_BYTES unread is closed and counted `unread`, and its memory let go.
 * The hub's shared answers (AnswerMemo); a catch-up that stops when its client hangs up; and a block's many topics
 * read within the compute gate's past lane (one slot, 8 waiting), so none of the 28 duration boards comes back busy.
 */
import { describe, expect, it } from "vitest";
import { AnswerMemo, EventStream, STREAM_MAX_QUEUED_BYTES, StreamHub } from "../../api/index/streamHub";
import { parseTopics } from "../../api/live/topics";
import { createStreamMetrics } from "../../api/observability/streamMetrics";
import { ComputeGate } from "../../api/read/computeGate";
import { BOARD_WINDOWS, DURATION_BOARDS } from "../../api/read/contract";
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

describe("StreamHub: a block's answers are sent whole or not at all", () => {
  /** Blocks 1…`head` each change a lock (the stats and the ve board follow it). */
  const changesTo = (head: number) =>
    Array.from({ length: head }, (_, i) => ({
      block: BigInt(i + 1),
      tokenIds: [],
      accounts: [],
      kind: null,
      lock: true,
      exit: null,
    }));

  /** A hub over an index at `state.head`, whose signal the test tells; `fails(path)` makes an answer's read fail. */
  function hubOf(
    state: { head: number },
    fails: (path: string) => boolean,
    changesFail: (from: bigint) => boolean = () => false,
  ) {
    const listeners: ((block: bigint) => void)[] = [];
    const rt = {
      signal: {
        subscribe: (l: (block: bigint) => void) => {
          listeners.push(l);
          return () => {};
        },
        head: null,
        listening: true,
      },
      index: {
        probe: async () => ({ head: { block: BigInt(state.head), time: 1n } }),
        changes: async (from: bigint, to: bigint) => {
          if (changesFail(from)) throw new Error("canceling statement due to statement timeout");
          return {
            value: changesTo(state.head).filter((c) => c.block >= from && c.block <= to),
            head: { block: BigInt(state.head), time: 1n },
          };
        },
      },
      reorgs: { covering: () => null },
      warn: () => {},
    } as unknown as IndexRuntime;
    const fetchAnswer = async (path: string) => {
      if (fails(path)) throw new Error("timeout exceeded when trying to connect");
      return JSON.stringify({ path });
    };
    const hub = new StreamHub(rt, fetchAnswer, { max: 10, perIp: 10, heartbeatMs: 60_000, replayBlocks: 10_000 });
    const tell = (block: number) => {
      state.head = block;
      for (const l of listeners) l(BigInt(block));
    };
    return { hub, tell };
  }

  /** The events a stream wrote (id and name) until it ends or `until` holds. */
  async function eventsOf(stream: EventStream, until: (events: string[]) => boolean = () => false) {
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const events = () =>
      text
        .split("\n\n")
        .filter((e) => e.includes("event:"))
        .map((e) => {
          const id = /^id: (.*)$/m.exec(e)?.[1];
          const name = /^event: (.*)$/m.exec(e)?.[1];
          return `${id} ${name}`;
        });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { events: events(), ended: true };
      text += decoder.decode(value);
      if (until(events())) {
        reader.releaseLock();
        return { events: events(), ended: false };
      }
    }
  }

  const topics = () => parseTopics("http://x/stream?stats&board=ve");
  const both = (block: number) => [`${block} stats`, `${block} board`];

  it("an answer that fails once is read again: every block's events are sent", async () => {
    let failed = 0;
    const { hub } = hubOf({ head: 3 }, (path) => path === "/stats?block=2" && failed++ === 0);
    const stream = hub.open(topics(), "127.0.0.1", 0n);
    const { events } = await eventsOf(stream, (e) => e.length >= 6);
    expect(failed).toBe(2);
    expect(events).toEqual([...both(1), ...both(2), ...both(3)]);
    stream.close();
  });

  it("a catch-up whose block's answer keeps failing sends nothing of that block and ends; the resume re-reads it", async () => {
    let down = true;
    const state = { head: 3 };
    const { hub } = hubOf(state, (path) => down && path === "/stats?block=2");
    const stream = hub.open(topics(), "127.0.0.1", 0n);
    // Block 2's board answer was read, but not sent without its stats: the client's last id is 1.
    expect(await eventsOf(stream)).toEqual({ events: both(1), ended: true });
    down = false;
    const resumed = hub.open(topics(), "127.0.0.1", 1n);
    expect((await eventsOf(resumed, (e) => e.length >= 4)).events).toEqual([...both(2), ...both(3)]);
    resumed.close();
  });

  it("a live head whose answer keeps failing sends nothing of that block and ends the stream", async () => {
    let down = false;
    const { hub, tell } = hubOf({ head: 3 }, (path) => down && path === "/stats?block=4");
    const stream = hub.open(topics(), "127.0.0.1", null);
    const reader = eventsOf(stream, (e) => e.length >= 2);
    expect((await reader).events).toEqual(both(3));
    down = true;
    tell(4);
    const rest = await eventsOf(stream);
    expect(rest).toEqual({ events: [], ended: true });
    expect(hub.size).toBe(0);
  });

  it("a catch-up's read of the changed blocks that fails once is read again: every block's events are sent", async () => {
    let failed = 0;
    const { hub } = hubOf(
      { head: 3 },
      () => false,
      () => failed++ === 0,
    );
    const stream = hub.open(topics(), "127.0.0.1", 0n);
    const { events } = await eventsOf(stream, (e) => e.length >= 6);
    expect(failed).toBe(2);
    expect(events).toEqual([...both(1), ...both(2), ...both(3)]);
    stream.close();
  });

  it("a live head whose read of the changed blocks keeps failing ends the stream: its blocks are not passed over", async () => {
    let down = false;
    const state = { head: 3 };
    const { hub, tell } = hubOf(
      state,
      () => false,
      () => down,
    );
    const stream = hub.open(topics(), "127.0.0.1", null);
    expect((await eventsOf(stream, (e) => e.length >= 2)).events).toEqual(both(3));
    down = true;
    tell(4);
    expect(await eventsOf(stream)).toEqual({ events: [], ended: true });
    // The client resumes from block 3, and its catch-up reads block 4's changes again.
    down = false;
    tell(5);
    const resumed = hub.open(topics(), "127.0.0.1", 3n);
    expect((await eventsOf(resumed, (e) => e.length >= 4)).events).toEqual([...both(4), ...both(5)]);
    resumed.close();
  });
});

describe("StreamHub: a block's many topics under the compute gate", () => {
  it("a catch-up following the 28 duration boards gets every event: none comes back busy", async () => {
    const boards = DURATION_BOARDS.flatMap((b) => Object.keys(BOARD_WINDOWS).map((w) => `board=${b}:${w}`));
    const topics = parseTopics(`http://x/stream?${boards.join("&")}`);
    expect(topics).toHaveLength(28);
    const head = 10n;
    // Every board changes in every block (an entry leaving its window names it).
    const changes = Array.from({ length: Number(head) }, (_, i) =>
      Object.keys(BOARD_WINDOWS).flatMap((window) =>
        DURATION_BOARDS.map((board) => ({
          block: BigInt(i + 1),
          tokenIds: [],
          accounts: [],
          kind: null,
          lock: false,
          exit: { board, window },
        })),
      ),
    ).flat();
    const rt = {
      signal: { subscribe: () => () => {}, head: null, listening: true },
      clock: { cached: () => 1n },
      index: {
        probe: async () => ({ head: { block: head, time: 1n } }),
        changes: async (from: bigint, to: bigint) => ({
          value: changes.filter((c) => c.block >= from && c.block <= to),
          head: { block: head, time: 1n },
        }),
      },
      reorgs: { covering: () => null },
      warn: () => {},
    } as unknown as IndexRuntime;
    // A past block's ranking, as the runtime computes it: in the past lane of the default gate (INDEX_COMPUTE_QUEUE 8).
    const lane = { slots: 1, queue: 8, waitMs: 2_000 };
    const gate = new ComputeGate({ head: lane, past: lane });
    const fetchAnswer = (path: string) =>
      gate.run("past", async () => {
        await new Promise((r) => setTimeout(r, 2));
        return JSON.stringify({ path });
      });
    const hub = new StreamHub(rt, fetchAnswer, { max: 10, perIp: 10, heartbeatMs: 60_000, replayBlocks: 10_000 });
    const stream = hub.open(topics, "127.0.0.1", 0n);
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const events = () => text.match(/^event: board$/gm)?.length ?? 0;
    // Read until the catch-up is over and nothing more comes for 200 ms (a read not answered yet is kept for the next).
    let pending = reader.read();
    for (;;) {
      const quiet = new Promise<null>((r) => setTimeout(() => r(null), 200));
      const read = await Promise.race([pending, quiet]);
      if (read === null) {
        if (!stream.catchingUp) break;
        continue;
      }
      if (read.done) break;
      text += decoder.decode(read.value, { stream: true });
      pending = reader.read();
    }
    expect(events()).toBe(28 * Number(head));
    await reader.cancel();
  });
});
