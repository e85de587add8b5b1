/**
 * Cost-weighted budgets of the index API (api/http/requestCost.ts): a read answered from what is computed costs 1,
 * large pages more, and a past block's ranking or stats this process must compute costs 10 — charged before it is
 * computed, so a client over budget gets its 429 and nothing is computed for it. Through the app over a synthetic
 * index in PGlite.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { pageCost, REQUEST_COST } from "../../api/http/requestCost";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics, type Metrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import type { LockIndex } from "../../api/read/contract";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

const BASE = "/api/index/v1";
const START = 46_183_959n;
let index: SyntheticIndex;
let reader: LockIndex;

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 20, seed: 5, startBlock: START });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "costs", index, { finalizedLag: 50n });
  reader = createLockIndex({ db: drizzle(client), schema: "costs" });
}, 60_000);

function appWith(max: number) {
  const metrics = createMetrics();
  const app = createApp({
    config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max, windowSec: 60 } },
    rpc: null,
    index: { atBlock: reader },
    logger: silentLogger,
    metrics,
  });
  return { app, metrics };
}

const left = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1]);
const eventBlock = (i: number) => index.events[i]!.blockNumber;
const computations = async (metrics: Metrics) =>
  Number(/api_index_ve_board_computations_total (\d+)/.exec(await metrics.render())?.[1] ?? 0);

describe("the weights", () => {
  it("a page costs one more per 250 rows past the first 250; what is not a number costs a read", () => {
    expect([undefined, "1", "100", "250", "251", "500", "1000", "99999", "x", "-1"].map(pageCost)).toEqual([
      1, 1, 1, 1, 2, 2, 4, 4, 1, 1,
    ]);
    expect(REQUEST_COST.read + REQUEST_COST.computedBlock).toBe(10);
  });
});

describe("charged by the work a request makes", () => {
  it("the head 1, a 1,000-row page 4, a past block computed 10, the same block again 1", async () => {
    const { app } = appWith(300);
    expect(eventBlock(300)).not.toBe(eventBlock(100));
    const seq = [
      ["/stats", 299],
      ["/leaderboards/ve?limit=1000", 295],
      [`/stats?block=${eventBlock(100)}`, 285],
      [`/stats?block=${eventBlock(100)}`, 284],
      // Near the ve anchor a block's stats are made with its ranking (api/read/veStats.ts): its board is then a read.
      [`/leaderboards/ve?block=${eventBlock(100)}&limit=10`, 283],
      [`/leaderboards/ve?block=${eventBlock(300)}&limit=10`, 273],
      [`/leaderboards/ve?block=${eventBlock(300)}&limit=10`, 272],
    ] as const;
    for (const [path, remaining] of seq) {
      const res = await app.request(`${BASE}${path}`);
      expect(res.status, path).toBe(200);
      expect(left(res), path).toBe(remaining);
    }
  });

  it("a client whose budget cannot pay for a computation gets 429 with Retry-After, and nothing is computed", async () => {
    const { app, metrics } = appWith(15);
    const first = await app.request(`${BASE}/leaderboards/ve?block=${eventBlock(50)}`);
    expect([first.status, left(first)]).toEqual([200, 5]);
    expect(await computations(metrics)).toBe(1);
    const refused = await app.request(`${BASE}/leaderboards/ve?block=${eventBlock(60)}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ ok: false, error: "RATE_LIMITED" });
    expect(await computations(metrics)).toBe(1);
  });
});
