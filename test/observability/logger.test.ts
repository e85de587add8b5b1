import { describe, expect, it } from "vitest";
import { Counter } from "../../api/observability/counter";
import { createLogger, type LogLevel, scrubText, shortenAddress } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";

const ADDRESS = "0xAbC1234567890aBcDeF1234567890AbCdEf12345";
const RPC = "https://base-mainnet.g.alchemy.com/v2/sEcReT-KeY-123";

function capture(level?: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = createLogger({
    level,
    write: (l) => {
      raw.push(l);
      lines.push(JSON.parse(l));
    },
  });
  return { logger, lines, raw };
}

describe("log scrubbing", () => {
  it("shortens 0x-addresses but leaves longer hex (hashes, calldata) alone", () => {
    expect(shortenAddress(`user ${ADDRESS} did it`)).toBe("user 0xAbC1…2345 did it");
    const hash = `0x${"ab".repeat(32)}`;
    expect(shortenAddress(hash)).toBe(hash);
    expect(shortenAddress(`${ADDRESS}00`)).toBe(`${ADDRESS}00`);
  });

  it("reduces every URL to scheme and host", () => {
    expect(scrubText(`fetch ${RPC} failed`)).toBe("fetch https://base-mainnet.g.alchemy.com/*** failed");
    expect(scrubText("redis://:hunter2@cache:6379/0 down")).toBe("redis://cache:6379/*** down");
    expect(scrubText("https://user:pw@node.example?key=abc")).toBe("https://node.example/***");
  });

  it("never writes a URL secret or a full address at info, warn or error", () => {
    const { logger, raw } = capture("debug");
    for (const level of ["info", "warn", "error"] as const) {
      logger[level](`calling ${RPC} for ${ADDRESS}`, {
        url: RPC,
        nested: { user: ADDRESS, list: [ADDRESS, { deep: RPC }] },
        error: new Error(`connect ECONNREFUSED ${RPC} (${ADDRESS})`),
      });
    }
    expect(raw).toHaveLength(3);
    for (const line of raw) {
      expect(line).not.toContain("sEcReT");
      expect(line).not.toContain("/v2/");
      expect(line.toLowerCase()).not.toContain(ADDRESS.toLowerCase());
      expect(line).toContain("0xAbC1…2345");
      expect(line).toContain("https://base-mainnet.g.alchemy.com/***");
    }
  });

  it("keeps full addresses at debug, but still no URL secret", () => {
    const { logger, raw } = capture("debug");
    logger.debug("path", { path: `/api/mcp/v1/state/${ADDRESS}`, rpc: RPC });
    expect(raw[0]).toContain(ADDRESS);
    expect(raw[0]).not.toContain("sEcReT");
  });

  it("drops lines below the level and writes one JSON object per line", () => {
    const { logger, lines, raw } = capture("warn");
    logger.debug("d");
    logger.info("i");
    logger.warn("w", { n: 1n });
    logger.error("e");
    expect(lines.map((l) => l.level)).toEqual(["warn", "error"]);
    expect(lines[0]).toMatchObject({ msg: "w", n: "1" });
    expect(typeof lines[0]!.time).toBe("string");
    for (const l of raw) expect(l).not.toContain("\n");
  });
});

describe("Prometheus text", () => {
  it("renders HELP, TYPE and one sample per label set, escaping label values", () => {
    const c = new Counter("x_total", "Things.", ["route", "status"]);
    c.inc({ route: "/a/:id", status: "200" });
    c.inc({ route: "/a/:id", status: "200" }, 2);
    c.inc({ route: 'we"ird\\\n', status: "500" });
    expect(c.render()).toBe(
      [
        "# HELP x_total Things.",
        "# TYPE x_total counter",
        'x_total{route="/a/:id",status="200"} 3',
        'x_total{route="we\\"ird\\\\\\n",status="500"} 1',
      ].join("\n"),
    );
    expect(c.get({ route: "/a/:id", status: "200" })).toBe(3);
    expect(c.get({ route: "/b", status: "200" })).toBe(0);
  });

  it("counts RPC calls through the onCall hook", async () => {
    const m = createMetrics();
    m.onRpcCall("eth_call", "ok");
    m.onRpcCall("eth_call", "ok");
    m.onRpcCall("eth_call", "timeout");
    const text = await m.render();
    expect(text).toContain('api_rpc_calls_total{method="eth_call",outcome="ok"} 2');
    expect(text).toContain('api_rpc_calls_total{method="eth_call",outcome="timeout"} 1');
    expect(text.endsWith("\n")).toBe(true);
  });
});
