/**
 * The read model's runtime (api/read/runtime.ts) says the index's failures in the API's terms: every request whose read
 * fails is answered 503 INDEX_UNAVAILABLE, and the failure is logged once a minute with its cause and, at the window's
 * end, how many more there were (as docs/operations.md promises for outage logs) — not once per request. Through the
 * app.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";
import type { LockIndex } from "../../api/read/contract";

describe("a failing index", () => {
  it("answers every request 503 and logs one warning for a burst of failures", async () => {
    const refused = () =>
      Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));
    const atBlock: LockIndex = {
      probe: refused,
      lock: refused,
      locksOf: refused,
      changes: refused,
      events: refused,
      holders: refused,
      stats: refused,
    };
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
      rpc: null,
      index: { atBlock },
      logger: createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
    });
    const paths = ["/locks/1", "/stats", "/leaderboards/ve", "/locks/2/events"];
    for (let i = 0; i < 200; i++) {
      const res = await app.request(`/api/index/v1${paths[i % paths.length]}`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("INDEX_UNAVAILABLE");
    }
    const warnings = lines.filter((l) => l.msg === "lock index read failed");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: "warn", cause: "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432" });
    expect(JSON.stringify(warnings)).not.toContain("stack");
  });
});
