/**
 * The read model (api/read/atBlock.ts) at EVERY block of a small, dense synthetic index, against the indexer's
 * rules: the ve ranking, the stats' totals and each lock touched in or right after the block. Dense (few owners,
 * few live locks) so one lock often has several events in one block and merges burn ids (never minted again) both
 * far from the head and near it, where liveLocks reads each lock's state two different ways: far back, every lock's
 * newest event at or before the block (an ordered DISTINCT ON over lock_event_token_state_idx); near the head, the
 * `lock` table plus a LATERAL newest-row lookup for the locks changed since. The preconditions are asserted, so the
 * test cannot pass on an index that lacks them.
 *
 * On PGlite, and on Postgres when TEST_DATABASE_URL is set. (At this size Postgres plans a sort where at 500,000
 * events it walks lock_event_token_state_idx in order; discouraging sorts per session made every statement take
 * about a second here, so the index-ordered plan is exercised by bench/index-api.ts, not by this test.)
 */
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockVe } from "../../api/math";
import { createLockIndex, RECENT_SHARE } from "../../api/read/atBlock";
import type { LockIndex } from "../../api/read/contract";
import type { LockRow } from "../../indexer/rules";
import { pgliteLockIndex } from "../support/pgliteIndex";
import { createTestDatabase, type TestDatabase } from "../support/ponder";
import { rowsOf } from "../support/rankingRows";
import { generateSyntheticIndex, type SyntheticIndex, stateAt, writeSyntheticIndex } from "../support/syntheticIndex";

const SCHEMA = "every_block";
const OPTIONS = { events: 900, owners: 6, seed: 31, createShare: 0.12 };
const index: SyntheticIndex = (() => {
  const probe = generateSyntheticIndex(OPTIONS);
  const all = [...probe.blockTimes.keys()];
  return generateSyntheticIndex({ ...OPTIONS, snapshotAt: all });
})();
const blocks = [...index.blockTimes.keys()];
const first = index.events[0]!.blockNumber;
/** liveLocks' switch: a block is read from the `lock` table when (head − B) × RECENT_SHARE ≤ B − first. */
const nearHead = (b: bigint) => (index.head.block - b) * BigInt(RECENT_SHARE) <= b - first;
const at = (block: bigint) => (block === index.head.block ? null : { block, time: index.blockTimes.get(block)! });
const live = (state: Map<bigint, LockRow>) => [...state.values()].filter((l) => !l.burned);

describe("the index has what this test is about", () => {
  it("several events of one lock in one block, and merges, both far from the head and near it", () => {
    const perBlockLock = new Map<string, number>();
    for (const e of index.events) {
      const k = `${e.blockNumber}:${e.tokenId}`;
      perBlockLock.set(k, (perBlockLock.get(k) ?? 0) + 1);
    }
    const crowded = [...perBlockLock.entries()].filter(([, n]) => n > 1).map(([k]) => BigInt(k.split(":")[0]!));
    const merges = index.events.filter((e) => e.kind === "merge").map((e) => e.blockNumber);
    for (const [what, at_] of [
      ["one lock, several events in a block", crowded],
      ["merges", merges],
    ] as const) {
      expect(at_.some(nearHead), `${what} near the head`).toBe(true);
      expect(
        at_.some((b) => !nearHead(b)),
        `${what} far from it`,
      ).toBe(true);
    }
    // A burned id is never minted again: creates name each id once.
    const created = index.events.filter((e) => e.kind === "create").map((e) => e.tokenId);
    expect(new Set(created).size).toBe(created.length);
    expect(index.events.some((e) => e.kind === "unlock")).toBe(true);
  });
});

async function expectEveryBlock(reader: LockIndex) {
  const touched = new Map<bigint, Set<bigint>>();
  for (const e of index.events) {
    for (const b of [e.blockNumber, e.blockNumber + 1n]) {
      const ids = touched.get(b) ?? new Set<bigint>();
      ids.add(e.tokenId);
      if (e.fromTokenId !== null) ids.add(e.fromTokenId);
      touched.set(b, ids);
    }
  }
  for (const block of blocks) {
    const t = index.blockTimes.get(block)!;
    const state = stateAt(index, block);
    const sums = new Map<string, { ve: bigint; locked: bigint; locks: number }>();
    for (const l of live(state)) {
      const key = l.owner!.toLowerCase();
      const s = sums.get(key) ?? { ve: 0n, locked: 0n, locks: 0 };
      sums.set(key, { ve: s.ve + lockVe(l, t), locked: s.locked + l.amount, locks: s.locks + 1 });
    }
    const board = [...sums.entries()]
      .filter(([, s]) => s.ve > 0n)
      .map(([address, s]) => ({ address, ...s }))
      .sort((a, b) => (a.ve === b.ve ? (a.address < b.address ? -1 : 1) : a.ve > b.ve ? -1 : 1));
    const read = await reader.holders(at(block));
    expect(read.block).toBe(block);
    expect(rowsOf(read.value), `board at ${block} (${nearHead(block) ? "near the head" : "far"})`).toEqual(board);
    const stats = (await reader.stats(at(block))).value;
    expect([stats.liveLocks, stats.totalLocked], `stats at ${block}`).toEqual([
      live(state).length,
      live(state).reduce((a, l) => a + l.amount, 0n),
    ]);
    for (const id of touched.get(block) ?? []) {
      const row = state.get(id)!;
      const { value } = await reader.lock(id, at(block));
      expect(value, `lock ${id} at ${block}`).toMatchObject({
        owner: row.owner === null ? null : row.owner.toLowerCase(),
        amount: row.amount,
        lockEnd: row.lockEnd,
        autoMax: row.autoMax,
        burned: row.burned,
      });
    }
  }
}

describe("every block, PGlite", () => {
  let reader: LockIndex;
  beforeAll(async () => {
    ({ reader } = await pgliteLockIndex(index, SCHEMA));
  }, 60_000);

  it("the ranking, the totals and every touched lock equal the rules' state", async () => {
    await expectEveryBlock(reader);
  }, 180_000);
});

describe.runIf(process.env.TEST_DATABASE_URL)("every block, Postgres", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let reader: LockIndex;
  beforeAll(async () => {
    database = await createTestDatabase(process.env.TEST_DATABASE_URL);
    const url = (database.forPonder(SCHEMA) as { url: string }).url;
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    await writeSyntheticIndex((text, params) => writer.query(text, params), SCHEMA, index);
    await writer.end();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    reader = createLockIndex({
      db: drizzlePg(pool),
      schema: SCHEMA,
      prepared: (statement) => pool.query(statement),
      wholeIndex: ({ text, values }) => pool.query(text, values),
    });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("the ranking, the totals and every touched lock equal the rules' state", async () => {
    await expectEveryBlock(reader);
  }, 180_000);
});
