/**
 * The duration boards and the profile go through the compute gate and the request cost as the ve board does (issue
 * 30, api/read/runtime.ts answerAt and admitComputation): a past block's ranking is admitted in the past lane and
 * charged 9 more before it is computed (a profile: 9 per ranking it must compute, up to eight), a held one costs a
 * read and waits for nothing, and the head's run in their own lane — REST, GraphQL and the MCP tools (in-process REST
 * requests) alike. Through the app over a synthetic index in PGlite
 * (its board tables empty: every ranking is still one statement on the whole-index pool); the past blocks'
 * statements are held open where the test needs the past lane full.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics, type Metrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import { toolCallInit } from "../support/mcpToolCall";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

const BASE = "/api/index/v1";
const START = 46_183_959n;
let index: SyntheticIndex;
let inner: ReturnType<typeof createLockIndex>;
/**
 * While set, a past block's ranking statement (a board's, the ve board's) waits for it: the past lane stays full. (Not
 * the finalized block's: a head read computes a board's anchor there.)
 */
let held: Promise<void> | null = null;

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 20, seed: 7, startBlock: START });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "gated", index, { finalizedLag: 50n });
  inner = createLockIndex({ db: drizzle(client), schema: "gated" });
  const cp = await client.query<{ f: string }>(`SELECT finalized_checkpoint AS f FROM gated."_ponder_checkpoint"`);
  finalized = BigInt((cp.rows[0] as { f: string }).f.slice(26, 42));
}, 60_000);

/** The index's finalized block: a board's anchor is read there by a head read (api/read/durationBoards.ts). */
let finalized = 0n;

/** How long a past block's ranking statement takes at least, in ms (a larger index's, for the lane's deadline). */
let slowMs = 0;
const past = (at: { block: bigint } | null) => at !== null && at.block !== index.head.block && at.block !== finalized;
const slowed = async (at: { block: bigint } | null) => {
  if (held && past(at)) await held;
  if (slowMs > 0 && past(at)) await new Promise((r) => setTimeout(r, slowMs));
};
const reader = () => ({
  ...inner,
  board: async (...args: Parameters<typeof inner.board>) => {
    await slowed(args[2]);
    return inner.board(...args);
  },
  holders: async (...args: Parameters<typeof inner.holders>) => {
    await slowed(args[0]);
    return inner.holders(...args);
  },
});

function appWith(max: number, indexCompute?: { queue: number; waitMs: number }) {
  const metrics = createMetrics();
  const app = createApp({
    config: {
      ...loadConfig({ NETWORK: "base" }),
      rateLimit: { max, windowSec: 60 },
      ...(indexCompute && { indexCompute }),
    },
    rpc: null,
    index: { atBlock: reader() },
    logger: silentLogger,
    metrics,
  });
  return { app, metrics };
}

/** Distinct blocks with events (their times are in the index), oldest first. */
const blocks = () => [...new Set(index.events.map((e) => e.blockNumber))].filter((b) => b !== index.head.block);
const left = (res: Response, budget = "index") =>
  Number(new RegExp(`"${budget}";r=(\\d+)`).exec(res.headers.get("ratelimit") ?? "")?.[1]);
const metric = async (metrics: Metrics, name: string) =>
  Number(new RegExp(`^${name} (\\d+)`, "m").exec(await metrics.render())?.[1] ?? 0);
const ACCOUNT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
/** A GraphQL answer, and how many times its request was refused 503 COMPILE_QUEUE_FULL before it (each cost 1). */
type Answer = { res: Response; refused: number };
/**
 * Each document here is new to the app: on a busy machine the compile gate may be resting after the last one's compile
 * and refuse it, 503 COMPILE_QUEUE_FULL with Retry-After (api/graphql/compileGate.ts, docs/api.md's limits), having run
 * nothing, but after the request's 1 of the graphql budget was charged. Then, as a well-behaved client, it waits what
 * it was told and asks again, a few times at most (as test/graphql/yoga.test.ts); any other answer, a refusal of
 * another kind included, is the case's. `refused` keeps the budget's arithmetic exact: a past block's answer costs
 * 1 + 9, and each refusal before it 1.
 */
async function graphql(app: ReturnType<typeof appWith>["app"], query: string): Promise<Answer> {
  for (let refused = 0; ; refused++) {
    const res = await app.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query }),
    });
    if (res.status !== 503 || refused === 4) return { res, refused };
    const codes = ((await res.clone().json()) as { errors: { extensions: { code: string } }[] }).errors.map(
      (e) => e.extensions.code,
    );
    if (codes.length !== 1 || codes[0] !== "COMPILE_QUEUE_FULL") return { res, refused };
    await new Promise((r) => setTimeout(r, 1000 * Math.max(1, Number(res.headers.get("retry-after")))));
  }
}

/** One stateless MCP tool call (the 2026-07-28 wire), its JSON-RPC answer. */
async function mcpCall(app: ReturnType<typeof appWith>["app"], name: string, args: Record<string, unknown>) {
  const res = await app.request("/api/mcp", toolCallInit("2026", name, args));
  return (await res.json()) as { result?: { isError?: boolean; content: { text: string }[] } };
}

describe("what a duration board or a profile costs", () => {
  it("a past block's board 10, held 1; a profile 1 + 9 per ranking it computes (8 at most), held 1", async () => {
    const { app, metrics } = appWith(1_000);
    const [b1, b2] = blocks();
    const seq = [
      [`/leaderboards/takeovers?window=lifetime&block=${b1}`, 990],
      [`/leaderboards/takeovers?window=lifetime&block=${b1}`, 989],
      [`/leaderboards/takeovers/${ACCOUNT}?window=lifetime&block=${b1}`, 988],
      [`/accounts/${ACCOUNT}?block=${b2}`, 988 - 73],
      [`/accounts/${ACCOUNT}?block=${b2}`, 988 - 74],
      // Its takeovers lifetime ranking is held: seven to compute.
      [`/accounts/${ACCOUNT}?block=${b1}`, 988 - 74 - 64],
      ["/leaderboards/takeovers?window=lifetime", 988 - 74 - 65],
      [`/accounts/${ACCOUNT}`, 988 - 74 - 66],
    ] as const;
    for (const [path, remaining] of seq) {
      const res = await app.request(`${BASE}${path}`);
      expect(res.status, `${path} ${res.status === 200 ? "" : await res.clone().text()}`).toBe(200);
      expect(left(res), path).toBe(remaining);
    }
    // 1 + 7 + 6 past duration rankings, then the head's 7 (the takeovers lifetime one among them): each board's first
    // computed whole (its anchor: these blocks are finalized), the others derived from it (api/read/durationBoards.ts).
    expect(await metric(metrics, "api_index_duration_board_computations_total")).toBe(7);
    expect(await metric(metrics, "api_index_duration_board_derivations_total")).toBe(1 + 7 + 6 + 7 - 7);
  });

  it("a client whose budget cannot pay for a profile's rankings gets 429, and nothing is computed", async () => {
    const { app, metrics } = appWith(50);
    const refused = await app.request(`${BASE}/accounts/${ACCOUNT}?block=${blocks()[3]}`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ ok: false, error: "RATE_LIMITED" });
    expect(await metric(metrics, "api_index_duration_board_computations_total")).toBe(0);
    expect(await metric(metrics, "api_index_ve_board_computations_total")).toBe(0);
  });

  it("GraphQL: a past block's leaderboard costs 9 more of the graphql budget; over budget, RATE_LIMITED", async () => {
    const { app, metrics } = appWith(30);
    const [, , , , b5] = blocks();
    const field = `{ leaderboard(board: "royalties", window: "30d", block: "${b5}") { accounts } }`;
    const first = await graphql(app, field);
    expect(first.res.status).toBe(200);
    expect((await first.res.json()).data).toEqual({ leaderboard: { accounts: 0 } });
    expect(left(first.res, "graphql")).toBe(30 - first.refused - 10);
    const again = await graphql(app, field);
    expect(again.res.status).toBe(200);
    expect(left(again.res, "graphql")).toBe(left(first.res, "graphql") - again.refused - 1);
    expect(await metric(metrics, "api_index_duration_board_computations_total")).toBe(1);
    // A profile at a new block would compute eight rankings (72): refused in GraphQL's terms, nothing computed.
    const refused = await graphql(app, `{ profile(address: "${ACCOUNT}", block: "${b5}") { address } }`);
    const body = (await refused.res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]?.extensions).toMatchObject({ code: "RATE_LIMITED" });
    expect(body.errors[0]?.extensions.retryAfterSec).toBeGreaterThan(0);
    expect(await metric(metrics, "api_index_duration_board_computations_total")).toBe(1);
  });

  it("GraphQL: the ve board costs what REST's does: a past block's page or rank 9 more, held 1", async () => {
    const { app, metrics } = appWith(30);
    const [, , , , , b6, b7] = blocks();
    const page = await graphql(app, `{ leaderboard(board: "ve", limit: 5, block: "${b6}") { accounts } }`);
    expect(page.res.status).toBe(200);
    expect(left(page.res, "graphql")).toBe(30 - page.refused - 10);
    const rank = await graphql(app, `{ rank(board: "ve", address: "${ACCOUNT}", block: "${b6}") { accounts } }`);
    expect(rank.res.status).toBe(200);
    expect(left(rank.res, "graphql")).toBe(left(page.res, "graphql") - rank.refused - 1);
    expect(await metric(metrics, "api_index_ve_board_computations_total")).toBe(1);
    const rest = await app.request(`${BASE}/leaderboards/ve?limit=5&block=${b7}`);
    expect(left(rest, "index")).toBe(20);
  });
});

describe("a profile's rankings", () => {
  it("are computed one after another: none waits out the past lane's deadline behind its own siblings", async () => {
    // Eight statements of 60 ms on one slot, each allowed 150 ms of waiting: side by side, the fourth would expire.
    const { app, metrics } = appWith(1_000, { queue: 8, waitMs: 150 });
    slowMs = 60;
    try {
      const res = await app.request(`${BASE}/accounts/${ACCOUNT}?block=${blocks()[40]}`);
      expect(res.status, await res.clone().text()).toBe(200);
      const graphqlProfile = await graphql(
        app,
        `{ profile(address: "${ACCOUNT}", block: "${blocks()[41]}") { address } }`,
      );
      expect(((await graphqlProfile.res.json()) as { errors?: unknown }).errors).toBeUndefined();
    } finally {
      slowMs = 0;
    }
    // Fourteen rankings: seven computed whole (the boards' anchors), the second block's derived from them; the ve
    // board's anchor (the finalized block's live locks) read once, both blocks' rankings derived from it.
    expect(await metric(metrics, "api_index_duration_board_computations_total")).toBe(7);
    expect(await metric(metrics, "api_index_duration_board_derivations_total")).toBe(7);
    expect(await metric(metrics, "api_index_ve_board_computations_total")).toBe(1);
    expect(await metric(metrics, "api_index_ve_board_derivations_total")).toBe(2);
  });
});

describe("with the past lane full", () => {
  it("the head's held board and profile answer at once; a new past block's board, profile or field is refused 503 busy", async () => {
    const { app, metrics } = appWith(1_000_000);
    // The head's rankings computed before the flood.
    for (const p of ["/leaderboards/takeovers?window=lifetime", `/accounts/${ACCOUNT}`]) {
      expect((await app.request(`${BASE}${p}`)).status, p).toBe(200);
    }
    let open!: () => void;
    held = new Promise<void>((r) => {
      open = r;
    });
    const all = blocks();
    try {
      // Default limits: one past slot, eight waiting — nine admitted computations fill the lane.
      const flood = all
        .slice(10, 19)
        .map((b) => Promise.resolve(app.request(`${BASE}/leaderboards/furnace-eth?window=24h&block=${b}`)));
      for (let i = 0; i < 200 && (await metric(metrics, "api_index_computations_queued")) < 8; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await metric(metrics, "api_index_computations_queued")).toBe(8);

      // Held at the head: answered from memory, whatever the past lane does.
      for (const p of ["/leaderboards/takeovers?window=lifetime&limit=5", `/accounts/${ACCOUNT}`]) {
        const started = performance.now();
        const res = await app.request(`${BASE}${p}`);
        expect(res.status, p).toBe(200);
        expect(performance.now() - started, p).toBeLessThan(1_000);
      }
      // Not held at the head: computed in the head's lane, not behind the past blocks.
      expect((await app.request(`${BASE}/leaderboards/royalties?window=7d`)).status).toBe(200);

      const busy = [
        `/leaderboards/takeovers?window=lifetime&block=${all[30]}`,
        `/leaderboards/takeovers/${ACCOUNT}?window=7d&block=${all[31]}`,
        `/accounts/${ACCOUNT}?block=${all[32]}`,
      ];
      for (const p of busy) {
        const res = await app.request(`${BASE}${p}`);
        expect(res.status, p).toBe(503);
        expect(Number(res.headers.get("retry-after")), p).toBeGreaterThan(0);
        expect(await res.json(), p).toMatchObject({
          ok: false,
          error: "INDEX_UNAVAILABLE",
          detail: { reason: "busy", why: "queue full" },
          retryAfterSec: 2,
        });
      }
      const field = await graphql(
        app,
        `{ rank(board: "takeovers", address: "${ACCOUNT}", block: "${all[33]}") { board } }`,
      );
      const body = (await field.res.json()) as { errors: { extensions: Record<string, unknown> }[] };
      expect(body.errors[0]?.extensions).toMatchObject({ code: "INDEX_UNAVAILABLE", reason: "busy", retryAfterSec: 2 });

      // The MCP tools are the REST routes asked in-process: refused alike.
      for (const [name, args] of [
        ["get_leaderboard", { board: "takeovers", window: "lifetime", block: String(all[34]) }],
        ["get_leaderboard_rank", { board: "takeovers", address: ACCOUNT, block: String(all[35]) }],
        ["get_account_profile", { address: ACCOUNT, block: String(all[36]) }],
      ] as const) {
        const { result } = await mcpCall(app, name, args);
        expect(result?.isError, name).toBe(true);
        expect(JSON.parse(result!.content[0]!.text), name).toMatchObject({
          error: "INDEX_UNAVAILABLE",
          detail: { reason: "busy" },
          retryAfterSec: 2,
        });
      }

      open();
      const answered = await Promise.all(flood);
      expect(answered.map((r) => r.status)).toEqual(Array(9).fill(200));
    } finally {
      open();
      held = null;
    }
    expect(await metrics.render()).toMatch(/^api_index_computations_refused_total\{lane="past",why="queue full"\} 7$/m);
  });
});
