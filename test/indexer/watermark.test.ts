/**
 * The index's watermark poller (api/read/watermark.ts) on its own: what it reports, when it stops reporting,
 * and that a slow database gets one read at a time. The read function stands in for LockStore.indexMark (the
 * real one runs against Ponder's index in test/mcp/v1/stateLag.test.ts); timers are real, in milliseconds.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { IndexMark } from "../../api/read/contract";
import { IndexWatermark } from "../../api/read/watermark";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mark = (block: bigint): IndexMark => ({ maxTokenId: block * 10n, indexedBlock: block });

const started: IndexWatermark[] = [];
function watermark(
  read: () => Promise<IndexMark>,
  o: {
    pollMs: number;
    maxAgeMs: number;
    timeoutMs: number;
    stalledMs?: number;
    onFailure?: (cause: unknown) => void;
  },
) {
  const w = new IndexWatermark(read, o).start();
  started.push(w);
  return w;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop()));
});

async function until(check: () => boolean, ms = 2_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(2);
  }
}

describe("IndexWatermark", () => {
  it("reports nothing before its first poll answers, then the newest mark, following the index", async () => {
    let block = 5n;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const w = watermark(
      async () => {
        await gate;
        return mark(block);
      },
      { pollMs: 5, maxAgeMs: 1_000, timeoutMs: 500 },
    );
    await sleep(20);
    expect(w.fresh()).toBeUndefined();
    release();
    await until(() => w.fresh() !== undefined);
    expect(w.fresh()).toEqual(mark(5n));
    block = 6n;
    await until(() => w.fresh()?.indexedBlock === 6n);
    expect(w.fresh()).toEqual(mark(6n));
  });

  it("a mark ages out when the polls fail, counted from when its read was sent, and comes back with the index", async () => {
    let failing = false;
    const w = watermark(async () => (failing ? Promise.reject(new Error("connection refused")) : mark(7n)), {
      pollMs: 5,
      maxAgeMs: 100,
      timeoutMs: 50,
    });
    await until(() => w.fresh() !== undefined);
    failing = true;
    const since = performance.now();
    await until(() => w.fresh() === undefined, 1_000);
    expect(performance.now() - since).toBeLessThanOrEqual(100 + 250); // the bound, plus a loaded machine's timer slack
    failing = false;
    await until(() => w.fresh() !== undefined);
    expect(w.fresh()).toEqual(mark(7n));
  });

  it("a read slower than the mark may age never makes a mark fresh: its age starts when it was sent", async () => {
    const w = watermark(
      async () => {
        await sleep(60);
        return mark(8n);
      },
      { pollMs: 5, maxAgeMs: 40, timeoutMs: 200 },
    );
    for (let i = 0; i < 30; i++) {
      expect(w.fresh()).toBeUndefined();
      await sleep(5);
    }
  });

  it("a database that hangs gets one read at a time, and stop() returns within the poll's bound", async () => {
    let reads = 0;
    const w = watermark(
      () => {
        reads++;
        return new Promise<IndexMark>(() => {}); // never answers
      },
      { pollMs: 5, maxAgeMs: 100, timeoutMs: 20 },
    );
    await sleep(150);
    expect(reads).toBe(1);
    expect(w.fresh()).toBeUndefined();
    const t = performance.now();
    await w.stop();
    expect(performance.now() - t).toBeLessThan(500);
  });

  it("a read that throws synchronously is a failed poll, not a crash", async () => {
    let polls = 0;
    const w = watermark(
      () => {
        polls++;
        throw new Error("no connection");
      },
      { pollMs: 5, maxAgeMs: 100, timeoutMs: 20 },
    );
    await until(() => polls >= 3);
    expect(w.fresh()).toBeUndefined();
  });

  it("tells why a poll failed: the read's error, or no answer in time — once per failed poll", async () => {
    const causes: string[] = [];
    const onFailure = (cause: unknown) => causes.push((cause as Error).message);
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    watermark(() => Promise.reject(refused), { pollMs: 5, maxAgeMs: 50, timeoutMs: 20, onFailure });
    await until(() => causes.length >= 3);
    expect(new Set(causes)).toEqual(new Set([refused.message]));
    const silent: string[] = [];
    watermark(() => new Promise<IndexMark>(() => {}), {
      pollMs: 5,
      maxAgeMs: 50,
      timeoutMs: 20,
      stalledMs: 40,
      onFailure: (cause) => silent.push((cause as Error).message),
    });
    await until(() => silent.length >= 2);
    expect(new Set(silent)).toEqual(new Set(["no answer within 40 ms"]));
  });

  it("a first read slower than a poll's wait (a connection opened on a loaded machine) is not told as a failure", async () => {
    const causes: unknown[] = [];
    let reads = 0;
    const w = watermark(
      async () => {
        // The first read answers after three polls' waits, well inside the stall bound.
        if (reads++ === 0) await sleep(80);
        return mark(7n);
      },
      { pollMs: 5, maxAgeMs: 500, timeoutMs: 20, stalledMs: 300, onFailure: (cause) => causes.push(cause) },
    );
    await until(() => w.fresh() !== undefined);
    await sleep(30);
    expect(causes).toEqual([]);
  });
});
