/** A log line for frequent events: the first at once, then at most one per interval with a count. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../api/observability/logger";
import { throttledLog } from "../../api/observability/throttledLog";

let lines: Record<string, unknown>[];
const logger = () => createLogger({ level: "info", write: (line) => lines.push(JSON.parse(line)) });

beforeEach(() => {
  lines = [];
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe("throttledLog", () => {
  it("writes the first event at once and the rest as one counted line per minute", () => {
    const warn = throttledLog(logger(), "warn", "connections refused");
    warn({ cap: 5 });
    expect(lines).toMatchObject([{ level: "warn", msg: "connections refused", cap: 5, count: 1 }]);
    for (let i = 0; i < 1_000; i++) warn({ cap: 5, n: i });
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ msg: "connections refused", count: 1_000, n: 999, intervalSec: 60 });
  });

  it("writes nothing while nothing happens, and starts afresh after a quiet interval", () => {
    const warn = throttledLog(logger(), "warn", "x", 1_000);
    warn();
    vi.advanceTimersByTime(5_000);
    expect(lines).toHaveLength(1);
    warn();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ count: 1 });
  });
});
