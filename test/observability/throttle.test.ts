import { describe, expect, it } from "vitest";
import { type LogFields, silentLogger } from "../../api/observability/logger";
import { causeOf, throttledWarnings } from "../../api/observability/throttle";

function recording() {
  const lines: { msg: string; fields: LogFields }[] = [];
  return {
    lines,
    logger: { ...silentLogger, warn: (msg: string, fields: LogFields = {}) => lines.push({ msg, fields }) },
  };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("throttledWarnings", () => {
  it("the first at once; the rest of the window as one line with their count and the latest cause", async () => {
    const { lines, logger } = recording();
    const warn = throttledWarnings(logger, 200);
    for (let i = 0; i < 50; i++) warn("db", "lock index unavailable", { cause: `ECONNREFUSED #${i}` });
    expect(lines).toEqual([{ msg: "lock index unavailable", fields: { cause: "ECONNREFUSED #0" } }]);
    await sleep(260);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toEqual({
      msg: "lock index unavailable",
      fields: { cause: "ECONNREFUSED #49", repeated: 49, windowSec: 0 },
    });
    // Within the next window: counted again, written once more at its end; never more than one line a window.
    warn("db", "lock index unavailable", { cause: "again" });
    expect(lines).toHaveLength(2);
    await sleep(260);
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fields).toMatchObject({ repeated: 1, cause: "again" });
  });

  it("kinds are throttled apart; a quiet window writes nothing; flush writes what is pending", async () => {
    const { lines, logger } = recording();
    const warn = throttledWarnings(logger, 60_000);
    warn("a", "one");
    warn("b", "two");
    warn("a", "one");
    expect(lines.map((l) => l.msg)).toEqual(["one", "two"]);
    warn.flush();
    expect(lines.map((l) => [l.msg, l.fields.repeated])).toEqual([
      ["one", undefined],
      ["two", undefined],
      ["one", 1],
    ]);
  });
});

describe("causeOf", () => {
  it("code and message, short, never a stack", () => {
    const e = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect(causeOf(e)).toBe("ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432");
    expect(causeOf(new Error("x".repeat(500)))).toHaveLength(200);
    expect(causeOf("plain")).toBe("plain");
  });
});
