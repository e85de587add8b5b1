/**
 * The `retry:` delays of streams closed together (api/index/reconnectSpread.ts): each its own, spread over a window
 * that grows with their number within docs/api.md's bounds (2 s, plus 10 ms a stream between 2 s and 30 s), evenly:
 * no second of the window is sent many more reconnects than another. test/index/streamGaps.test.ts checks the hub
 * sends them, on real Postgres.
 */
import { describe, expect, it } from "vitest";
import { reconnectDelays } from "../../api/index/reconnectSpread";

describe("reconnectDelays", () => {
  it.each([
    [1, 2_000],
    [50, 2_000],
    [1_000, 10_000],
    [10_000, 30_000],
  ])("%i streams: distinct, within 2 s + a %i ms window, spread evenly", (n, window) => {
    const delays = reconnectDelays(n);
    expect(delays).toHaveLength(n);
    expect(new Set(delays).size).toBe(n);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...delays)).toBeLessThan(2_000 + window);
    // Each tenth of the window gets its tenth of the streams (one more or less where they do not divide).
    const tenths = new Array<number>(10).fill(0);
    for (const d of delays) tenths[Math.floor(((d - 2_000) * 10) / window)]!++;
    for (const count of tenths) expect(Math.abs(count - n / 10)).toBeLessThanOrEqual(1);
  });

  it("past 30,000 streams the window stays 30 s (delays then repeat)", () => {
    const delays = reconnectDelays(40_000);
    expect(Math.max(...delays)).toBeLessThan(32_000);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
  });
});
