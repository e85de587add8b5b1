/**
 * The index's event streams through the served processes, as production runs them: the seeded devnet, ONE indexer
 * (`ponder start --schema s_v1 --views-schema s` on Postgres) and TWO API processes (dist/server/main.js) reading the
 * views. What is proven on the wire: a lock created on the devnet reaches open streams with the block number as id
 * and the REST route's answer at that block as data; a block that does not concern a topic sends nothing for it;
 * Last-Event-ID replays the missed blocks; a 3-block reorg (evm_snapshot / evm_revert) is announced and the answers
 * after it equal the chain; the limits answer 429; and both processes learn of a block from one notification each,
 * over one LISTEN connection per process (pg_stat_activity).
 */
import pg from "pg";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { headBlock, readChainLocks } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";
import { readSse } from "../support/sseReader";

const BASE = "/api/index/v1";
const PER_IP = 3;

let chain: SeededChain;
let topology: LiveTopology;
let databaseUrl: string;
let a: ServiceChild;
let b: ServiceChild;

/** An EventSource as a test reads it (test/support/sseReader.ts), and its response. */
async function openStream(base: ServiceChild, query: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${base.url}${BASE}/stream?${query}`, { headers, signal: controller.signal });
  return { res, ...readSse(res), close: () => controller.abort() };
}

async function restAt(base: ServiceChild, path: string, block: string): Promise<unknown> {
  const res = await fetch(`${base.url}${BASE}${path}${path.includes("?") ? "&" : "?"}block=${block}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

/**
 * An event's data equals the REST answer at its block, but for the lag: `indexLagSeconds` describes the moment of each
 * answer (api/index/answer.ts), and the event was made first, so the REST answer's may be a second more.
 */
function expectSameAnswer(eventData: string, rest: unknown): void {
  const { indexLagSeconds: eventLag, ...event } = JSON.parse(eventData) as Record<string, unknown>;
  const { indexLagSeconds: restLag, ...restBlock } = rest as Record<string, unknown>;
  expect(event).toEqual(restBlock);
  expect(Number(restLag) - Number(eventLag)).toBeGreaterThanOrEqual(0);
  expect(Number(restLag) - Number(eventLag)).toBeLessThanOrEqual(1);
}

const create = (who: (typeof DEVNET_ACCOUNTS)["alice"], amount: bigint) => lockViaFurnace(chain, who, amount);

beforeAll(async () => {
  topology = await startLiveTopology({
    apis: 2,
    env: { REDIS_URL: "", LOG_LEVEL: "error", STREAM_MAX_PER_IP: String(PER_IP), INDEXER_POLLING_MS: "200" },
  });
  ({ chain, databaseUrl } = topology);
  [a, b] = topology.apis as [ServiceChild, ServiceChild];
}, 240_000);

afterAll(async () => {
  await topology?.stop();
});

describe("GET /api/index/v1/stream on the API processes", () => {
  it("bad topics and a bad Last-Event-ID are 400 in the envelope before any stream opens", async () => {
    for (const [query, headers] of [
      ["", {}],
      ["lock=abc", {}],
      ["account=0x12", {}],
      ["board=pool", {}],
      ["stats=1", {}],
      ["nope=1", {}],
      ["stats", { "last-event-id": "x1" }],
      ["board=nope", {}],
      ["board=ve:7d", {}],
      ["board=takeovers&window=1h", {}],
      ["board=ve&window=7d", {}],
      ["activity&kind=nope", {}],
      ["stats&kind=create", {}],
    ] as const) {
      const res = await fetch(`${a.url}${BASE}/stream?${query}`, { headers });
      expect(res.status, query).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      expect((await res.json()).error).toBe("BAD_PARAMS");
    }
  });

  it("one LISTEN connection per API process; both learn a block from its one notification", async () => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    // Each process's signal connection is named; it LISTENs from its start (the API is ready before it may be).
    const listeners = async () =>
      (
        await db.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database()",
        )
      ).rows[0].n as number;
    try {
      for (let i = 0; i < 100 && (await listeners()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await listeners()).toBe(2);
      const [sa, sb] = await Promise.all([openStream(a, "stats"), openStream(b, "stats")]);
      const first = await sa.until((e) => e.event === "stats");
      await sb.until((e) => e.event === "stats" && e.id === first.id);
      await create(DEVNET_ACCOUNTS.alice, 1_000n);
      const block = (await headBlock(chain.devnet)).toString();
      const [ea, eb] = await Promise.all([
        sa.until((e) => e.event === "stats" && e.id === block),
        sb.until((e) => e.event === "stats" && e.id === block),
      ]);
      expectSameAnswer(ea.data, await restAt(a, "/stats", block));
      expect(ea.data).toBe(eb.data);
      sa.close();
      sb.close();
      // Streams add no database connection of their own.
      expect(await listeners()).toBe(2);
    } finally {
      await db.end();
    }
    for (const api of [a, b]) {
      const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
      expect(metrics).toMatch(/api_index_signal_listening 1/);
      expect(metrics).toMatch(/api_index_signal_heads_total\{how="notified"\} [1-9]/);
      expect(metrics).toMatch(/api_stream_events_total\{event="stats"\} [1-9]/);
    }
  });

  it("a lock reaches its account's stream at its block, with the REST answer there; other blocks send nothing for it", async () => {
    const carol = getAddress(DEVNET_ACCOUNTS.carol.address);
    const s = await openStream(a, `account=${carol}&stats`);
    const opened = await s.until((e) => e.event === "account");
    // Alice's lock: a stats event, none for carol's account.
    await create(DEVNET_ACCOUNTS.alice, 1_500n);
    const aliceBlock = (await headBlock(chain.devnet)).toString();
    await s.until((e) => e.event === "stats" && e.id === aliceBlock);
    await create(DEVNET_ACCOUNTS.carol, 2_000n);
    const carolBlock = (await headBlock(chain.devnet)).toString();
    const ev = await s.until((e) => e.event === "account" && e.id === carolBlock);
    // Its locks' REST answer at the block, and the block's activity concerning carol (the feed's items of that block).
    const { activity, ...locksAnswer } = JSON.parse(ev.data) as { activity: { kind: string; blockNumber: string }[] };
    expectSameAnswer(JSON.stringify(locksAnswer), await restAt(a, `/accounts/${carol}/locks`, carolBlock));
    const feed = (await restAt(a, `/activity?account=${carol}`, carolBlock)) as { events: { blockNumber: string }[] };
    expect(activity).toEqual(feed.events.filter((e) => e.blockNumber === carolBlock));
    expect(activity.map((e) => e.kind)).toContain("create");
    expect(s.events.filter((e) => e.event === "account").map((e) => e.id)).toEqual([opened.id, carolBlock]);
    // The new lock has its own topic: its answer at the head on open, then its top-up's block.
    const locks = (JSON.parse(ev.data) as { locks: { tokenId: string }[] }).locks;
    const tokenId = locks[locks.length - 1]!.tokenId;
    const l = await openStream(b, `lock=${tokenId}`);
    const at = await l.until((e) => e.event === "lock");
    expectSameAnswer(at.data, await restAt(b, `/locks/${tokenId}`, at.id!));
    s.close();
    l.close();
  });

  it("Last-Event-ID replays the blocks missed, in order, then continues", async () => {
    const from = await headBlock(chain.devnet);
    await create(DEVNET_ACCOUNTS.bob, 1_100n);
    const b1 = (await headBlock(chain.devnet)).toString();
    await chain.devnet.clients.testClient.mine({ blocks: 2 });
    await create(DEVNET_ACCOUNTS.bob, 1_200n);
    const b2 = (await headBlock(chain.devnet)).toString();
    // Wait until the index has it: the REST answer at b2 exists.
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${a.url}${BASE}/stats?block=${b2}`);
      if (res.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const s = await openStream(a, "stats", { "last-event-id": from.toString() });
    await s.until((e) => e.id === b2);
    await new Promise((r) => setTimeout(r, 500));
    expect(s.events.map((e) => [e.event, e.id])).toEqual([
      ["stats", b1],
      ["stats", b2],
    ]);
    expectSameAnswer(s.events[0]!.data, await restAt(a, "/stats", b1));
    s.close();
  });

  it("a block without lock events carries the write count of the one before, a lock's block its events; the ve board takes its changes, checked", async () => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const told = new Map<bigint, string | undefined>();
    const carriedBy = new Map<bigint, string | undefined>();
    db.on("notification", (n) => {
      const [checkpoint = "", writes, carried] = (n.payload ?? "").split(" ");
      told.set(BigInt(checkpoint.slice(26, 42)), writes);
      carriedBy.set(BigInt(checkpoint.slice(26, 42)), carried);
    });
    await db.query("LISTEN s_block");
    const quiet = async (outcome: string) => {
      const text = await (await fetch(`${a.url}/api/metrics`)).text();
      return Number(
        new RegExp(`api_index_ve_quiet_blocks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    };
    /** The ve board's head page on `a` once the index is at `block` (read at the head, so each head is ranked). */
    const boardAt = async (block: bigint, heard = true) => {
      for (let i = 0; i < 200; i++) {
        const res = await fetch(`${a.url}${BASE}/leaderboards/ve?limit=5`);
        const body = (await res.json()) as { blockNumber: string };
        if (BigInt(body.blockNumber) >= block && (!heard || told.has(block))) return body;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the board never reached ${block}`);
    };
    try {
      await boardAt(await headBlock(chain.devnet), false);
      const reused = await quiet("reused");
      const carried = await quiet("carried");
      const empty: bigint[] = [];
      for (let i = 0; i < 3; i++) {
        await chain.devnet.clients.testClient.mine({ blocks: 1 });
        const block = await headBlock(chain.devnet);
        empty.push(block);
        await boardAt(block);
      }
      await create(DEVNET_ACCOUNTS.bob, 1_200n);
      const written = await headBlock(chain.devnet);
      const withLock = await boardAt(written);
      // Ponder's own commits: each empty block's notification carries the count of the one before, the block with
      // the lock another.
      const counts = empty.map((b) => told.get(b));
      expect(counts[0]).toMatch(/^\d+\.\d+$/);
      expect(new Set(counts).size).toBe(1);
      expect(told.get(written)).toMatch(/^\d+\.\d+$/);
      expect(told.get(written)).not.toBe(counts[0]);
      // The lock's block carries its lock events (the block before it the checkpoint it replaced), the empty ones none.
      const rewrites = carriedBy.get(empty[2]!)?.split(":")[0];
      expect(carriedBy.get(empty[2]!)).toBe(`${rewrites}:${empty[1]}:`);
      expect(carriedBy.get(written)).toMatch(new RegExp(`^${rewrites}:${empty[2]}:\\d+,0x[0-9a-f]{40},\\d+,`));
      // The empty heads after the first took their changes from the head before; the statement after each agreed.
      expect(await quiet("reused")).toBeGreaterThanOrEqual(reused + 2);
      for (let i = 0; i < 100 && (await quiet("confirmed")) < reused + 2; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await quiet("confirmed")).toBeGreaterThanOrEqual(reused + 2);
      // The lock's block: its changes the head before's with its events applied, and the statement after agreed.
      expect(await quiet("carried")).toBeGreaterThanOrEqual(carried + 1);
      for (let i = 0; i < 100 && (await quiet("confirmed")) < reused + 3; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(await quiet("confirmed")).toBeGreaterThanOrEqual(reused + 3);
      expect(await quiet("differed")).toBe(0);
      // And the board at the lock's block is the other process's at that block (read by its own statement there).
      expect((await restAt(b, "/leaderboards/ve?limit=5", written.toString())) as object).toMatchObject({
        rows: (withLock as unknown as { rows: unknown[] }).rows,
      });
    } finally {
      await db.end();
    }
  }, 90_000);

  it("a 3-block reorg is announced, then the answers at the new head equal the chain", async () => {
    const { testClient } = chain.devnet.clients;
    const alice = getAddress(DEVNET_ACCOUNTS.alice.address);
    const s = await openStream(a, `account=${alice}`);
    await s.until((e) => e.event === "account");
    // Ponder's revert, as the API processes hear it: the journal tables' triggers they installed, on their channel.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const reverts: string[] = [];
    db.on("notification", (n) => reverts.push(n.payload ?? ""));
    await db.query("LISTEN s_revert");
    const { rows } = await db.query(
      `SELECT count(*)::int AS tables, count(t.tgname)::int AS triggers FROM pg_tables p
        LEFT JOIN pg_trigger t ON t.tgrelid = format('%I.%I', p.schemaname, p.tablename)::regclass
         AND t.tgname = 's_revert_notify'
        WHERE p.schemaname = 's_v1' AND p.tablename LIKE '\\_reorg\\_\\_%'`,
    );
    expect(rows[0].tables).toBeGreaterThan(0);
    expect(rows[0].triggers).toBe(rows[0].tables);
    // The fork is a block without rows of ours: Ponder, meeting the reverted chain at the fork itself, may revert from
    // the fork and index it again, which orphans nothing of ours.
    await testClient.mine({ blocks: 1 });
    const snapshot = await testClient.snapshot();
    await create(DEVNET_ACCOUNTS.alice, 3_000n);
    const orphan = await headBlock(chain.devnet);
    await testClient.mine({ blocks: 2 });
    await s.until((e) => e.event === "account" && e.id === orphan.toString());
    // Answers kept per block number (the stats, the ve board) at the block the reorg will replace.
    const orphanStats = (await restAt(a, "/stats", orphan.toString())) as { totalLockedWei: string };
    await restAt(a, "/leaderboards/ve", orphan.toString());
    await testClient.revert({ id: snapshot });
    // The new branch outgrows the old head: Ponder commits it in one step past the old head, or the short branch
    // first (whichever it meets); the revert is heard either way, not only as the index's head going back.
    await create(DEVNET_ACCOUNTS.carol, 1_700n);
    await testClient.mine({ blocks: 4 });
    const tip = await headBlock(chain.devnet);
    const reorg = await s.until((e) => e.event === "reorg", 60_000);
    const body = JSON.parse(reorg.data) as { orphaned: { from: string; to: string }; head: string };
    // From the first orphaned block with rows of ours, to the last head the stream had.
    expect(body.orphaned.from).toBe(orphan.toString());
    expect(BigInt(body.orphaned.to)).toBeGreaterThanOrEqual(orphan);
    // The new branch's blocks up to the new head follow the announcement (events before it are the orphaned
    // branch's), replayed from the block after its id, the finalized block the revert named; at the head every
    // topic's answer.
    expect(BigInt(reorg.id!)).toBeLessThan(orphan);
    const after = await s.until(
      (e) => e.event === "account" && s.events.indexOf(e) > s.events.indexOf(reorg) && e.id === body.head,
    );
    const streamed = (JSON.parse(after.data) as { locks: { tokenId: string }[] }).locks.map((l) => BigInt(l.tokenId));
    const onChain = (await readChainLocks(chain.devnet, BigInt(after.id!))).locks
      .filter((l) => l.owner === (alice as Address) && l.amount > 0n)
      .map((l) => l.tokenId)
      .sort((x, y) => (x < y ? -1 : 1));
    expect(streamed).toEqual(onChain);
    // The index has the whole new branch (a reorg landing below the old head reads the orphan's height again).
    for (let i = 0; i < 100 && (await fetch(`${a.url}${BASE}/stats?block=${tip}`)).status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    // The block of that number on the new branch: its stats and board are the new branch's, not the ones kept for
    // the orphaned block (alice's 3,000 there, carol's 1,700 here).
    const replaced = await readChainLocks(chain.devnet, orphan);
    const stats = (await restAt(a, "/stats", orphan.toString())) as { totalLockedWei: string; liveLocks: number };
    expect(stats.totalLockedWei).not.toBe(orphanStats.totalLockedWei);
    expect(stats).toMatchObject({
      totalLockedWei: String(replaced.totalLocked),
      liveLocks: replaced.locks.filter((l) => l.owner !== null).length,
    });
    const board = (await restAt(a, "/leaderboards/ve?limit=100", orphan.toString())) as { rows: { address: string }[] };
    const carol = getAddress(DEVNET_ACCOUNTS.carol.address);
    expect(board.rows.map((r) => getAddress(r.address))).toContain(carol);
    // One reorg, one announcement; the revert was heard (its first orphaned block is the orphan), not only the
    // head going back.
    expect(s.events.filter((e) => e.event === "reorg")).toHaveLength(1);
    expect(reverts.length).toBeGreaterThan(0);
    expect(new Set(reverts.map((r) => BigInt(r.slice(26, 42))))).toEqual(new Set([orphan]));
    await db.end();
    s.close();
  }, 90_000);

  it("streams per client address are bounded: the next is 429 RATE_LIMITED with Retry-After", async () => {
    const open = await Promise.all(Array.from({ length: PER_IP }, () => openStream(b, "stats")));
    for (const s of open) expect(s.res.status).toBe(200);
    // What a browser's EventSource needs from another origin, and the house's request id and rate-limit headers.
    const h = open[0]!.res.headers;
    expect(h.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(h.get("access-control-allow-origin")).toBe("*");
    expect(h.get("x-request-id")).toMatch(/.+/);
    expect(h.get("ratelimit-policy")).toMatch(/index/);
    const over = await fetch(`${b.url}${BASE}/stream?stats`);
    expect(over.status).toBe(429);
    expect((await over.json()).error).toBe("RATE_LIMITED");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    open[0]!.close();
    // The closed one frees its place.
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const again = await openStream(b, "stats");
      status = again.res.status;
      again.close();
    }
    expect(status).toBe(200);
    for (const s of open) s.close();
  });

  it("a duration board and the activity feed send in a block with an event of their kinds, and only then", async () => {
    const furnace = await openStream(a, "board=furnace-claim&window=24h&activity&kind=furnace-enter");
    const takeovers = await openStream(a, "board=takeovers:24h&activity=takeover");
    for (const s of [furnace, takeovers]) {
      expect(s.res.status).toBe(200);
      await s.until((e) => e.event === "board");
      await s.until((e) => e.event === "activity");
    }
    // A lock entered through the Furnace: a furnace-enter event (and a lock's create), no takeover.
    await create(DEVNET_ACCOUNTS.bob, 1_300n);
    const block = (await headBlock(chain.devnet)).toString();
    const board = await furnace.until((e) => e.event === "board" && e.id === block);
    const feed = await furnace.until((e) => e.event === "activity" && e.id === block);
    expectSameAnswer(board.data, await restAt(a, "/leaderboards/furnace-claim?window=24h", block));
    const items = JSON.parse(feed.data) as { events: { kind: string; blockNumber: string }[] };
    expect(items).toEqual(await restAt(a, "/activity?kind=furnace-enter", block));
    expect(items.events[0]).toMatchObject({ kind: "furnace-enter", blockNumber: block });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(takeovers.events.filter((e) => e.id === block)).toEqual([]);
    furnace.close();
    takeovers.close();
  });

  it("a windowed board sends when an entry leaves its window, at the first block past it; a longer window does not", async () => {
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { publicClient, testClient } = chain.devnet.clients;
    const now = (await publicClient.getBlock()).timestamp;
    // The oldest entry still inside the 24 h window (the seed's "day" phase) of a board that sums or counts (a
    // maximum may not move when one entry leaves): the window [T − 24 h, T] includes its start, so the entry is
    // still in at its time + 24 h and leaves at the first block past it.
    const { rows } = await db.query(
      `SELECT board, account, block_time::text AS t FROM s.board_entry
        WHERE block_time >= $1 AND board <> 'longest-reign' ORDER BY block_time LIMIT 1`,
      [String(now - 86_400n)],
    );
    await db.end();
    const entry = rows[0] as { board: string; account: string; t: string };
    expect(entry, "the seed puts board events inside the last 24 h").toBeDefined();
    const s = await openStream(a, `board=${entry.board}:24h&board=${entry.board}:7d`);
    await s.until((e) => e.event === "board" && JSON.parse(e.data).window === "7d");
    const opened = s.events.length;
    // One block exactly 24 h after the entry (still in: nothing for either window), then the block it leaves at.
    await testClient.setNextBlockTimestamp({ timestamp: BigInt(entry.t) + 86_400n });
    await testClient.mine({ blocks: 1 });
    const before = (await headBlock(chain.devnet)).toString();
    await testClient.setNextBlockTimestamp({ timestamp: BigInt(entry.t) + 86_400n + 1n });
    await testClient.mine({ blocks: 1 });
    const out = (await headBlock(chain.devnet)).toString();
    const ev = await s.until((e) => e.event === "board" && e.id === out);
    expect(JSON.parse(ev.data).window).toBe("24h");
    expectSameAnswer(ev.data, await restAt(a, `/leaderboards/${entry.board}?window=24h`, out));
    // The entry's account weighs less on the board (or is off it) once its entry is out.
    type Board = { rows: { address: string; value: string }[] };
    const figureOf = (b: Board) => BigInt(b.rows.find((r) => r.address.toLowerCase() === entry.account)?.value ?? 0);
    const inside = (await restAt(a, `/leaderboards/${entry.board}?window=24h`, before)) as Board;
    expect(figureOf(JSON.parse(ev.data) as Board)).toBeLessThan(figureOf(inside));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(s.events.slice(opened).map((e) => [e.id, JSON.parse(e.data).window])).toEqual([[out, "24h"]]);
    s.close();
  }, 60_000);

  it("the hub's own answers are charged to no client: a tight compute budget loses no block", async () => {
    // RATE_LIMIT_MAX 20: two computed answers (stats, ve board; 9 each) would spend it in one block had the hub's
    // in-process requests shared the "unknown" address's budget, as they did.
    const tight = await topology.spawnApi({ RATE_LIMIT_MAX: "20" });
    try {
      await tight.waitFor200("/ready", 60_000);
      const s = await openStream(tight, "stats&board=ve");
      await s.until((e) => e.event === "board");
      const blocks: string[] = [];
      for (let i = 0; i < 4; i++) {
        await create(DEVNET_ACCOUNTS.dave, 1_000n);
        blocks.push((await headBlock(chain.devnet)).toString());
      }
      for (const block of blocks) {
        await s.until((e) => e.event === "stats" && e.id === block);
        await s.until((e) => e.event === "board" && e.id === block);
      }
      s.close();
    } finally {
      await tight.stop();
    }
  }, 90_000);
});
