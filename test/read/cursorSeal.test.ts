/**
 * A board page's cursor seal describes the rows its ranking was made of (api/read/cursorSeal.ts), also when a reorg
 * lands between the ranking and its seal, before the process has heard of it. On the real app over a synthetic index
 * (in-memory PGlite, finalized 200 blocks below its top), the signal told by the test as the NOTIFY would; the race
 * made deterministic by a hook on the lock index: the chain reorged and re-indexed (a lock event of the head replaced
 * by another: its id and amount) right after the statement that read the ranking's rows, or — a quiet head, whose
 * ranking was carried from the head before's statement and whose cursor carries that basis, read by no statement for
 * the first page — after its first page. Then the cursor's next page asked, before and after the reorg is heard:
 * refused 400 `reason: "reorg"` (it paged on the new branch's ranking, silently, when the seal was read by a statement
 * of its own after the ranking). Also: every ranking statement reads the seal the seal statement reads in the same
 * state.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReadAt, SealAsk } from "../../api/read/contract";
import { metricOf, type ToldApps, toldApps } from "../support/toldApps";

const BASE = "/api/index/v1";
type LockIndex = Parameters<NonNullable<Parameters<typeof toldApps>[1]>>[0];

let apps: ToldApps;
let lockIndex: LockIndex;
/** Run once after the next changed-locks statement at its block returns (before its caller has its rows). */
let afterDelta: { block: bigint; run: () => Promise<unknown> } | undefined;
/** Run once before the next seal statement at its block. */
let beforeSeal: { block: bigint; run: () => Promise<unknown> } | undefined;

beforeAll(async () => {
  apps = await toldApps(29, (index) => {
    lockIndex = index;
    const delta = index.veLockDelta.bind(index);
    index.veLockDelta = async (from, at) => {
      const answer = await delta(from, at);
      const hook = afterDelta;
      if (hook !== undefined && at?.block === hook.block) {
        afterDelta = undefined;
        await hook.run();
      }
      return answer;
    };
    const seal = index.seal!.bind(index);
    index.seal = async (at: ReadAt, ask: SealAsk, signal?: unknown, basis?: bigint) => {
      const hook = beforeSeal;
      if (hook !== undefined && at?.block === hook.block) {
        beforeSeal = undefined;
        await hook.run();
      }
      return seal(at, ask, signal as undefined, basis);
    };
  });
}, 60_000);

afterAll(async () => {
  await apps?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
async function get(path: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await apps.listening.request(`${BASE}${path}`);
  return { status: res.status, body: await res.json() };
}

/** The index's finalized block (Ponder's checkpoint, as the synthetic index wrote it). */
async function finalized(): Promise<bigint> {
  return (await lockIndex.probe(null)).head.finalized;
}

/**
 * A reorg replacing block `block`'s first lock event of a live, unexpired lock by another (its id and its amount, a thousand
 * times larger: its owner goes to the top of the ve board), re-indexed as Ponder would write it.
 */
function reorgAt(block: bigint): () => Promise<unknown> {
  return () =>
    apps.query(
      `UPDATE synthetic.lock_event SET id = id || '-reorged', lock_amount = lock_amount * 1000
        WHERE id = (SELECT id FROM synthetic.lock_event WHERE block_number = $1 AND NOT burned AND lock_amount > 0
                       AND (auto_max OR lock_end > block_time)
                     ORDER BY log_index LIMIT 1)`,
      [block.toString()],
    );
}

/** Blocks holding a lock event of a live, unexpired lock, above the finalized block. */
async function liveEventBlocks(): Promise<bigint[]> {
  const f = await finalized();
  const blocks = apps.index.events
    .filter(
      (e) =>
        e.blockNumber > f + 20n &&
        e.owner !== null &&
        !e.burned &&
        e.lockAmount > 0n &&
        (e.autoMax || e.lockEnd > e.blockTime),
    )
    .map((e) => e.blockNumber);
  return [...new Set(blocks)].sort((a, b) => (a < b ? -1 : 1));
}

/** The reorg heard: the signal tells the head again with the revert before it. */
async function hearReorg(head: bigint): Promise<void> {
  apps.told.tell(head, apps.index.blockTimes.get(head)!, { from: head, finalized: await finalized() });
}

describe("a board ranking's cursor seal across a reorg it did not hear", () => {
  it("a ranking's statement reads the seal the seal statement reads in the same state", async () => {
    const [block] = await liveEventBlocks();
    const f = await finalized();
    const at = { block: block!, time: apps.index.blockTimes.get(block!)! };
    const { seal } = await lockIndex.seal!(at, { from: null });
    expect(seal).not.toBeNull();
    const anchor = { block: f, time: apps.index.blockTimes.get(f)! };
    expect((await lockIndex.veLockDelta(anchor, at)).seal).toEqual(seal);
    expect((await lockIndex.holders(at)).seal).toEqual(seal);
    expect((await lockIndex.board("takeovers", "24h", at)).seal).toEqual(seal);
    expect((await lockIndex.boardDelta("takeovers", "lifetime", anchor, at)).seal).toEqual(seal);
    // At a final block: none.
    expect((await lockIndex.veLockDelta(anchor, anchor)).seal).toBeNull();
  });

  it("the ve board: a reorg right after its changes' statement refuses the cursor's next page", async () => {
    const blocks = await liveEventBlocks();
    const head = blocks.at(-8)!;
    await apps.commit(head);
    afterDelta = { block: head, run: reorgAt(head) };
    const first = await get("/leaderboards/ve?limit=1");
    expect(first.status).toBe(200);
    expect(first.body.blockNumber).toBe(String(head));
    expect(afterDelta, "the ranking's statement ran").toBeUndefined();
    const cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    // The process hears the reorg: what it kept above the finalized block is forgotten, the ranking made again.
    await hearReorg(head);
    const again = await get("/leaderboards/ve?limit=1");
    expect(again.body.blockNumber).toBe(String(head));
    expect(again.body.rows, "the new branch's ranking differs").not.toEqual(first.body.rows);
    const next = await get(`/leaderboards/ve?limit=1&cursor=${cursor}`);
    expect(next.status).toBe(400);
    expect(next.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "cursor", reason: "reorg" } });
    // The new branch's first page pages on.
    expect((await get(`/leaderboards/ve?limit=1&cursor=${again.body.nextCursor}`)).status).toBe(200);
  });

  it("a quiet head's ve board (carried from the head before): no statement for its first page; a reorg refuses the next", async () => {
    const written = new Set(apps.index.events.map((e) => e.blockNumber));
    const blocks = await liveEventBlocks();
    // P with events (its own statement), P + 1 quiet (taken from P's: the same write count).
    const p = blocks.find((b) => b > blocks.at(-8)! && !written.has(b + 1n))!;
    expect(p, "a block with events followed by a quiet one").toBeDefined();
    await apps.commit(p, "5.1");
    expect((await get("/leaderboards/ve?limit=1")).body.blockNumber).toBe(String(p));
    const quiet = p + 1n;
    const sealsRead: bigint[] = [];
    beforeSeal = {
      block: quiet,
      run: async () => {
        sealsRead.push(quiet);
      },
    };
    const reused = () => metricOf(apps.listening, 'api_index_ve_quiet_blocks_total{outcome="reused"}');
    const before = await reused();
    await apps.commit(quiet, "5.1");
    const first = await get("/leaderboards/ve?limit=1");
    expect(first.status).toBe(200);
    expect(first.body.blockNumber).toBe(String(quiet));
    expect(await reused(), "its ranking taken from P's changes").toBe(before + 1);
    expect(sealsRead, "the first page reads no seal: its cursor carries the ranking's basis").toEqual([]);
    const cursor = first.body.nextCursor as string;
    // With the index unchanged, the cursor pages on (its check the one statement a later page reads), and so does
    // the cursor of that page.
    const second = await get(`/leaderboards/ve?limit=1&cursor=${cursor}`);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(sealsRead).toEqual([quiet]);
    expect(second.body.rows).not.toEqual(first.body.rows);
    beforeSeal = undefined;
    const third = await get(`/leaderboards/ve?limit=1&cursor=${second.body.nextCursor}`);
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    const whole = await get("/leaderboards/ve?limit=3");
    expect([...first.body.rows, ...second.body.rows, ...third.body.rows]).toEqual(whole.body.rows);
    // The whole ranking the first page was of (kept); then P's event replaced, not yet heard.
    const old = await get("/leaderboards/ve?limit=1000");
    await reorgAt(p)();
    // Not heard yet: the process still answers the old branch's ranking, but the cursor's next page reads the index.
    const unheard = await get(`/leaderboards/ve?limit=1&cursor=${cursor}`);
    expect(unheard.status).toBe(400);
    expect(unheard.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "cursor", reason: "reorg" } });
    await hearReorg(quiet);
    const again = await get("/leaderboards/ve?limit=1000");
    expect(again.body.blockNumber).toBe(String(quiet));
    expect(again.body.rows, "the new branch's ranking differs").not.toEqual(old.body.rows);
    const next = await get(`/leaderboards/ve?limit=1&cursor=${cursor}`);
    expect(next.status).toBe(400);
    expect(next.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "cursor", reason: "reorg" } });
    // The new branch's first page pages on.
    const fresh = await get("/leaderboards/ve?limit=1");
    expect((await get(`/leaderboards/ve?limit=1&cursor=${fresh.body.nextCursor}`)).status).toBe(200);
  });
});
