/**
 * A time-travel flood on the API process as operators run it (dist/server/main.js over a Postgres index,
 * test/support/servedIndex.ts), default limits: 100 loopback addresses (bench/timeTravelFlood.ts, a process of its
 * own, at the lowest CPU priority as the other floods) ask for the board and the stats at past blocks back to back, each a new whole-index computation, while
 * another client reads the head's stats and board and /health. The head's answers are computed in a lane of their
 * own and kept apart from the past blocks' eviction (api/read/computeGate.ts, api/read/blockMemo.ts), so the other
 * client gets 200 every time; the flood's excess is refused at once, 503 INDEX_UNAVAILABLE busy (before any read) or
 * 429, each with Retry-After — never a pool timeout or an unanswered request. The refusals are counted in the metrics. The latencies against their goals are
 * bench/abuse-time-travel.ts's. The same flood on the duration boards and the profile (each of its eight rankings a
 * computation) leaves the head's board and profile 200 every time.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runFloodScript } from "../support/apiProcess";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";
import { syntheticOwner } from "../support/syntheticIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const BASE = "/api/index/v1";
const FLOOD = path.join(import.meta.dirname, "..", "..", "bench", "timeTravelFlood.ts");

let served: ServedIndex;
let folder: string;

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: "time_travel_flood",
    synthetic: { events: 20_000, owners: 2_000, seed: 31 },
  });
  folder = mkdtempSync(path.join(os.tmpdir(), "time-travel-flood-"));
}, 180_000);

afterAll(async () => {
  await served?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

type FloodResult = {
  requests: number;
  byStatus: Record<string, number>;
  retryAfter: Record<string, number>;
  maxMs: number;
  errors: number;
};

describe("a flood of past blocks from 100 addresses", () => {
  it("leaves another client's head 200 every time, and refuses the excess at once with Retry-After", async () => {
    const url = (p: string) => `${served.api.url}${p}`;
    // Distinct blocks with events (their times are in the index; the devnet's node does not have these blocks).
    const blocks = [...new Set(served.index.events.map((e) => e.blockNumber))].slice(0, -50).map(String);
    const blocksFile = path.join(folder, "blocks.json");
    writeFileSync(blocksFile, JSON.stringify(blocks));
    // The head's answers computed once, before the flood (what "served from what is already computed" means).
    for (const p of [`${BASE}/stats`, `${BASE}/leaderboards/ve?limit=10`])
      expect((await fetch(url(p))).status).toBe(200);

    const flood = runFloodScript<FloodResult>(FLOOD, {
      BASE: served.api.url,
      ADDRESSES: "100",
      DURATION_MS: "6000",
      BLOCKS_FILE: blocksFile,
    });
    const result = await headServedDuring(flood, {
      stats: `${BASE}/stats`,
      board: `${BASE}/leaderboards/ve?limit=10`,
      health: "/health",
    });
    // The flood was large enough to be refused, and every refusal said when to come back.
    const refused = (result.byStatus["503"] ?? 0) + (result.byStatus["429"] ?? 0);
    expect(result.byStatus["503"] ?? 0).toBeGreaterThan(0);
    expect(result.retryAfter["503"] ?? 0).toBe(result.byStatus["503"]);
    expect(result.retryAfter["429"] ?? 0).toBe(result.byStatus["429"] ?? 0);
    expect(result.byStatus["200"] ?? 0).toBeGreaterThan(0);
    // Nothing else: no 5xx but the refusal, no connection lost, no answer held to a timeout.
    expect(result.requests).toBe(refused + (result.byStatus["200"] ?? 0));
    expect(result.errors).toBe(0);
    expect(result.maxMs).toBeLessThan(10_000);

    const after = await refusals(url);
    expect(after.head).toBe(0);
    expect(after.past).toBe(result.byStatus["503"]);
  }, 120_000);

  it("on the duration boards and profiles too: the head's board and profile 200 every time, the flood refused", async () => {
    const url = (p: string) => `${served.api.url}${p}`;
    const blocks = [...new Set(served.index.events.map((e) => e.blockNumber))].slice(0, -50).map(String);
    const blocksFile = path.join(folder, "duration-blocks.json");
    writeFileSync(blocksFile, JSON.stringify(blocks));
    const account = syntheticOwner(0);
    const head = {
      board: `${BASE}/leaderboards/takeovers?window=lifetime&limit=10`,
      profile: `${BASE}/accounts/${account}`,
      health: "/health",
    };
    for (const p of [head.board, head.profile]) expect((await fetch(url(p))).status).toBe(200);
    const before = await refusals(url);

    const flood = runFloodScript<
      FloodResult & { reasons: Record<string, number>; byPath: Record<string, Record<string, number>> }
    >(FLOOD, {
      BASE: served.api.url,
      ADDRESSES: "100",
      // Budgets of their own: not the addresses of the flood above, whose window may still run.
      ADDRESS_FROM: "100",
      DURATION_MS: "6000",
      BLOCKS_FILE: blocksFile,
      PATHS: JSON.stringify([
        `${BASE}/leaderboards/takeovers?window=lifetime&block={block}&limit=10`,
        `${BASE}/accounts/${account}?block={block}`,
        `${BASE}/leaderboards/royalties/${account}?window=30d&block={block}`,
      ]),
    });
    const result = await headServedDuring(flood, head);
    const busy = result.reasons["503 busy"] ?? 0;
    expect(busy).toBeGreaterThan(0);
    // Each of the three refused: the board, the profile and the rank lookup all go through the gate.
    for (const i of ["0", "1", "2"]) expect(result.byPath[i]?.["503"] ?? 0, `path ${i}`).toBeGreaterThan(0);
    expect(result.byStatus["503"] ?? 0).toBe(busy);
    expect(result.reasons["429 RATE_LIMITED"] ?? 0).toBe(result.byStatus["429"] ?? 0);
    expect(result.retryAfter["503"] ?? 0).toBe(busy);
    expect(result.retryAfter["429"] ?? 0).toBe(result.byStatus["429"] ?? 0);
    expect(result.byStatus["200"] ?? 0).toBeGreaterThan(0);
    expect(result.requests).toBe(busy + (result.byStatus["429"] ?? 0) + (result.byStatus["200"] ?? 0));
    expect(result.errors).toBe(0);
    expect(result.maxMs).toBeLessThan(10_000);

    const after = await refusals(url);
    expect(after.head - before.head).toBe(0);
    expect(after.past - before.past).toBe(busy);
  }, 120_000);
});

/**
 * Another client reading `paths` (by name) while `flood` runs, a round every 250 ms (within its own budget of 300
 * index requests a minute): each answered 200 every time, at least four times. The flood's result.
 */
async function headServedDuring<T>(flood: Promise<T>, paths: Record<string, string>): Promise<T> {
  let done = false;
  void flood.finally(() => {
    done = true;
  });
  const statuses: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
  while (!done) {
    for (const [name, p] of Object.entries(paths)) {
      const res = await fetch(`${served.api.url}${p}`);
      await res.arrayBuffer();
      statuses[name]!.push(res.status);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const result = await flood;
  for (const [name, seen] of Object.entries(statuses)) {
    expect(seen.length, name).toBeGreaterThan(3);
    expect(
      seen.filter((s) => s !== 200),
      name,
    ).toEqual([]);
  }
  return result;
}

/** The compute gate's refusals since the process started, by lane (its metrics). */
async function refusals(url: (p: string) => string): Promise<{ head: number; past: number }> {
  const metrics = await (await fetch(url("/api/metrics"))).text();
  const n = { head: 0, past: 0 };
  for (const [, lane, v] of metrics.matchAll(
    /^api_index_computations_refused_total\{lane="(\w+)",why="[^"]+"\} (\d+)/gm,
  )) {
    n[lane as "head" | "past"] += Number(v);
  }
  return n;
}
