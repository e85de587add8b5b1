/**
 * The per-block memo of whole-index answers (api/read/blockMemo.ts) under keys a request chooses: bounded by entries
 * and by bytes however many distinct blocks are asked for, the head's answer kept through a flood of past blocks,
 * single flight, and a failure never kept; the duration boards' 28 memos under one bound of bytes together. The boards here are computed by a function of the block (no database:
 * what is under test is what the memo keeps, not the statement).
 */
import { describe, expect, it } from "vitest";
import { BlockMemo } from "../../api/read/blockMemo";
import { BOARD_WINDOWS, type BoardWindow, DURATION_BOARDS, type HolderVe } from "../../api/read/contract";
import { DurationBoards } from "../../api/read/durationBoards";
import { BOARD_ROW_BYTES, rankingOf, VeBoards } from "../../api/read/veBoard";
import { heapAfterCollection } from "../support/heap";

const at = (block: bigint) => ({ block, time: 1_700_000_000n + block * 2n });

/** A ranking of `n` holders at `block`, as the statement would answer it (its rows, and as a ranking). */
function holders(block: bigint, n: number) {
  const value: HolderVe[] = Array.from({ length: n }, (_, i) => ({
    address: `0x${(i + 1).toString(16).padStart(40, "0")}` as HolderVe["address"],
    ve: BigInt(n - i) * 10n ** 18n + block,
    locked: 10n ** 18n,
    locks: 1,
  }));
  const head = { block: 1_000_000n, time: 0n, finalized: 999_000n };
  return { head, block, time: at(block).time, inRange: true, value };
}
const ranking = (block: bigint, n: number) => {
  const { value, ...rest } = holders(block, n);
  return { ...rest, value: rankingOf(value) };
};

describe("the bytes bound", () => {
  it("1,000 distinct past blocks: the boards kept never exceed maxBytes, nor capacity, and the oldest go first", async () => {
    const rows = 400;
    const maxBytes = 5 * (1024 + rows * BOARD_ROW_BYTES); // room for five boards of this size
    const boards = new VeBoards({ load: async (a) => ranking(a.block, rows), capacity: 64, maxBytes });
    let peak = 0;
    for (let b = 1n; b <= 1_000n; b++) {
      const board = await boards.get(at(b));
      expect(board.rows).toHaveLength(rows);
      peak = Math.max(peak, boards.bytes);
      expect(boards.bytes).toBeLessThanOrEqual(maxBytes);
    }
    // The bound is what held them, not the entry count: five boards, each counted at its estimate.
    expect(boards.size).toBe(5);
    expect(peak).toBe(maxBytes);
    expect(boards.computed).toBe(1_000);
    expect(boards.has(1_000n)).toBe(true);
    expect(boards.has(995n)).toBe(false);
    // A block evicted is computed again when asked for.
    await boards.get(at(1n));
    expect(boards.computed).toBe(1_001);
  });

  it("the heap held after 300 distinct blocks' boards stays within the bound (the estimate is an upper bound)", async () => {
    const heap = heapAfterCollection;
    const rows = 2_000;
    const maxBytes = 8 * 1024 * 1024; // ~10 boards of 2,000 rows at 400 B a row
    const boards = new VeBoards({ load: async (a) => ranking(a.block, rows), capacity: 1_000, maxBytes });
    const before = heap();
    for (let b = 1n; b <= 300n; b++) await boards.get(at(b));
    const held = heap() - before;
    expect(boards.bytes).toBeLessThanOrEqual(maxBytes);
    // Unbounded, 300 boards would hold ~300 × 0.5 MB; bounded, what is held is at most the budget (and some slack).
    expect(held).toBeLessThan(maxBytes + 4 * 1024 * 1024);
    expect(held).toBeGreaterThan(0);
  });

  it("many small answers are bounded by capacity", async () => {
    const memo = new BlockMemo({ load: async (a) => a.block, capacity: 8, maxBytes: 1e9, sizeOf: () => 100 });
    for (let b = 1n; b <= 500n; b++) await memo.get(at(b));
    expect(memo.size).toBe(8);
    expect(memo.bytes).toBe(800);
  });

  it("an answer larger than the whole budget is served, and only the head's is kept", async () => {
    const memo = new BlockMemo({ load: async (a) => a.block, maxBytes: 50, sizeOf: () => 100 });
    expect(await memo.get(at(7n))).toBe(7n);
    expect(memo.size).toBe(0);
    expect(memo.bytes).toBe(0);
  });
});

describe("the head's answer", () => {
  it("stays through a flood of past blocks, in the head's lane; a newer head moves the old one to the past", async () => {
    const lanes: string[] = [];
    const memo = new BlockMemo({
      load: async (a, lane) => {
        lanes.push(`${a.block}:${lane}`);
        return a.block;
      },
      capacity: 4,
      maxBytes: 400,
      sizeOf: () => 100,
    });
    await memo.get(at(1_000n), "head");
    for (let b = 1n; b <= 300n; b++) await memo.get(at(b), "past");
    expect(memo.has(1_000n)).toBe(true);
    expect(memo.bytes).toBeLessThanOrEqual(400);
    await memo.get(at(1_000n), "head");
    await memo.get(at(1_000n), "past");
    expect(lanes.filter((l) => l.startsWith("1000:"))).toEqual(["1000:head"]);

    await memo.get(at(1_001n), "head");
    expect(memo.has(1_000n)).toBe(true); // now a past block, the most recently used
    expect(memo.has(297n)).toBe(false);
    expect(memo.bytes).toBeLessThanOrEqual(400);
  });
});

describe("single flight and failures", () => {
  it("concurrent readers of one block share one computation; a failure is not kept", async () => {
    let calls = 0;
    let fail = true;
    const memo = new BlockMemo({
      load: async (a) => {
        calls++;
        await new Promise((r) => setTimeout(r, 10));
        if (fail) throw new Error("down");
        return a.block;
      },
      sizeOf: () => 1,
    });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => memo.get(at(5n))));
    expect(calls).toBe(1);
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect(memo.has(5n)).toBe(false);
    expect(memo.bytes).toBe(0);
    fail = false;
    expect(await memo.get(at(5n), "head")).toBe(5n);
    expect(calls).toBe(2);
  });
});

describe("a reorg (the head went back to block N)", () => {
  it("forgetFrom(N) drops the head's and every past answer at N or above, keeps those below, and their bytes", async () => {
    let branch = "old";
    const memo = new BlockMemo({ load: async (a) => `${branch}:${a.block}`, sizeOf: () => 10, capacity: 16 });
    for (const b of [1n, 2n, 3n, 4n]) await memo.get(at(b));
    await memo.get(at(5n), "head");
    expect(memo.bytes).toBe(50);
    expect(memo.forgetFrom(3n)).toBe(3);
    expect(memo.bytes).toBe(20);
    expect([1n, 2n, 3n, 4n, 5n].map((b) => memo.has(b))).toEqual([true, true, false, false, false]);
    branch = "new";
    expect(await memo.get(at(3n), "head")).toBe("new:3");
    expect(await memo.get(at(2n))).toBe("old:2");
  });

  it("a computation in flight for a forgotten block settles for its readers but is not kept", async () => {
    let release: () => void = () => {};
    let calls = 0;
    const memo = new BlockMemo({
      load: async (a) => {
        calls++;
        if (calls === 1) await new Promise<void>((r) => (release = r));
        return `${calls}:${a.block}`;
      },
      sizeOf: () => 10,
    });
    const inFlight = memo.get(at(7n), "head");
    expect(memo.forgetFrom(7n)).toBe(1);
    release();
    expect(await inFlight).toBe("1:7");
    expect(memo.has(7n)).toBe(false);
    expect(memo.bytes).toBe(0);
    expect(await memo.get(at(7n), "head")).toBe("2:7");
  });

  it("the duration boards forget every board and window's rankings from N up", async () => {
    const boards = new DurationBoards({
      load: async (_board, _window, a) => {
        const { value, ...rest } = holders(a.block, 3);
        return { ...rest, finalizedTime: null, value: value.map((r) => ({ address: r.address, value: r.ve })) };
      },
    });
    const kinds = [
      [DURATION_BOARDS[0]!, "24h"],
      [DURATION_BOARDS[1]!, "7d"],
    ] as const;
    for (const [board, window] of kinds) for (const b of [10n, 11n, 12n]) await boards.memo(board, window).get(at(b));
    expect(boards.forgetFrom(11n)).toBe(4);
    for (const [board, window] of kinds) {
      expect([10n, 11n, 12n].map((b) => boards.memo(board, window).has(b))).toEqual([true, false, false]);
    }
  });
});

describe("the duration boards' shared bound", () => {
  /** A board's ranking of `n` accounts at a block, as the statement would answer it. */
  const board = (block: bigint, n: number) => {
    const { value, ...rest } = holders(block, n);
    return { ...rest, finalizedTime: null, value: value.map((r) => ({ address: r.address, value: r.ve })) };
  };
  const rows = 1_000;
  const each = 1024 + rows * BOARD_ROW_BYTES; // ~400 kB a ranking

  it("a flood of past blocks over all 28 boards and windows keeps their sum within allBytes, the heads kept", async () => {
    const allBytes = 10 * each;
    const boards = new DurationBoards({ load: async (_b, _w, a) => board(a.block, rows), allBytes });
    const windows = Object.keys(BOARD_WINDOWS) as BoardWindow[];
    const memos = DURATION_BOARDS.flatMap((b) => windows.map((w) => boards.memo(b, w)));
    expect(memos).toHaveLength(28);
    // Two heads, then 200 distinct past blocks spread over every board and window.
    for (const memo of memos.slice(0, 2)) await memo.get(at(5_000n), "head");
    let peak = 0;
    for (let i = 0; i < 200; i++) {
      await memos[i % 28]!.get(at(BigInt(1 + i)), "past");
      peak = Math.max(peak, boards.bytes);
      expect(boards.bytes).toBeLessThanOrEqual(allBytes);
    }
    // Without the shared bound, each memo's own (4 blocks, 16 MiB) would have kept 28 × 4 rankings, ~45 MB.
    expect(peak).toBe(allBytes);
    expect(memos.reduce((n, m) => n + m.size, 0)).toBe(8);
    for (const memo of memos.slice(0, 2)) expect(memo.has(5_000n)).toBe(true);
    // The most recently asked for are what is kept.
    expect(memos[199 % 28]!.has(200n)).toBe(true);
    expect(memos[0]!.has(1n)).toBe(false);
  });

  it("heads larger than the whole bound are kept, every past ranking goes", async () => {
    const boards = new DurationBoards({ load: async (_b, _w, a) => board(a.block, rows), allBytes: 2 * each });
    const memos = DURATION_BOARDS.map((b) => boards.memo(b, "lifetime"));
    for (const memo of memos) await memo.get(at(9_000n), "head");
    for (const memo of memos) await memo.get(at(10n), "past");
    expect(boards.bytes).toBe(7 * each);
    expect(memos.every((m) => m.has(9_000n) && !m.has(10n))).toBe(true);
  });
});
