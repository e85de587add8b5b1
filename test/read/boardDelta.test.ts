/**
 * Deriving a duration board (api/read/durationBoards.ts, issue 31 item 6): a ranking made from an anchor's by the
 * accounts that changed between the two blocks (api/read/atBlock.ts boardDelta) must be the ranking computed whole at
 * the block, for every board fold (sum, count, max), every window, forward and backward, across blocks that share a
 * second and window starts that fall inside an hour. On PGlite, over a small synthetic board index written to the
 * tables the indexer maintains (board_entry, board_hour, board_total) — and the whole rankings are checked against a
 * ranking computed here from the entries by the rule of protocol.md §9, so the test does not compare the code with itself.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLockIndex } from "../../api/read/atBlock";
import {
  BOARD_WINDOWS,
  type BoardIndex,
  type BoardValue,
  type BoardWindow,
  type DurationBoard,
  type LockIndex,
  NOT_RANKED,
} from "../../api/read/contract";
import { applyChanges, DurationBoards, derivedOf, firstAfterValue, rankedOf } from "../../api/read/durationBoards";
import { BOARD_FOLD } from "../../indexer/boards";
import { aggregateBoardEntries } from "../support/boardAggregates";
import { checkpointOf, createSyntheticTables } from "../support/syntheticIndex";

const SCHEMA = "board_delta";
const HEAD = 240n;
const FINALIZED = 200n;
const T0 = 1_800_000_000n;
/** Two blocks per timestamp, 9 h 0 min 11 s apart: window starts land inside hours, blocks share seconds. */
const timeOf = (b: bigint) => T0 + (b / 2n) * 32_411n;
const ACCOUNTS = Array.from({ length: 9 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
const BOARDS: DurationBoard[] = ["takeover-eth", "takeovers", "longest-reign"]; // sum, count, max
const WINDOWS = Object.keys(BOARD_WINDOWS) as BoardWindow[];

type Entry = { board: DurationBoard; account: string; value: bigint; block: bigint; time: bigint };
const entries: Entry[] = (() => {
  let seed = 7;
  const next = () => {
    seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
    return seed >>> 8;
  };
  const out: Entry[] = [];
  for (let b = 1n; b <= HEAD; b++) {
    for (let k = next() % 4; k > 0; k--) {
      const board = BOARDS[next() % BOARDS.length] as DurationBoard;
      const account = ACCOUNTS[next() % ACCOUNTS.length] as string;
      // One entry in eight is of value 0 (a reign of 0 seconds): its account is ranked, at 0 where it has no other.
      const value = next() % 8 === 0 ? 0n : BigInt(1 + (next() % 50));
      out.push({ board, account, value, block: b, time: timeOf(b) });
    }
  }
  return out;
})();

/**
 * protocol.md §9: events of blocks ≤ B with time ≥ T − window (the window includes its start, as the reference's board
 * SQL: `evt_block_time >= now() − w`), folded per account; value desc, address asc.
 */
function ruled(
  list: Entry[],
  time: (b: bigint) => bigint,
  board: DurationBoard,
  window: BoardWindow,
  block: bigint,
): BoardValue[] {
  const span = BOARD_WINDOWS[window];
  const t = time(block);
  const by = new Map<string, bigint>();
  for (const e of list) {
    if (e.board !== board || e.block > block || (span !== null && e.time < t - span)) continue;
    const v = by.get(e.account);
    const fold = BOARD_FOLD[board];
    by.set(
      e.account,
      fold === "max" ? (v === undefined || e.value > v ? e.value : v) : (v ?? 0n) + (fold === "count" ? 1n : e.value),
    );
  }
  // Every account with an entry is ranked, at 0 too (the reference's SQL filters no value on these boards).
  return [...by.entries()]
    .map(([address, value]) => ({ address: address as BoardValue["address"], value }))
    .sort((a, b) =>
      a.value !== b.value ? (a.value > b.value ? -1 : 1) : a.address < b.address ? -1 : a.address > b.address ? 1 : 0,
    );
}

const truth = (board: DurationBoard, window: BoardWindow, block: bigint) =>
  ruled(entries, timeOf, board, window, block);

describe("applyChanges", () => {
  it("equals sorting the changed set anew, with many equal values, accounts leaving, arriving and unchanged", () => {
    let seed = 99;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0;
      return (seed >>> 8) % n;
    };
    const order = (a: BoardValue, b: BoardValue) =>
      a.value !== b.value ? (a.value > b.value ? -1 : 1) : a.address < b.address ? -1 : a.address > b.address ? 1 : 0;
    const addr = (i: number) => `0x${i.toString(16).padStart(40, "0")}` as BoardValue["address"];
    for (let round = 0; round < 300; round++) {
      const values = new Map<string, bigint>();
      for (let i = 0; i < 1 + rnd(60); i++) values.set(addr(rnd(80)), BigInt(rnd(6)));
      const rows = [...values].map(([address, value]) => ({ address, value }) as BoardValue).sort(order);
      const changes: BoardValue[] = [];
      const seen = new Set<string>();
      for (let k = rnd(12); k > 0; k--) {
        const a = addr(rnd(80));
        if (seen.has(a)) continue;
        seen.add(a);
        // NOT_RANKED: off the board; 0: ranked at 0; the same value: unchanged
        changes.push({ address: a, value: BigInt(rnd(7)) - 1n });
      }
      const after = new Map(values);
      for (const c of changes) after.set(c.address, c.value);
      const expected = [...after]
        .filter(([, v]) => v !== NOT_RANKED)
        .map(([address, value]) => ({ address, value }) as BoardValue)
        .sort(order);
      const index = new Map(rows.map((r, i) => [r.address as string, i]));
      expect(
        applyChanges(rows, changes, (a) => index.get(a)),
        `round ${round}`,
      ).toEqual(expected);
      // The derived ranking's view of the anchor: rows, pages, keyset starts and positions as of the sorted list.
      const view = derivedOf({ block: 2n, time: 2n }, rankedOf({ block: 1n, time: 1n }, rows), changes);
      expect(view.rows.length).toBe(expected.length);
      expect(view.rows.slice(0, view.rows.length), `round ${round}`).toEqual(expected);
      expect(view.rows.slice(2, 5)).toEqual(expected.slice(2, 5));
      expect(view.rows.get(expected.length)).toBeUndefined();
      for (const [i, r] of expected.entries()) {
        expect(view.rows.get(i)).toEqual(r);
        expect(view.position.get(r.address)).toBe(i);
        expect(view.rows.after(r)).toBe(i + 1);
      }
      for (let k = 0; k < 20; k++) {
        const key = { value: BigInt(rnd(7)), address: addr(rnd(80)) };
        expect(view.rows.after(key), `after ${key.value} ${key.address}`).toBe(firstAfterValue(expected, key));
        if (!expected.some((r) => r.address === key.address)) expect(view.position.get(key.address)).toBeUndefined();
      }
    }
  });
});

describe("a derived duration board equals the board computed whole", () => {
  const client = new PGlite();
  let index: LockIndex & BoardIndex;

  beforeAll(async () => {
    const exec = (text: string, params?: unknown[]) => client.query(text, params);
    await createSyntheticTables(exec, SCHEMA);
    for (const [i, e] of entries.entries()) {
      await exec(
        "INSERT INTO board_entry (id, board, account, value, block_number, block_time) VALUES ($1, $2, $3, $4, $5, $6)",
        [`e${i}`, e.board, e.account, String(e.value), String(e.block), String(e.time)],
      );
    }
    await aggregateBoardEntries((text) => exec(text));
    await exec(`INSERT INTO "_ponder_checkpoint" VALUES ('base', 8453, $1, $1, $2)`, [
      checkpointOf(8453, HEAD, timeOf(HEAD)),
      checkpointOf(8453, FINALIZED, timeOf(FINALIZED)),
    ]);
    index = createLockIndex({
      db: drizzle(client),
      schema: SCHEMA,
      prepared: ({ text, values }) => client.query(text, values) as Promise<{ rows: Record<string, unknown>[] }>,
    }) as LockIndex & BoardIndex;
  }, 60_000);
  afterAll(() => client.close());

  const at = (b: bigint) => ({ block: b, time: timeOf(b) });

  it("the data has what the test is about: blocks sharing a second, entries leaving each window between blocks", () => {
    expect(timeOf(10n)).toBe(timeOf(11n));
    for (const w of ["24h", "7d", "30d"] as const) {
      const span = BOARD_WINDOWS[w];
      const leaving = entries.filter((e) => e.time >= timeOf(150n) - span && e.time < timeOf(170n) - span);
      expect(leaving.length, w).toBeGreaterThan(0);
    }
    // Accounts ranked at 0 (only entries of 0 in the window) on the sum and max boards (a count is at least 1).
    for (const board of BOARDS.filter((b) => BOARD_FOLD[b] !== "count")) {
      const zeros = Array.from({ length: Number(HEAD) }, (_, i) => BigInt(i + 1)).filter((b) =>
        truth(board, "24h", b).some((r) => r.value === 0n),
      );
      expect(zeros.length, board).toBeGreaterThan(3);
    }
  });

  it("whole rankings follow the rule (the reference the derivations are held to)", async () => {
    for (const board of BOARDS) {
      for (const window of WINDOWS) {
        for (const b of [HEAD, FINALIZED, 123n]) {
          expect((await index.board(board, window, at(b))).value, `${board} ${window} @${b}`).toEqual(
            truth(board, window, b),
          );
        }
      }
    }
  });

  it("from an anchor to blocks after and before it, near and far, every board and window", async () => {
    const pairs: [bigint, bigint][] = [
      [FINALIZED, FINALIZED + 1n],
      [FINALIZED, HEAD],
      [FINALIZED, FINALIZED - 1n],
      [FINALIZED, 150n],
      [10n, 11n], // the same second
      [11n, 10n],
      [1n, HEAD],
      [HEAD, 1n],
      [170n, 170n],
    ];
    let changes = 0;
    for (const board of BOARDS) {
      for (const window of WINDOWS) {
        for (const [from, to] of pairs) {
          const base = truth(board, window, from);
          const delta = await index.boardDelta(board, window, at(from), at(to));
          expect(delta.block).toBe(to);
          expect(delta.time).toBe(timeOf(to));
          changes += delta.value.length;
          const indexOf = (address: string) => {
            const i = base.findIndex((r) => r.address === address);
            return i < 0 ? undefined : i;
          };
          expect(applyChanges(base, delta.value, indexOf), `${board} ${window} ${from}→${to}`).toEqual(
            truth(board, window, to),
          );
        }
      }
    }
    expect(changes).toBeGreaterThan(100);
  });

  it("a delta names only the accounts that can have changed (not the board)", async () => {
    // One block on: its entries' accounts and the 24 h window's exits, far fewer than the accounts on the board.
    const delta = await index.boardDelta("takeover-eth", "24h", at(FINALIZED), at(FINALIZED + 1n));
    const moved = new Set(
      entries
        .filter(
          (e) =>
            e.board === "takeover-eth" &&
            (e.block === FINALIZED + 1n ||
              (e.time >= timeOf(FINALIZED) - 86_400n && e.time < timeOf(FINALIZED + 1n) - 86_400n)),
        )
        .map((e) => e.account),
    );
    expect(new Set(delta.value.map((r) => r.address))).toEqual(moved);
  });

  it("DurationBoards: one whole computation for the anchor, then every head derived, each equal to the rule", async () => {
    let whole = 0;
    let derived = 0;
    const boards = new DurationBoards({
      load: (board, window, a) => {
        whole++;
        return index.board(board, window, a);
      },
      delta: (board, window, from, a) => {
        derived++;
        return index.boardDelta(board, window, from, a);
      },
      advance: 8,
    });
    const memo = boards.memo("takeover-eth", "7d");
    // The first read (a block above the finalized one) is computed whole, the finalized block's beside it (the anchor).
    expect((await memo.get(at(FINALIZED + 5n), "head")).rows.slice(0, Infinity)).toEqual(
      truth("takeover-eth", "7d", FINALIZED + 5n),
    );
    await expect.poll(() => boards.anchorOf("takeover-eth", "7d")).toBe(FINALIZED);
    expect(whole).toBe(2);
    let unranked = 0;
    for (let b = FINALIZED + 6n; b <= HEAD; b++) {
      const ranked = await memo.get(at(b), "head");
      const rows = ranked.rows.slice(0, ranked.rows.length);
      expect(rows, `@${b}`).toEqual(truth("takeover-eth", "7d", b));
      // Rank lookups are positions in the rows; keyset pages start after their key.
      for (const [i, r] of rows.entries()) {
        expect(ranked.position.get(r.address)).toBe(i);
        expect(ranked.rows.get(i)).toEqual(r);
        expect(ranked.rows.after(r)).toBe(i + 1);
      }
      const shown = new Set(rows.map((r) => r.address));
      for (const a of ACCOUNTS)
        if (!shown.has(a as BoardValue["address"])) expect(ranked.position.get(a)).toBeUndefined();
      unranked += ACCOUNTS.length - shown.size;
    }
    expect(unranked).toBeGreaterThan(0);
    expect(whole).toBe(2);
    expect(derived).toBe(Number(HEAD - FINALIZED - 5n));
    // Another board's first read: the finalized block is known now, so its anchor is computed there (whole, for this
    // reader) and the block asked for derived from it — the anchor set at once, not in the background.
    const wholeBefore = whole;
    const derivedBefore = derived;
    expect((await boards.memo("takeovers", "24h").get(at(HEAD), "head")).rows.slice(0, Infinity)).toEqual(
      truth("takeovers", "24h", HEAD),
    );
    expect(boards.anchorOf("takeovers", "24h")).toBe(FINALIZED);
    expect([whole - wholeBefore, derived - derivedBefore]).toEqual([1, 1]);
    // A past block near the anchor is derived too (backward); one farther than the span is computed whole.
    expect((await memo.get(at(190n), "past")).rows.slice(0, Infinity)).toEqual(truth("takeover-eth", "7d", 190n));
    expect(whole).toBe(3);
    const far = new DurationBoards({
      load: (board, window, a) => {
        whole++;
        return index.board(board, window, a);
      },
      delta: (board, window, from, a) => index.boardDelta(board, window, from, a),
      span: 16,
    });
    const farMemo = far.memo("takeover-eth", "7d");
    await farMemo.get(at(FINALIZED), "head"); // a finalized block's ranking is its own anchor
    expect(far.anchorOf("takeover-eth", "7d")).toBe(FINALIZED);
    const before = whole;
    expect((await farMemo.get(at(100n), "past")).rows.slice(0, Infinity)).toEqual(truth("takeover-eth", "7d", 100n));
    expect(whole).toBe(before + 1);
  });
});

describe("a window includes its start: an entry exactly at T − window counts at T and leaves at the first block past it", () => {
  // The reference's board SQL (claimrush/claimrush analytics/dune/leaderboards/*_24h.sql) keeps `evt_block_time >=
  // now() − w`; on Base the block exactly 24 h / 7 d / 30 d back always exists. T0 is an hour start: blocks 1 and 4
  // put a window start inside an hour, blocks 2 and 6 on an hour start (its whole hour counted from board_hour).
  const DAY = 86_400n;
  const TIMES = [
    0n, // (no block 0)
    T0 + 1_800n, // 1: A
    T0 + 7_200n, // 2: B, at an hour start
    T0 + 7_300n, // 3: C, in B's hour
    T0 + 1_800n + DAY, // 4: A exactly at the 24 h window's start
    T0 + 1_802n + DAY, // 5: A out
    T0 + 7_200n + DAY, // 6: B exactly at the start, an hour start
    T0 + 7_201n + DAY, // 7: B out, C in
    T0 + 7_300n + DAY, // 8: C exactly at the start
    T0 + 7_302n + DAY, // 9: C out
    T0 + 1_800n + 7n * DAY, // 10: A at the 7 d window's start
    T0 + 1_801n + 7n * DAY, // 11: A out of 7 d
    T0 + 7_200n + 30n * DAY, // 12: B at the 30 d window's start
    T0 + 7_202n + 30n * DAY, // 13: B out of 30 d
  ];
  const LAST = BigInt(TIMES.length - 1);
  const time = (b: bigint) => TIMES[Number(b)] as bigint;
  const [A, B, C] = ACCOUNTS as [string, string, string];
  const edge: Entry[] = [
    { board: "takeovers", account: A, value: 1n, block: 1n, time: time(1n) },
    { board: "takeover-eth", account: A, value: 5n, block: 1n, time: time(1n) },
    { board: "longest-reign", account: A, value: 90n, block: 1n, time: time(1n) },
    { board: "takeovers", account: B, value: 1n, block: 2n, time: time(2n) },
    { board: "takeover-eth", account: B, value: 7n, block: 2n, time: time(2n) },
    { board: "longest-reign", account: B, value: 40n, block: 2n, time: time(2n) },
    { board: "takeovers", account: C, value: 1n, block: 3n, time: time(3n) },
    { board: "longest-reign", account: A, value: 30n, block: 3n, time: time(3n) },
  ];
  const client = new PGlite();
  let index: LockIndex & BoardIndex;
  const at = (b: bigint) => ({ block: b, time: time(b) });
  const accountsOn = async (board: DurationBoard, window: BoardWindow, b: bigint) =>
    (await index.board(board, window, at(b))).value.map((r) => r.address);

  beforeAll(async () => {
    const exec = (text: string, params?: unknown[]) => client.query(text, params);
    await createSyntheticTables(exec, "board_edge");
    for (const [i, e] of edge.entries()) {
      await exec(
        "INSERT INTO board_entry (id, board, account, value, block_number, block_time) VALUES ($1, $2, $3, $4, $5, $6)",
        [`x${i}`, e.board, e.account, String(e.value), String(e.block), String(e.time)],
      );
    }
    await aggregateBoardEntries((text) => exec(text));
    await exec(`INSERT INTO "_ponder_checkpoint" VALUES ('base', 8453, $1, $1, $2)`, [
      checkpointOf(8453, LAST, time(LAST)),
      checkpointOf(8453, LAST, time(LAST)),
    ]);
    index = createLockIndex({
      db: drizzle(client),
      schema: "board_edge",
      prepared: ({ text, values }) => client.query(text, values) as Promise<{ rows: Record<string, unknown>[] }>,
    }) as LockIndex & BoardIndex;
  }, 60_000);
  afterAll(() => client.close());

  it("counts the entry at the start's second, inside an hour and at an hour start, and not a second later", async () => {
    expect(await accountsOn("takeovers", "24h", 4n)).toEqual([A, B, C]);
    expect(await accountsOn("takeovers", "24h", 5n)).toEqual([B, C]);
    expect(await accountsOn("takeovers", "24h", 6n)).toEqual([B, C]);
    expect(await accountsOn("takeovers", "24h", 7n)).toEqual([C]);
    expect(await accountsOn("takeovers", "24h", 8n)).toEqual([C]);
    expect(await accountsOn("takeovers", "24h", 9n)).toEqual([]);
    expect(await accountsOn("takeover-eth", "7d", 10n)).toEqual([B, A]); // B's 7 ahead of A's 5
    expect(await accountsOn("takeover-eth", "7d", 11n)).toEqual([B]);
    expect(await accountsOn("takeover-eth", "30d", 12n)).toEqual([B]);
    expect(await accountsOn("takeover-eth", "30d", 13n)).toEqual([]);
    // A maximum falls back to the entry still in when the larger one leaves.
    expect((await index.board("longest-reign", "24h", at(4n))).value).toEqual([
      { address: A, value: 90n },
      { address: B, value: 40n },
    ]);
    expect((await index.board("longest-reign", "24h", at(5n))).value).toEqual([
      { address: B, value: 40n },
      { address: A, value: 30n },
    ]);
  });

  it("whole rankings and every derivation between two blocks follow the rule, every board and window", async () => {
    for (const board of BOARDS) {
      for (const window of WINDOWS) {
        for (let from = 1n; from <= LAST; from++) {
          const base = ruled(edge, time, board, window, from);
          expect((await index.board(board, window, at(from))).value, `${board} ${window} @${from}`).toEqual(base);
          for (let to = 1n; to <= LAST; to++) {
            const delta = await index.boardDelta(board, window, at(from), at(to));
            const indexOf = (address: string) => {
              const i = base.findIndex((r) => r.address === address);
              return i < 0 ? undefined : i;
            };
            expect(applyChanges(base, delta.value, indexOf), `${board} ${window} ${from}→${to}`).toEqual(
              ruled(edge, time, board, window, to),
            );
          }
        }
      }
    }
  });
});
