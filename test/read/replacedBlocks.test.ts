import { describe, expect, it } from "vitest";
import { ReplacedBlocks } from "../../api/read/replacedBlocks";

describe("ReplacedBlocks", () => {
  it("holds a replaced range for holdMs, its ends included, then lets it go", () => {
    let now = 1_000;
    const r = new ReplacedBlocks(240_000, 64, () => now);
    r.add(100n, 102n);
    expect([99n, 100n, 101n, 102n, 103n].map((b) => r.covers(b))).toEqual([false, true, true, true, false]);
    now += 239_999;
    expect(r.covers(101n)).toBe(true);
    now += 1;
    expect(r.covers(101n)).toBe(false);
  });

  it("a range told backwards holds its first block; at most maxRanges are held, the newest", () => {
    const r = new ReplacedBlocks(1_000, 2, () => 0);
    r.add(50n, 40n);
    expect([40n, 50n].map((b) => r.covers(b))).toEqual([false, true]);
    r.add(60n, 60n);
    r.add(70n, 70n);
    expect([50n, 60n, 70n].map((b) => r.covers(b))).toEqual([false, true, true]);
  });
});
