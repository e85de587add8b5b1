/**
 * The bound on whole-index computations in flight (api/read/computeGate.ts): slots per lane, a bounded queue served
 * oldest first, a wait deadline, and the refusal a client sees (503 INDEX_UNAVAILABLE busy with Retry-After); the
 * head's lane is never behind the past lane; a request's computations (a profile's several rankings) admitted one
 * place each, all or none, and charged for the ones it is first for.
 */
import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import { IndexBusyError } from "../../api/http/errors";
import { ComputeGate, laneSlots } from "../../api/read/computeGate";
import { admitComputation, type IndexRuntime } from "../../api/read/runtime";

/** A computation that ends when told to. */
function held() {
  let done!: () => void;
  const ended = new Promise<void>((r) => {
    done = r;
  });
  return { ended, done };
}

const gate = (past: { slots: number; queue: number; waitMs: number }) =>
  new ComputeGate({ head: { slots: 1, queue: 4, waitMs: 5_000 }, past });

describe("the compute gate", () => {
  it("runs `slots` at once, queues up to `queue` oldest first, and refuses one more at once with Retry-After", async () => {
    const g = gate({ slots: 1, queue: 2, waitMs: 5_000 });
    const order: number[] = [];
    const first = held();
    const running = g.run("past", async () => {
      order.push(0);
      await first.ended;
    });
    const queued = [1, 2].map((i) => g.run("past", async () => void order.push(i)));
    expect([g.inFlight, g.queued]).toEqual([1, 2]);
    const refused = await g.run("past", async () => order.push(3)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IndexBusyError);
    const busy = refused as IndexBusyError;
    expect([busy.status, busy.retryAfterSec]).toEqual([503, 5]);
    expect(busy.toEnvelope()).toMatchObject({
      error: "INDEX_UNAVAILABLE",
      detail: { reason: "busy", why: "queue full" },
      retryAfterSec: 5,
    });
    expect(g.refused.past).toBe(1);
    first.done();
    await Promise.all([running, ...queued]);
    expect(order).toEqual([0, 1, 2]);
    expect([g.inFlight, g.queued]).toEqual([0, 0]);
  });

  it("a waiter still waiting at its deadline is refused, and its place is given up", async () => {
    const g = gate({ slots: 1, queue: 8, waitMs: 50 });
    const first = held();
    const running = g.run("past", () => first.ended);
    const started = performance.now();
    const refused = await g.run("past", async () => 1).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect((refused as IndexBusyError).detail).toEqual({ reason: "busy", why: "wait expired" });
    expect(g.queued).toBe(0);
    first.done();
    await running;
    expect(await g.run("past", async () => 2)).toBe(2);
  });

  it("the head's lane runs while the past lane is full and queued", async () => {
    const g = gate({ slots: 1, queue: 1, waitMs: 5_000 });
    const first = held();
    const running = g.run("past", () => first.ended);
    const waiting = g.run("past", async () => "past");
    expect(await g.run("head", async () => "head")).toBe("head");
    first.done();
    expect(await waiting).toBe("past");
    await running;
  });

  it("admits at most slots + queue computations before they read anything; requests for one join it", () => {
    const g = gate({ slots: 1, queue: 2, waitMs: 5_000 });
    const a = [g.admit("past", "board:1"), g.admit("past", "board:2"), g.admit("past", "stats:1")];
    expect(a.map((x) => x.first)).toEqual([true, true, true]);
    const refused = (() => {
      try {
        g.admit("past", "board:3");
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(IndexBusyError);
    expect((refused as IndexBusyError).retryAfterSec).toBe(5);
    // Another request for an admitted block joins it, not refused and not first (it will not compute).
    const joined = g.admit("past", "board:1");
    expect(joined.first).toBe(false);
    expect(() => g.admit("head", "board:9")).not.toThrow();
    a[0]!.release();
    a[0]!.release(); // idempotent
    expect(() => g.admit("past", "board:3")).toThrow(IndexBusyError); // board:1 still has its joined request
    joined.release();
    const again = g.admit("past", "board:3");
    expect(again.first).toBe(true);
    expect(g.refused.past).toBe(2);
  });

  it("a failed computation frees its slot", async () => {
    const g = gate({ slots: 1, queue: 0, waitMs: 0 });
    await expect(g.run("past", async () => Promise.reject(new Error("statement failed")))).rejects.toThrow("statement");
    expect(await g.run("past", async () => 3)).toBe(3);
  });

  it("sizes the lanes from the whole-index pool: one slot kept for the head", () => {
    expect(laneSlots(2)).toEqual({ head: 1, past: 1 });
    expect(laneSlots(5)).toEqual({ head: 1, past: 4 });
    expect(laneSlots(1)).toEqual({ head: 1, past: 1 });
  });
});

describe("admitting a request's computations (api/read/runtime.ts admitComputation)", () => {
  /** A memo that holds the blocks of `held`. */
  const memo = (name: string, held: bigint[] = []) => ({ name, has: (b: bigint) => held.includes(b) });
  const runtime = (g: ComputeGate, charged: number[]) =>
    ({
      gate: g,
      chargeCompute: async (_c: unknown, n: number) => {
        charged.push(n);
      },
    }) as unknown as IndexRuntime;
  const c = {} as Context;

  it("one place per ranking to compute, all or none; charged once for the ones it is first for; held ones are free", async () => {
    const g = gate({ slots: 1, queue: 2, waitMs: 5_000 });
    const charged: number[] = [];
    const rt = runtime(g, charged);
    const work = held();
    // A profile-like request: three rankings, one of them held — two places, charged for two.
    const first = admitComputation(rt, c, [memo("a"), memo("b"), memo("ve", [7n])], 7n, () => work.ended);
    await Promise.resolve();
    expect(charged).toEqual([2]);
    // Two more to compute but one place left: refused, and the place it took given back.
    const refused = await admitComputation(rt, c, [memo("c"), memo("d")], 7n, async () => "never").catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(IndexBusyError);
    expect(charged).toEqual([2]);
    // Joining `a` (computed by the first) and `c`: only `c` is charged.
    expect(await admitComputation(rt, c, [memo("a"), memo("c")], 7n, async () => "joined")).toBe("joined");
    expect(charged).toEqual([2, 1]);
    // The head, or a block every memo holds: no place, no charge.
    expect(await admitComputation(rt, c, [memo("x"), memo("y"), memo("z")], null, async () => "head")).toBe("head");
    expect(await admitComputation(rt, c, [memo("x", [7n])], 7n, async () => "held")).toBe("held");
    expect(charged).toEqual([2, 1]);
    work.done();
    await first;
    // Every place given back.
    expect(await admitComputation(rt, c, [memo("p"), memo("q"), memo("r")], 8n, async () => 3)).toBe(3);
  });
});
