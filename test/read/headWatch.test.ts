/**
 * api/read/headWatch.ts: many requests waiting for a block share one source of news — one poll per interval however
 * many wait, none while nobody waits — and each leaves on its block, its time, its cancellation, or at once when the
 * waiters are at their bound. The source here is a head the test moves (the served behaviour, over the indexer and
 * the node, is test/index/minBlock.test.ts's).
 */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { CancelSource } from "../../api/http/cancellation";
import { waitForHead } from "../../api/read/atLeast";
import { HeadWatch, type WaitOutcome } from "../../api/read/headWatch";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function source(start: bigint) {
  const s = { head: start, reads: 0 };
  const read = async () => {
    s.reads++;
    return s.head;
  };
  return { s, read };
}

describe("HeadWatch", () => {
  it("one poll per interval for 200 waiters as for 1, and none once they are gone", async () => {
    const runs: Record<number, number> = {};
    for (const n of [1, 200]) {
      const { s, read } = source(10n);
      const watch = new HeadWatch({ read, pollMs: 20 });
      const waits = Array.from({ length: n }, () => watch.wait(11n, 5_000));
      await sleep(200);
      s.head = 11n;
      expect(new Set(await Promise.all(waits))).toEqual(new Set(["reached"]));
      runs[n] = s.reads;
      const after = s.reads;
      await sleep(100);
      expect(s.reads, "no poll without a waiter").toBe(after);
      expect(watch.waiting).toBe(0);
    }
    console.log(`polls in ~200 ms at a 20 ms interval: 1 waiter ${runs[1]}, 200 waiters ${runs[200]}`);
    // The same loop either way (a loaded machine may fit a poll or two less in either run).
    expect(runs[200]!).toBeLessThanOrEqual(runs[1]! + 2);
    expect(runs[200]!).toBeGreaterThan(1);
  });

  it("news from elsewhere (the watermark, an answer's head) releases waiters without any poll", async () => {
    const watch = new HeadWatch();
    const a = watch.wait(5n, 5_000);
    const b = watch.wait(7n, 5_000);
    watch.saw(5n);
    expect(await a).toBe("reached");
    expect(watch.waiting).toBe(1);
    watch.saw(4n); // a lower head (a reorg) releases nobody
    expect(watch.waiting).toBe(1);
    expect(watch.latest).toBe(4n);
    watch.saw(9n);
    expect(await b).toBe("reached");
    expect(watch.latest).toBe(9n);
    expect(await watch.wait(8n, 0)).toBe("reached"); // already there: no wait at all
  });

  it("follows the index's signal only while someone waits: a notified head releases its waiters before any poll", async () => {
    const { s, read } = source(10n);
    const listeners = new Set<(head: bigint) => void>();
    let subscribed = 0;
    const watch = new HeadWatch({
      read,
      pollMs: 60_000,
      follow: (listener) => {
        subscribed++;
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    });
    expect(listeners.size).toBe(0);
    const started = performance.now();
    const waits = [watch.wait(11n, 5_000), watch.wait(12n, 5_000)];
    await sleep(20);
    expect(listeners.size).toBe(1);
    s.head = 12n;
    for (const l of [...listeners]) l(11n);
    expect(await waits[0]).toBe("reached");
    expect(listeners.size).toBe(1);
    for (const l of [...listeners]) l(12n);
    expect(await waits[1]).toBe("reached");
    // Far sooner than the poll's interval, and the signal let go once nobody waits.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(listeners.size).toBe(0);
    expect(subscribed).toBe(1);
  });

  it("a commit heard while nobody waited releases a waiter for its block at once; one above it waits", async () => {
    const { s, read } = source(10n);
    let heard: bigint | undefined = 12n;
    let subscribed = 0;
    const watch = new HeadWatch({
      read,
      pollMs: 60_000,
      follow: () => {
        subscribed++;
        return () => {};
      },
      heard: () => heard,
    });
    watch.saw(10n);
    const started = performance.now();
    expect(await watch.wait(12n, 5_000)).toBe("reached");
    expect(performance.now() - started, "no poll's interval, no next commit").toBeLessThan(1_000);
    expect(s.reads + subscribed, "neither polled nor followed").toBe(0);
    expect(await watch.wait(13n, 60), "above the head heard: waits").toBe("timeout");
    // Not fresh any more (the signal down, or the index found below it): only the watch's own news counts.
    heard = undefined;
    expect(await watch.wait(12n, 60)).toBe("timeout");
  });

  it("waitForHead: a commit notified while the node's head is asked is not overwritten by the head read before", async () => {
    const watch = new HeadWatch({ pollMs: 60_000 });
    watch.saw(9n);
    const app = new Hono();
    app.get("/", async (c) => {
      await waitForHead({
        watch,
        c,
        // More than 5 blocks beyond the index's head: the node's head is asked.
        target: { minBlock: 15n, waitMs: 300, block: 15n, param: "minBlock" },
        head: 9n,
        // The commit of block 15 is heard while the node answers.
        chainHead: async () => {
          watch.saw(15n);
          return 15n;
        },
        of: "index",
      });
      return c.text("reached");
    });
    const started = performance.now();
    const res = await app.request("/");
    expect(await res.text()).toBe("reached");
    expect(performance.now() - started, "released at once, not at its waitMs").toBeLessThan(250);
  });

  it("waitForHead: a target within 5 blocks of the index's head waits at once, the node's head not asked", async () => {
    const watch = new HeadWatch({ pollMs: 60_000 });
    let asked = 0;
    const app = new Hono();
    app.get("/:target", async (c) => {
      const block = BigInt(c.req.param("target"));
      await waitForHead({
        watch,
        c,
        target: { minBlock: block, waitMs: 2_000, block, param: "minBlock" },
        head: 9n,
        // A node that never answers: a wait that asked it first would hang there (the request never answered).
        chainHead: () => {
          asked++;
          return new Promise<bigint | null>(() => {});
        },
        of: "index",
      });
      return c.text("reached");
    });
    setTimeout(() => watch.saw(14n), 20);
    const started = performance.now();
    const [near, edge] = await Promise.all([app.request("/10"), app.request("/14")]);
    expect([await near.text(), await edge.text()]).toEqual(["reached", "reached"]);
    expect(performance.now() - started, "released by the commit, not at the wait's end").toBeLessThan(1_000);
    expect(asked, "the node's head not asked").toBe(0);
    // Six beyond: the node is asked (and this one never answers).
    void app.request("/15");
    await new Promise((r) => setTimeout(r, 20));
    expect(asked).toBe(1);
  });

  it("times out, is cancelled by its request's signal, and refuses past its bound at once", async () => {
    const outcomes: WaitOutcome[] = [];
    const watch = new HeadWatch({ maxWaiters: 3, onWait: (o) => outcomes.push(o) });
    watch.saw(1n);
    const started = performance.now();
    expect(await watch.wait(2n, 60)).toBe("timeout");
    expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    expect(await watch.wait(2n, 0)).toBe("timeout");

    const hangUp = new CancelSource();
    const held = [watch.wait(2n, 5_000, hangUp), watch.wait(2n, 5_000), watch.wait(2n, 5_000)];
    expect(watch.waiting).toBe(3);
    expect(await watch.wait(2n, 5_000)).toBe("full");
    const cancelledAt = performance.now();
    hangUp.abort("hang-up");
    expect(await held[0]).toBe("cancelled");
    expect(performance.now() - cancelledAt).toBeLessThan(1_000); // at the hang-up, not at its 5 s wait's end
    expect(watch.waiting).toBe(2);
    watch.saw(2n);
    expect(await Promise.all(held.slice(1))).toEqual(["reached", "reached"]);
    expect(outcomes).toEqual(["timeout", "timeout", "full", "cancelled", "reached", "reached"]);

    const gone = new CancelSource();
    gone.abort("hang-up");
    expect(await watch.wait(3n, 5_000, gone)).toBe("cancelled");
  });

  it("a failing read changes nothing: the waiters time out, the loop stops with them", async () => {
    let reads = 0;
    const watch = new HeadWatch({
      read: async () => {
        reads++;
        throw new Error("database down");
      },
      pollMs: 10,
    });
    expect(await watch.wait(2n, 80)).toBe("timeout");
    const after = reads;
    expect(after).toBeGreaterThan(1);
    await sleep(60);
    expect(reads).toBe(after);
  });
});
