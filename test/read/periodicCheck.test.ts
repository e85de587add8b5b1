import { afterEach, describe, expect, it, vi } from "vitest";
import { PeriodicCheck } from "../../api/read/periodicCheck";

/** A run that waits until released, counting its starts. */
function gated() {
  let runs = 0;
  let release: (() => void) | null = null;
  let fail = false;
  const run = () => {
    runs++;
    return new Promise<void>((resolve, reject) => {
      release = fail ? () => reject(new Error("node down")) : resolve;
    });
  };
  return {
    run,
    get runs() {
      return runs;
    },
    failNext(f: boolean) {
      fail = f;
    },
    release() {
      release?.();
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("PeriodicCheck", () => {
  it("runs once for two callers while a run is under way (single flight), and again after it ends", async () => {
    const g = gated();
    const checks = new PeriodicCheck(g.run);
    const a = checks.check();
    const b = checks.check();
    expect(b).toBe(a);
    expect(g.runs).toBe(1);
    g.release();
    await Promise.all([a, b]);
    const c = checks.check();
    expect(g.runs).toBe(2);
    g.release();
    await c;
  });

  it("swallows a failure: the caller's promise resolves, and the next check runs again", async () => {
    const g = gated();
    const checks = new PeriodicCheck(g.run);
    g.failNext(true);
    const failed = checks.check();
    g.release();
    await expect(failed).resolves.toBeUndefined();
    g.failNext(false);
    const next = checks.check();
    expect(next).not.toBe(failed);
    expect(g.runs).toBe(2);
    g.release();
    await expect(next).resolves.toBeUndefined();
  });

  it("runs every ms, a tick during a run joining it, until stopped; the timer never holds the process", async () => {
    vi.useFakeTimers();
    const g = gated();
    const checks = new PeriodicCheck(g.run);
    const unref = vi.spyOn(globalThis, "setInterval");
    const stop = checks.start(1_000);
    const timer = unref.mock.results[0]?.value as NodeJS.Timeout;
    unref.mockRestore();
    expect(timer.hasRef()).toBe(false);
    expect(g.runs).toBe(0); // no run at start: the caller runs one first where it wants one
    await vi.advanceTimersByTimeAsync(1_000);
    expect(g.runs).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000); // the first run still under way: joined
    expect(g.runs).toBe(1);
    g.release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(g.runs).toBe(2);
    g.release();
    stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(g.runs).toBe(2);
  });
});
