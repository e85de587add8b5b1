import { describe, expect, it } from "vitest";
import { boundedReadiness, READY_PROBE_MS } from "../../api/server/readiness";

// The one /ready rule both serving processes use (the API process over the views schema, npm start over
// Ponder's in-process PGlite): bounded, three documented outcomes, no internals.
describe("boundedReadiness", () => {
  it("index present → ready; absent → index missing", async () => {
    expect(await boundedReadiness(async () => true)()).toEqual({ ready: true });
    expect(await boundedReadiness(async () => false)()).toEqual({ ready: false, reason: "index missing" });
  });

  it("a failing database → database unreachable, the error's text nowhere in the answer", async () => {
    const state = await boundedReadiness(async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:5432 at node_modules/pg-pool/index.js:45:11");
    })();
    expect(state).toEqual({ ready: false, reason: "database unreachable" });
  });

  it("a database that never answers → database unreachable after READY_PROBE_MS, not later", async () => {
    const t0 = performance.now();
    const state = await boundedReadiness(() => new Promise<boolean>(() => {}))();
    const ms = performance.now() - t0;
    expect(state).toEqual({ ready: false, reason: "database unreachable" });
    expect(ms).toBeGreaterThanOrEqual(READY_PROBE_MS - 5);
    expect(ms).toBeLessThan(READY_PROBE_MS + 400);
  });
});
