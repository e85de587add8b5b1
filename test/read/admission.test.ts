/** The rows-in-flight budget of GraphQL requests (api/read/admission.ts): weights, order, abandoned waits. */
import { describe, expect, it } from "vitest";
import { CancelSource } from "../../api/http/cancellation";
import { admission } from "../../api/read/admission";

const tick = () => new Promise((r) => setImmediate(r));

describe("admission", () => {
  it("admits while the weights fit; a release lets the next in, first come first served", async () => {
    const a = admission(10);
    const order: string[] = [];
    const r1 = await a.acquire(6);
    const r2 = await a.acquire(4);
    expect(a.inFlight()).toBe(10);
    const third = a.acquire(5).then((r) => (order.push("5"), r));
    const fourth = a.acquire(1).then((r) => (order.push("1"), r));
    await tick();
    // The 1 would fit nowhere yet; and it does not pass the 5 waiting ahead of it once room appears.
    expect(order).toEqual([]);
    expect(a.waiting()).toBe(2);
    r2();
    await tick();
    expect(order).toEqual([]); // 6 + 5 > 10: the head still waits, and so does everything behind it
    r1();
    await tick();
    expect(order).toEqual(["5", "1"]);
    expect(a.inFlight()).toBe(6);
    (await third)();
    (await fourth)();
    expect(a.inFlight()).toBe(0);
  });

  it("a request heavier than the whole budget runs alone, never forever refused", async () => {
    const a = admission(10);
    const small = await a.acquire(3);
    let big: (() => void) | undefined;
    const pending = a.acquire(50).then((r) => {
      big = r;
    });
    await tick();
    expect(big).toBeUndefined();
    small();
    await pending;
    expect(a.inFlight()).toBe(50);
    let after = false;
    const next = a.acquire(1).then(() => {
      after = true;
    });
    await tick();
    expect(after).toBe(false);
    big!();
    await next;
    expect(after).toBe(true);
  });

  it("a wait abandoned (deadline, hang-up) leaves the queue, holds nothing, and unblocks those behind it", async () => {
    const a = admission(10);
    const held = await a.acquire(8);
    const signal = new CancelSource();
    const abandoned = a.acquire(5, signal);
    let behind = false;
    const next = a.acquire(2).then(() => {
      behind = true;
    });
    await tick();
    expect(behind).toBe(false); // behind the 5, though 2 fits
    signal.abort("deadline");
    await expect(abandoned).rejects.toBe("deadline");
    await next;
    expect(behind).toBe(true);
    expect(a.waiting()).toBe(0);
    expect(a.inFlight()).toBe(10);
    held();
    // Released twice: counted once.
    held();
    expect(a.inFlight()).toBe(2);
    // Already aborted: refused at once, nothing taken.
    await expect(a.acquire(1, signal)).rejects.toBe("deadline");
    expect(a.inFlight()).toBe(2);
  });
});
