/**
 * The ve ranking derived in the process (api/read/veRanking.ts) from an anchor's live locks and the locks changed
 * since (api/read/atBlock.ts veLocks, veLockDelta), against the rules' state (protocol.md §2) and the statement over
 * every lock (holders), at every block of a dense synthetic index, from anchors before and after the block; the
 * arithmetic alone against lockVe on random locks with ties; and VeBoards' anchor life cycle on PGlite.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { lockVe } from "../../api/math";
import { silentLogger } from "../../api/observability/logger";
import { WEEK } from "../../api/read/atBlock";
import type { BoardIndex, HolderVe, LockChange, LockIndex, LockStats, VeLock } from "../../api/read/contract";
import { createIndexRuntime, NO_INDEX } from "../../api/read/runtime";
import { firstAfter, sameChanges, type VeBoard, VeBoards } from "../../api/read/veBoard";
import {
  differingLocks,
  insertionSorted,
  PATCH_LIMIT,
  patchRanking,
  RankScratch,
  rankVe,
  rankVePaced,
  VeAnchor,
} from "../../api/read/veRanking";
import { hasStatsBase, patchStats, prepareStats, statsAt } from "../../api/read/veStats";
import { lcg } from "../support/lcg";
import { pgliteLockIndex } from "../support/pgliteIndex";
import { platformConfig } from "../support/platformApp";
import { rowsOf } from "../support/rankingRows";
import { generateSyntheticIndex, type SyntheticIndex, stateAt } from "../support/syntheticIndex";

const SCHEMA = "ve_ranking";
const OPTIONS = { events: 900, owners: 6, seed: 47, createShare: 0.12 };
const index: SyntheticIndex = (() => {
  const probe = generateSyntheticIndex(OPTIONS);
  return generateSyntheticIndex({ ...OPTIONS, snapshotAt: [...probe.blockTimes.keys()] });
})();
const blocks = [...index.blockTimes.keys()];
const at = (block: bigint) => ({ block, time: index.blockTimes.get(block)! });

/** The ranking by the rules, from the generator's own state at the block. */
function truth(block: bigint): HolderVe[] {
  const t = index.blockTimes.get(block)!;
  const sums = new Map<string, { ve: bigint; locked: bigint; locks: number }>();
  for (const l of stateAt(index, block).values()) {
    if (l.burned) continue;
    const key = l.owner!.toLowerCase();
    const s = sums.get(key) ?? { ve: 0n, locked: 0n, locks: 0 };
    sums.set(key, { ve: s.ve + lockVe(l, t), locked: s.locked + l.amount, locks: s.locks + 1 });
  }
  return [...sums.entries()]
    .filter(([, s]) => s.ve > 0n)
    .map(([address, s]) => ({ address: address as HolderVe["address"], ...s }))
    .sort((a, b) => (a.ve === b.ve ? (a.address < b.address ? -1 : 1) : a.ve > b.ve ? -1 : 1));
}

/** The board order by brute force: every lock's ve by lockVe, summed per owner. */
function bruteRanking(locks: readonly VeLock[], t: bigint): HolderVe[] {
  const sums = new Map<string, { ve: bigint; locked: bigint; locks: number }>();
  for (const l of locks) {
    const s = sums.get(l.owner) ?? { ve: 0n, locked: 0n, locks: 0 };
    sums.set(l.owner, { ve: s.ve + lockVe(l, t), locked: s.locked + l.amount, locks: s.locks + 1 });
  }
  return [...sums.entries()]
    .filter(([, s]) => s.ve > 0n)
    .map(([address, s]) => ({ address: address as HolderVe["address"], ...s }))
    .sort((a, b) => (a.ve === b.ve ? (a.address < b.address ? -1 : 1) : a.ve > b.ve ? -1 : 1));
}

describe("rankVe's arithmetic", () => {
  it("equals lockVe summed per owner on random locks (amounts to 1e30, ends around t, AutoMax, ties), any changes", () => {
    const rand = lcg(12_345);
    const big = (digits: number) => {
      let s = "";
      for (let i = 0; i < digits; i++) s += Math.floor(rand() * 10);
      return BigInt(s || "0");
    };
    const owners = Array.from({ length: 40 }, (_, i) => `0x${(i * 7919).toString(16).padStart(40, "0")}` as const);
    const t = 1_760_000_000n;
    for (let round = 0; round < 60; round++) {
      const locks: VeLock[] = [];
      for (let j = 0; j < 300; j++) {
        const twin = j > 0 && rand() < 0.15 ? locks[j - 1]! : undefined;
        locks.push({
          tokenId: BigInt(j + 1),
          owner: owners[Math.floor(rand() * owners.length)]!,
          // Twins: the same amount and end under another owner, so whole owners tie.
          amount: twin?.amount ?? big(1 + Math.floor(rand() * 30)),
          lockEnd: twin?.lockEnd ?? t + BigInt(Math.floor((rand() - 0.1) * 31_536_000)),
          autoMax: twin?.autoMax ?? rand() < 0.05,
        });
      }
      const anchor = new VeAnchor({ block: 100n, time: t }, locks);
      // Rankings first read only after the next ones were made (a memo keeps past blocks' rankings, read later).
      const later: { ranked: ReturnType<typeof rankVe>; expected: ReturnType<typeof bruteRanking> }[] = [];
      for (const [k, dt] of [0n, 1n, 2n, 3_600n, 86_400n * 30n, -7_200n, -86_400n * 40n].entries()) {
        // Some locks changed (new amounts, new owners, burned), some new.
        const changes = locks
          .filter(() => rand() < 0.05)
          .map((l) =>
            rand() < 0.3
              ? { tokenId: l.tokenId, lock: null }
              : { tokenId: l.tokenId, lock: { ...l, owner: owners[Math.floor(rand() * 40)]!, amount: big(25) } },
          );
        changes.push({
          tokenId: 10_000n + BigInt(round),
          lock: {
            tokenId: 10_000n + BigInt(round),
            owner: "0x00000000000000000000000000000000000000ff",
            amount: big(26),
            lockEnd: t + 1_000_000n,
            autoMax: false,
          },
        });
        const changed = new Set(changes.map((c) => c.tokenId));
        const now = [
          ...locks.filter((l) => !changed.has(l.tokenId)),
          ...changes.flatMap((c) => (c.lock ? [c.lock] : [])),
        ];
        const ranked = rankVe({ block: 100n, time: t + dt }, anchor, changes);
        const expected = bruteRanking(now, t + dt);
        if (k % 2 === 1) {
          later.push({ ranked, expected });
          continue;
        }
        const rows = rowsOf(ranked);
        expect(rows).toEqual(expected);
        // Every ranked owner's place, and none for an owner without ve (or unknown).
        rows.forEach((row, i) => {
          expect(ranked.indexOf(row.address)).toBe(i);
        });
        const unranked = [...owners, "0x00000000000000000000000000000000000000ee"].filter(
          (o) => !rows.some((r) => r.address === o),
        );
        for (const o of unranked) expect(ranked.indexOf(o)).toBeUndefined();
        // Keyset page starts: after each row, and after keys between rows.
        for (let i = 0; i < rows.length; i += 7) {
          const r = rows[i]!;
          expect(ranked.after(r)).toBe(firstAfter(expected, r));
          expect(ranked.after({ ve: r.ve + 1n, address: r.address })).toBe(
            firstAfter(expected, { ve: r.ve + 1n, address: r.address }),
          );
        }
      }
      for (const { ranked, expected } of later) {
        expect(rowsOf(ranked)).toEqual(expected);
        for (let i = 0; i < expected.length; i += 5) expect(ranked.indexOf(expected[i]!.address)).toBe(i);
      }
      // Ties really occur among the ranked owners (the comparator's exact branch).
      if (round === 0) {
        const r = bruteRanking(locks, t);
        expect(r.length).toBeGreaterThan(20);
      }
    }
  });
});

describe("patchRanking (a ranking made ahead, with the block's own changes)", () => {
  it("equals rankVe and the rules with the changes of the block instead of those it was made with", () => {
    const rand = lcg(777);
    const owners = Array.from({ length: 30 }, (_, i) => `0x${(i * 104_729).toString(16).padStart(40, "0")}` as const);
    const stranger = (k: number) => `0x${(0xfe00 + k).toString(16).padStart(40, "0")}` as const;
    const t0 = 1_760_000_000n;
    const lockOf = (tokenId: bigint, t: bigint): VeLock => ({
      tokenId,
      owner: rand() < 0.1 ? stranger(Math.floor(rand() * 4)) : owners[Math.floor(rand() * owners.length)]!,
      amount: 10n ** 18n * BigInt(1 + Math.floor(rand() * 5_000)) + BigInt(Math.floor(rand() * 1e9)),
      lockEnd: t + BigInt(Math.floor((rand() - 0.05) * 31_536_000)),
      autoMax: rand() < 0.05,
    });
    let patchedSome = 0;
    let sharedSome = 0;
    for (let round = 0; round < 80; round++) {
      const locks = Array.from({ length: 250 }, (_, j) => lockOf(BigInt(j + 1), t0));
      const anchor = new VeAnchor({ block: 100n, time: t0 }, locks);
      const t = t0 + BigInt(Math.floor(rand() * 86_400 * 60));
      // What the ranking was made ahead with: some locks changed since the anchor (moved, topped up, burned, new).
      const was: LockChange[] = locks
        .filter(() => rand() < 0.04)
        .map((l) => ({
          tokenId: l.tokenId,
          lock: rand() < 0.3 ? null : { ...lockOf(l.tokenId, t), owner: rand() < 0.5 ? l.owner : lockOf(0n, t).owner },
        }));
      if (rand() < 0.5) was.push({ tokenId: 1_000n, lock: lockOf(1_000n, t) });
      // Made ahead (with the aids a patch takes: places, keys, the order's array) in half the rounds.
      const forPatch = round % 2 === 0;
      const base = rankVe({ block: 101n, time: t }, anchor, was, { forPatch });
      const baseStats = statsAt(t, anchor, was, base.length, { forPatch: true });
      // The block's own: a few of those undone (a reorg) or changed again, a few more locks, a new mint or two.
      const now: LockChange[] = was
        .filter(() => rand() < 0.85)
        .map((c) => (rand() < 0.2 ? { tokenId: c.tokenId, lock: lockOf(c.tokenId, t) } : c));
      const seen = new Set(now.map((c) => c.tokenId));
      for (let k = 0; k < 1 + Math.floor(rand() * 4); k++) {
        const l = locks[Math.floor(rand() * locks.length)]!;
        if (seen.has(l.tokenId)) continue;
        seen.add(l.tokenId);
        now.push(
          rand() < 0.25
            ? { tokenId: l.tokenId, lock: null }
            : { tokenId: l.tokenId, lock: { ...l, owner: lockOf(0n, t).owner, amount: l.amount * 2n } },
        );
      }
      for (let k = 0; k < Math.floor(rand() * 3); k++)
        now.push({ tokenId: 2_000n + BigInt(k), lock: lockOf(2_000n + BigInt(k), t) });
      // Ties: a new owner's AutoMax lock of exactly a ranked owner's ve (the address decides their order).
      const baseRows = rowsOf(base);
      for (let k = 0; k < 2 && baseRows.length > 0; k++) {
        const tied = baseRows[Math.floor(rand() * baseRows.length)]!;
        const tokenId = 3_000n + BigInt(k);
        now.push({ tokenId, lock: { tokenId, owner: stranger(5 + k), amount: tied.ve, lockEnd: t, autoMax: true } });
      }
      // Shuffled, as the statement's list comes (by token) against the one made from the last (in place, appended).
      // `was` is in token order: `now` too in a third of the rounds (differingLocks merges them), shuffled in another.
      const order = rand();
      if (order < 1 / 3) now.sort((a, b) => (a.tokenId < b.tokenId ? -1 : 1));
      else if (order < 2 / 3) now.sort(() => rand() - 0.5);
      const diff = differingLocks(was, now);
      const made = patchRanking(base, anchor, t, diff);
      expect(made, `round ${round}`).toBeDefined();
      const { ranking: patched, samePrefix } = made!;
      if (patched !== base) patchedSome++;
      const changed = new Set(now.map((c) => c.tokenId));
      const expected = bruteRanking(
        [...locks.filter((l) => !changed.has(l.tokenId)), ...now.flatMap((c) => (c.lock ? [c.lock] : []))],
        t,
      );
      const rows = rowsOf(patched);
      expect(rows, `round ${round}`).toEqual(expected);
      // Its first samePrefix rows are base's, row for row, and the next is not (an owner taken out or put back there).
      expect(rows.slice(0, samePrefix)).toEqual(baseRows.slice(0, samePrefix));
      if (samePrefix < Math.min(rows.length, baseRows.length)) {
        expect(rows[samePrefix]).not.toEqual(baseRows[samePrefix]);
      }
      if (samePrefix > 0) sharedSome++;
      expect(rows).toEqual(rowsOf(rankVe({ block: 101n, time: t }, anchor, now, { keepOrder: false })));
      // The stats made with base, patched the same way, are the rules' (and statsAt's with the block's changes).
      const liveNow = [
        ...locks.filter((l) => !changed.has(l.tokenId)),
        ...now.flatMap((c) => (c.lock ? [c.lock] : [])),
      ];
      const stats = patchStats(baseStats, anchor, t, diff, patched.length);
      expect(stats, `round ${round}`).toEqual(bruteStats(liveNow, t));
      expect(stats).toEqual(statsAt(t, anchor, now, patched.length));
      // Patched stats are not patched again, nor stats made without forPatch, nor at another time.
      expect(patchStats(stats!, anchor, t, [], patched.length)).toBeUndefined();
      expect(patchStats(statsAt(t, anchor, was, base.length), anchor, t, diff, patched.length)).toBeUndefined();
      expect(patchStats(baseStats, anchor, t + 1n, diff, patched.length)).toBeUndefined();
      for (const [i, row] of rows.entries()) expect(patched.indexOf(row.address)).toBe(i);
      for (const o of [...owners, stranger(0), stranger(1), stranger(2), stranger(3)]) {
        if (!rows.some((r) => r.address === o)) expect(patched.indexOf(o)).toBeUndefined();
      }
      for (let i = 0; i < rows.length; i += 3) {
        const r = rows[i]!;
        expect(patched.after(r)).toBe(firstAfter(expected, r));
        expect(patched.after({ ve: r.ve - 1n, address: r.address })).toBe(
          firstAfter(expected, { ve: r.ve - 1n, address: r.address }),
        );
      }
      // The order it leaves is the next block's start: that block's ranking is still the rules'.
      const next = rankVe({ block: 102n, time: t + 2n }, anchor, now);
      expect(rowsOf(next)).toEqual(
        bruteRanking(
          [...locks.filter((l) => !changed.has(l.tokenId)), ...now.flatMap((c) => (c.lock ? [c.lock] : []))],
          t + 2n,
        ),
      );
      // Not this anchor's or this time's ranking: not patched (the caller ranks the block whole).
      expect(patchRanking(base, anchor, t + 1n, diff)).toBeUndefined();
      expect(patchRanking(base, new VeAnchor({ block: 100n, time: t0 }, locks), t, diff)).toBeUndefined();
    }
    expect(patchedSome).toBeGreaterThan(60);
    expect(sharedSome).toBeGreaterThan(20);
  });

  it("gives up past PATCH_LIMIT differing locks, and returns the same ranking when none differ", () => {
    const t = 1_760_000_000n;
    const locks: VeLock[] = Array.from({ length: PATCH_LIMIT + 10 }, (_, j) => ({
      tokenId: BigInt(j + 1),
      owner: `0x${(j % 17).toString(16).padStart(40, "0")}` as const,
      amount: 10n ** 21n,
      lockEnd: t + 1_000_000n,
      autoMax: false,
    }));
    const anchor = new VeAnchor({ block: 1n, time: t }, locks);
    const base = rankVe({ block: 2n, time: t }, anchor, []);
    expect(patchRanking(base, anchor, t, [])).toEqual({ ranking: base, samePrefix: base.length });
    const many = locks.slice(0, PATCH_LIMIT + 1).map((l) => ({ tokenId: l.tokenId, lock: null }));
    expect(patchRanking(base, anchor, t, differingLocks([], many))).toBeUndefined();
    expect(patchRanking(base, anchor, t, differingLocks([], many.slice(1)))).toBeDefined();
  });
});

/** The stats by brute force (atBlock.ts stats' definitions), every lock by lockVe. */
function bruteStats(locks: readonly VeLock[], t: bigint): LockStats {
  const ve = new Map<string, bigint>();
  const weeks = new Map<bigint, bigint>();
  const s = { totalLocked: 0n, totalVe: 0n, autoMaxLocks: 0, autoMaxLocked: 0n, expiredLocked: 0n };
  for (const l of locks) {
    const v = lockVe(l, t);
    ve.set(l.owner, (ve.get(l.owner) ?? 0n) + v);
    s.totalLocked += l.amount;
    s.totalVe += v;
    if (l.autoMax) {
      s.autoMaxLocks++;
      s.autoMaxLocked += l.amount;
    } else if (l.lockEnd <= t) s.expiredLocked += l.amount;
    else weeks.set(l.lockEnd / WEEK, (weeks.get(l.lockEnd / WEEK) ?? 0n) + l.amount);
  }
  return {
    ...s,
    holders: ve.size,
    veHolders: [...ve.values()].filter((v) => v > 0n).length,
    liveLocks: locks.length,
    unlocksByWeek: new Map([...weeks.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))),
  };
}

describe("statsAt on random locks", () => {
  it("equals the stats by the rules at times around the locks' ends, with changes, AutoMax and ends past 2^53", () => {
    const rand = lcg(777);
    const owners = Array.from({ length: 30 }, (_, i) => `0x${(i * 104_729).toString(16).padStart(40, "0")}` as const);
    const t0 = 1_760_000_000n;
    const lock = (id: bigint): VeLock => ({
      tokenId: id,
      owner: owners[Math.floor(rand() * owners.length)]!,
      amount: BigInt(Math.floor(rand() * 1e9)) * 10n ** BigInt(Math.floor(rand() * 22)),
      lockEnd:
        rand() < 0.03 ? 2n ** 60n + BigInt(Math.floor(rand() * 1e6)) : t0 + BigInt(Math.floor((rand() - 0.3) * 9e7)),
      autoMax: rand() < 0.1,
    });
    for (let round = 0; round < 40; round++) {
      const locks = Array.from({ length: 200 }, (_, j) => lock(BigInt(j + 1)));
      const anchor = new VeAnchor({ block: 10n, time: t0 }, locks);
      // Each time twice, with other changes (a block made ahead, then patched with its own: the anchor's part at that
      // time is kept and reused).
      const times = Array.from({ length: 6 }, () => t0 + BigInt(Math.floor((rand() - 0.3) * 6e7)));
      for (const t of times.flatMap((t) => [t, t])) {
        const changes: LockChange[] = [];
        for (let c = 0; c < Math.floor(rand() * 12); c++) {
          const id = BigInt(1 + Math.floor(rand() * 260));
          if (changes.some((x) => x.tokenId === id)) continue;
          changes.push({ tokenId: id, lock: rand() < 0.25 ? null : lock(id) });
        }
        const changed = new Set(changes.map((c) => c.tokenId));
        const now = [
          ...locks.filter((l) => !changed.has(l.tokenId)),
          ...changes.flatMap((c) => (c.lock ? [c.lock] : [])),
        ];
        const ranking = rankVe({ block: 11n, time: t }, anchor, changes);
        expect(statsAt(t, anchor, changes, ranking.length), `round ${round}, t ${t}`).toEqual(bruteStats(now, t));
      }
    }
  });
});

describe("rankVe's order at scale", () => {
  it("stays the rules' ranking block after block and across long jumps (3,000 owners whose values cross)", () => {
    const rand = lcg(7_777);
    const owners = Array.from(
      { length: 3_000 },
      (_, i) => `0x${(i * 104_729).toString(16).padStart(40, "0")}` as const,
    );
    const t = 1_760_000_000n;
    const locks: VeLock[] = [];
    for (let j = 0; j < 6_000; j++) {
      locks.push({
        tokenId: BigInt(j + 1),
        owner: owners[j % owners.length]!,
        // Amounts in a narrow band and ends spread over four years: owners' values are close and decay at different
        // rates, so they cross as time passes (the insertion's work) and far more over a jump (sorted whole).
        amount: 10n ** 21n + BigInt(Math.floor(rand() * 1e6)) * 10n ** 12n,
        lockEnd: t + BigInt(Math.floor(rand() * 126_144_000)),
        autoMax: rand() < 0.05,
      });
    }
    const anchor = new VeAnchor({ block: 1n, time: t }, locks);
    // 2 s steps (nobody crosses: the previous order holds), a 30-day jump (owners cross: insertion moves ~11,000
    // places), back an hour and 400 days on (past the insertion's budget: sorted whole) — each path checked here.
    const steps = [
      ...Array.from({ length: 12 }, (_, k) => BigInt(2 * k)),
      86_400n * 30n,
      86_400n * 30n + 2n,
      86_400n * 30n + 4n,
      -3_600n,
      -3_598n,
      86_400n * 400n,
      86_400n * 400n + 2n,
    ];
    // As blocks go by, the changes since the anchor only grow (a changed lock stays changed until the anchor moves).
    const since = new Map<bigint, VeLock | null>();
    for (const dt of steps) {
      for (const l of locks)
        if (rand() < 0.002) since.set(l.tokenId, rand() < 0.3 ? null : { ...l, amount: l.amount * 2n });
      const changes = [...since].map(([tokenId, lock]) => ({ tokenId, lock }));
      const changed = new Set(changes.map((c) => c.tokenId));
      const now = [
        ...locks.filter((l) => !changed.has(l.tokenId)),
        ...changes.flatMap((c) => (c.lock ? [c.lock] : [])),
      ];
      const ranked = rankVe({ block: 2n, time: t + dt }, anchor, changes);
      const expected = bruteRanking(now, t + dt);
      expect(rowsOf(ranked)).toEqual(expected);
      for (let i = 0; i < expected.length; i += 97) {
        expect(ranked.indexOf(expected[i]!.address)).toBe(i);
        expect(ranked.after(expected[i]!)).toBe(i + 1);
      }
    }
  });

  it("a past block's ranking (keepOrder false) leaves the head's order for the head's next ranking", () => {
    const rand = lcg(4_242);
    const owners = Array.from({ length: 500 }, (_, i) => `0x${(i * 7_919).toString(16).padStart(40, "0")}` as const);
    const t = 1_760_000_000n;
    const locks: VeLock[] = Array.from({ length: 1_000 }, (_, j) => ({
      tokenId: BigInt(j + 1),
      owner: owners[j % owners.length]!,
      amount: 10n ** 21n + BigInt(Math.floor(rand() * 1e6)) * 10n ** 12n,
      lockEnd: t + BigInt(Math.floor(rand() * 126_144_000)),
      autoMax: false,
    }));
    const anchor = new VeAnchor({ block: 1n, time: t }, locks);
    rankVe({ block: 2n, time: t + 2n }, anchor, []);
    const headOrder = Array.from(anchor.order!);
    // A block 200 days before: its owners cross the head's order (its own order differs), but it is not kept.
    const past = rankVe({ block: 0n, time: t - 86_400n * 200n }, anchor, [], { keepOrder: false });
    expect(rowsOf(past)).toEqual(bruteRanking(locks, t - 86_400n * 200n));
    expect(rowsOf(past).map((r) => r.address)).not.toEqual(headOrder.map((i) => anchor.accounts[i]));
    expect(Array.from(anchor.order!)).toEqual(headOrder);
    // The head's next ranking starts from, and keeps, its own (by default).
    const next = rankVe({ block: 3n, time: t + 4n }, anchor, []);
    expect(rowsOf(next)).toEqual(bruteRanking(locks, t + 4n));
    expect(Array.from(anchor.order!)).toEqual(rowsOf(next).map((r) => anchor.accountIndex(r.address)));
  });

  it("the order kept is the head ranking's own array, an owner new since the anchor in it; the next skips it", () => {
    const t = 1_760_000_000n;
    const owners = Array.from(
      { length: 50 },
      (_, i) => `0x${(i * 104_729 + 1).toString(16).padStart(40, "0")}` as const,
    );
    const locks: VeLock[] = owners.map((owner, j) => ({
      tokenId: BigInt(j + 1),
      owner,
      amount: 10n ** 21n * BigInt(j + 1),
      lockEnd: t + 86_400n * BigInt(30 + j),
      autoMax: false,
    }));
    const anchor = new VeAnchor({ block: 1n, time: t }, locks);
    // A lock of an owner the anchor does not know, ranked first: its index is past the anchor's accounts.
    const newcomer = "0x00000000000000000000000000000000000000ff" as const;
    const lock: VeLock = {
      tokenId: 999n,
      owner: newcomer,
      amount: 10n ** 24n,
      lockEnd: t + 86_400n * 300n,
      autoMax: false,
    };
    const changes: LockChange[] = [{ tokenId: 999n, lock }];
    const first = rankVe({ block: 2n, time: t + 2n }, anchor, changes);
    expect(rowsOf(first)[0]!.address).toBe(newcomer);
    const own = anchor.accounts.length;
    expect(anchor.order!.length).toBe(own + 1);
    expect(anchor.order![0]).toBeGreaterThanOrEqual(own);
    // The next head's ranking starts from it (the newcomer skipped, summed again from the changes), exact; so is one
    // patched from it, and one made after the newcomer's lock is gone.
    const next = rankVe({ block: 3n, time: t + 4n }, anchor, changes, { forPatch: true });
    expect(rowsOf(next)).toEqual(bruteRanking([...locks, lock], t + 4n));
    const gone: LockChange[] = [{ tokenId: 999n, lock: null }];
    const patched = patchRanking(next, anchor, t + 4n, differingLocks(changes, gone))!;
    expect(rowsOf(patched.ranking)).toEqual(bruteRanking(locks, t + 4n));
    const after = rankVe({ block: 4n, time: t + 6n }, anchor, [{ tokenId: 999n, lock: null }]);
    expect(rowsOf(after)).toEqual(bruteRanking(locks, t + 6n));
    expect(Array.from(anchor.order!).every((i) => i < own)).toBe(true);
  });

  it("insertionSorted orders a nearly ordered sequence in place, and gives up past its budget", () => {
    const cmp = (a: number, b: number) => a - b;
    const near = Int32Array.from({ length: 1_000 }, (_, i) => i);
    for (const [a, b] of [
      [10, 900],
      [500, 3],
      [998, 999],
    ] as const) {
      const x = near[a]!;
      near[a] = near[b]!;
      near[b] = x;
    }
    const copy = Int32Array.from(near);
    expect(insertionSorted(near, near.length, cmp, 4_000)).toBe(true);
    expect(Array.from(near)).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
    // Reversed: ~500,000 moves, past a budget of 4,000 — a permutation of the input is left for the caller to sort.
    const reversed = Int32Array.from({ length: 1_000 }, (_, i) => 999 - i);
    expect(insertionSorted(reversed, reversed.length, cmp, 4_000)).toBe(false);
    expect(Array.from(reversed).sort((a, b) => a - b)).toEqual(Array.from(copy).sort((a, b) => a - b));
  });
});

describe("derived from an anchor, at every block (PGlite)", () => {
  let reader: LockIndex & BoardIndex;
  beforeAll(async () => {
    ({ reader } = await pgliteLockIndex(index, SCHEMA));
  }, 60_000);

  it("every block's ranking from anchors before and after it equals the rules' and the statement's", async () => {
    // Anchors spread over the history, the first and last blocks included; every block derived from each.
    const anchorBlocks = [0, 0.25, 0.5, 0.75, 1].map(
      (f) => blocks[Math.min(blocks.length - 1, Math.floor(f * blocks.length))]!,
    );
    let changed = 0;
    for (const f of anchorBlocks) {
      const locks = await reader.veLocks(at(f));
      expect(locks.block).toBe(f);
      const anchor = new VeAnchor(locks, locks.value);
      for (const block of blocks) {
        const delta = await reader.veLockDelta(at(f), at(block));
        changed += delta.value.length;
        const derived = rowsOf(rankVe(delta, anchor, delta.value));
        const expected = truth(block);
        expect(derived, `block ${block} from the anchor at ${f}`).toEqual(expected);
        if (block % 7n === 0n) expect(rowsOf((await reader.holders(at(block))).value)).toEqual(expected);
      }
    }
    expect(changed).toBeGreaterThan(1_000);
  }, 240_000);

  it("every block's stats derived from anchors before and after it equal the statement's", async () => {
    const anchorBlocks = [0, 0.3, 0.7, 1].map(
      (f) => blocks[Math.min(blocks.length - 1, Math.floor(f * blocks.length))]!,
    );
    let weeksSeen = 0;
    for (const f of anchorBlocks) {
      const locks = await reader.veLocks(at(f));
      const anchor = new VeAnchor(locks, locks.value);
      for (const block of blocks) {
        const delta = await reader.veLockDelta(at(f), at(block));
        const ranking = rankVe(delta, anchor, delta.value);
        const derived = statsAt(delta.time, anchor, delta.value, ranking.length);
        const expected = (await reader.stats(at(block))).value;
        expect(derived, `block ${block} from the anchor at ${f}`).toEqual(expected);
        expect([...derived.unlocksByWeek.keys()]).toEqual(
          [...expected.unlocksByWeek.keys()].sort((a, b) => (a < b ? -1 : 1)),
        );
        weeksSeen += derived.unlocksByWeek.size;
      }
    }
    expect(weeksSeen).toBeGreaterThan(100);
  }, 240_000);

  it("the runtime's stats near the ve anchor are made with the block's ranking (no stats statement) and equal it", async () => {
    let statements = 0;
    const counted: typeof reader = {
      ...reader,
      stats: (a) => {
        statements++;
        return reader.stats(a);
      },
    };
    const rt = createIndexRuntime({
      source: { ...NO_INDEX, atBlock: counted },
      config: platformConfig(),
      rpc: null,
      logger: silentLogger,
    });
    const head = index.head.block;
    // No anchor yet: the statement; the board's first read makes the anchor (the finalized block, 30 below the head).
    expect((await rt.stats.get(at(head), "head")).value).toEqual((await reader.stats(at(head))).value);
    expect(statements).toBe(1);
    await rt.boards.get(at(head), "head");
    expect(rt.boards.anchorBlock).not.toBeNull();
    for (const block of blocks.slice(-25, -1)) {
      const answer = await rt.stats.get(at(block), "past");
      expect(answer.value, `block ${block}`).toEqual((await reader.stats(at(block))).value);
      expect([answer.block, answer.time, answer.inRange]).toEqual([block, at(block).time, true]);
    }
    expect(statements).toBe(1);
    // (The whole history is within the derivation's span here: a block farther than 4,096 from the anchor, where the
    // ranking is computed whole, keeps the statement, VeBoards.nearAnchor, tested with the ranking made ahead.)
  });

  it("the delta names exactly the locks with an event between the two blocks (and those merged away there)", async () => {
    const f = blocks[Math.floor(blocks.length / 2)]!;
    for (const block of [blocks[3]!, f, blocks[blocks.length - 2]!]) {
      const [lo, hi] = block < f ? [block, f] : [f, block];
      const expected = new Set<bigint>();
      for (const e of index.events) {
        if (e.blockNumber > lo && e.blockNumber <= hi) {
          expected.add(e.tokenId);
          if (e.fromTokenId !== null) expected.add(e.fromTokenId);
        }
      }
      const delta = await reader.veLockDelta(at(f), at(block));
      expect(new Set(delta.value.map((c) => c.tokenId))).toEqual(expected);
      const state = stateAt(index, block);
      for (const c of delta.value) {
        const row = state.get(c.tokenId);
        if (row === undefined || row.burned) expect(c.lock, `lock ${c.tokenId} at ${block}`).toBeNull();
        else
          expect(c.lock).toMatchObject({ owner: row.owner!.toLowerCase(), amount: row.amount, lockEnd: row.lockEnd });
      }
    }
  });

  it("VeBoards: one read of the anchor's locks, then a delta per block; far blocks whole; the anchor moves up", async () => {
    const head = index.head.block;
    const finalized = blocks[blocks.length - 40]!;
    let locksRead = 0;
    let deltas = 0;
    let anchorMoves = 0;
    let finalizedNow = finalized;
    const withFinal = <T extends { head: { finalized: bigint } }>(a: T) => ({
      ...a,
      head: { ...a.head, finalized: finalizedNow },
    });
    const boards = new VeBoards({
      load: (a) => reader.holders(a),
      derive: {
        span: 100,
        advance: 8,
        finalized: async () => at(finalizedNow),
        locks: async (a, _lane, purpose) => {
          if (purpose === "anchor") anchorMoves++;
          else locksRead++;
          return { ...withFinal(await reader.veLocks(a)), finalizedTime: index.blockTimes.get(finalizedNow)! };
        },
        delta: async (from, a, _lane, purpose) => {
          if (purpose === "anchor") anchorMoves++;
          else deltas++;
          return {
            ...withFinal(await reader.veLockDelta(from, a)),
            finalizedTime: index.blockTimes.get(finalizedNow)!,
          };
        },
      },
    });
    const board = async (block: bigint) => rowsOf((await boards.get(at(block), "head")).rows);
    expect(await board(head)).toEqual(truth(head));
    expect([locksRead, deltas, boards.anchorBlock]).toEqual([1, 1, finalized]);
    for (const block of blocks.slice(-30)) expect(await board(block), `block ${block}`).toEqual(truth(block));
    expect(locksRead).toBe(1);
    expect(boards.computedWhole).toBe(0);
    // A block far below the anchor: the statement over every lock.
    expect(await board(blocks[2]!)).toEqual(truth(blocks[2]!));
    expect(boards.computedWhole).toBe(1);
    // The finalized block moves 16 on (a multiple of 8 past the anchor): the anchor follows, in the background.
    finalizedNow = blocks[blocks.length - 24]!;
    const evicted = blocks[blocks.length - 29]!;
    expect(boards.has(evicted)).toBe(false);
    expect(await board(evicted)).toEqual(truth(evicted));
    for (let i = 0; i < 50 && boards.anchorBlock === finalized; i++) await new Promise((r) => setTimeout(r, 20));
    expect(boards.anchorBlock).toBe(finalizedNow);
    expect(anchorMoves).toBe(1);
    // Rankings from the moved anchor are still exact.
    for (const block of blocks.slice(-12)) {
      const memoKept = boards.has(block);
      if (!memoKept) expect(await board(block), `block ${block} from the moved anchor`).toEqual(truth(block));
    }
  });
});

describe("the next block's ranking made ahead at the head", () => {
  it("is taken when the block changed no lock and came at the expected time, and the board is the rules' either way", async () => {
    const base = index.head;
    const locks: VeLock[] = [...stateAt(index, base.block).values()]
      .filter((l) => !l.burned && l.owner !== null)
      .map((l) => ({ tokenId: l.tokenId, owner: l.owner!, amount: l.amount, lockEnd: l.lockEnd, autoMax: l.autoMax }));
    let changes: LockChange[] = [];
    const answer = <T>(a: { block: bigint; time: bigint }, value: T) => ({
      head: { block: a.block, time: a.time, finalized: base.block },
      block: a.block,
      time: a.time,
      inRange: true,
      value,
      finalizedTime: base.time,
    });
    const boards = new VeBoards({
      load: () => Promise.reject(new Error("not computed whole here")),
      derive: {
        span: 1_000,
        advance: 1_000_000,
        aheadDelayMs: 0,
        finalized: async () => base,
        locks: async (a) => answer(a, locks),
        delta: async (_from, a) => answer(a, changes),
      },
    });
    const turn = () => new Promise((r) => setTimeout(r, 5));
    const now = () => {
      const changed = new Map(changes.map((c) => [c.tokenId, c.lock]));
      return [...locks.filter((l) => !changed.has(l.tokenId)), ...changes.flatMap((c) => (c.lock ? [c.lock] : []))];
    };
    const read = async (k: bigint, dt: bigint, lane: "head" | "past" = "head") => {
      const board = await boards.get({ block: base.block + k, time: base.time + dt }, lane);
      const rows = rowsOf(board.rows);
      expect(rows, `block +${k}`).toEqual(bruteRanking(now(), base.time + dt));
      expect(board.stats?.(), `block +${k}`).toEqual(bruteStats(now(), base.time + dt));
      expect(rows.length).toBeGreaterThan(3);
      await turn();
      return board;
    };
    // Each next block's board made ahead is told (its page text is made of it then), and is the very board answered
    // for that block when taken, with the head of the read that took it.
    const madeAhead: VeBoard[] = [];
    boards.onMadeAhead = (b) => madeAhead.push(b);
    // The first two heads give the step (2 s); the third is the one made ahead.
    await read(1n, 2n);
    await read(2n, 4n);
    expect(boards.takenAhead).toBe(0);
    expect(madeAhead.map((b) => [b.block, b.time])).toEqual([[base.block + 3n, base.time + 6n]]);
    const taken = await read(3n, 6n);
    expect(boards.takenAhead).toBe(1);
    expect(taken).toBe(madeAhead[0]);
    expect(taken.head.block).toBe(base.block + 3n);
    // A lock changed in the block: made as before (and the next, with the same changes since the anchor, taken).
    const moved = locks[0]!;
    changes = [{ tokenId: moved.tokenId, lock: { ...moved, amount: moved.amount * 3n } }];
    const remade = await read(4n, 8n);
    expect(boards.takenAhead).toBe(1);
    expect(madeAhead[1]?.block).toBe(base.block + 4n);
    expect(remade).not.toBe(madeAhead[1]);
    // Its ranking is the one made ahead with the changed lock's owner summed again (read() checked it is the rules').
    expect(boards.patchedAhead).toBe(1);
    await read(5n, 10n);
    expect(boards.takenAhead).toBe(2);
    // A lock gone (patched too), then a block later than expected: neither taken nor patched.
    changes = [...changes, { tokenId: locks[1]!.tokenId, lock: null }];
    await read(6n, 12n);
    expect(boards.patchedAhead).toBe(2);
    await read(7n, 15n);
    expect(boards.takenAhead).toBe(2);
    expect(boards.patchedAhead).toBe(2);
    // Past blocks make none: a reader's time travel to two consecutive blocks, then the block after them.
    await read(20n, 60n, "past");
    await read(21n, 62n, "past");
    await read(22n, 64n, "past");
    expect(boards.takenAhead).toBe(2);
    // Within the span of the anchor (the stats are derived with the ranking there), and beyond it.
    expect([boards.nearAnchor(base.block + 1_000n), boards.nearAnchor(base.block - 1_001n)]).toEqual([true, false]);
    expect((await boards.get({ block: base.block + 3n, time: base.time + 6n }, "past")).stats).not.toBeNull();
  });

  it("sameChanges compares the locks named and their states, in any order", () => {
    const l = (id: bigint, amount = 1n): LockChange => ({
      tokenId: id,
      lock: { tokenId: id, owner: "0x00000000000000000000000000000000000000aa", amount, lockEnd: 9n, autoMax: false },
    });
    expect(sameChanges([l(1n), l(2n)], [l(2n), l(1n)])).toBe(true);
    expect(sameChanges([l(1n)], [l(1n, 2n)])).toBe(false);
    expect(sameChanges([l(1n)], [{ tokenId: 1n, lock: null }])).toBe(false);
    expect(sameChanges([{ tokenId: 1n, lock: null }], [{ tokenId: 1n, lock: null }])).toBe(true);
    expect(sameChanges([l(1n)], [l(2n)])).toBe(false);
    expect(sameChanges([l(1n)], [l(1n), l(2n)])).toBe(false);
  });

  it("differingLocks names each lock whose state differs, side by side and past where the lists part", () => {
    const l = (id: bigint, amount = 1n): LockChange => ({
      tokenId: id,
      lock: { tokenId: id, owner: "0x00000000000000000000000000000000000000aa", amount, lockEnd: 9n, autoMax: false },
    });
    const byToken = (d: ReturnType<typeof differingLocks>) => [...d].sort((a, b) => (a.tokenId < b.tokenId ? -1 : 1));
    // The next block's list: in place (2 topped up, 3 burned) and appended (5 new), 1 and 4 as they were.
    const was = [l(1n), l(2n), l(3n), l(4n)];
    const now = [was[0]!, l(2n, 7n), { tokenId: 3n, lock: null }, was[3]!, l(5n)];
    expect(byToken(differingLocks(was, now))).toEqual([
      { tokenId: 2n, was: was[1]!.lock, now: now[1]!.lock },
      { tokenId: 3n, was: was[2]!.lock, now: null },
      { tokenId: 5n, was: undefined, now: now[4]!.lock },
    ]);
    // In another order (the statement's, by token), the same; a lock only in the first list is undefined in the second.
    expect(byToken(differingLocks(was, [...now].reverse()))).toEqual(byToken(differingLocks(was, now)));
    expect(differingLocks([l(1n), l(6n)], [l(1n)])).toEqual([{ tokenId: 6n, was: l(6n).lock, now: undefined }]);
    // Both in token order, parting in the middle: merged by token.
    expect(byToken(differingLocks([l(1n), l(3n), l(4n)], [l(1n), l(2n), l(3n, 5n), l(5n)]))).toEqual([
      { tokenId: 2n, was: undefined, now: l(2n).lock },
      { tokenId: 3n, was: l(3n).lock, now: l(3n, 5n).lock },
      { tokenId: 4n, was: l(4n).lock, now: undefined },
      { tokenId: 5n, was: undefined, now: l(5n).lock },
    ]);
    expect(
      differingLocks(
        was,
        [...was].reverse().map((c) => ({ ...c })),
      ),
    ).toEqual([]);
  });
});

describe("paced builds (an anchor and its stats base in slices, every request served between them)", () => {
  /** Random live locks: AutoMax, ends past 2^53 (not plain), many sharing an end, owners with many locks. */
  const randomLocks = (n: number, seed: number, endOf?: (k: number) => bigint): VeLock[] => {
    const rand = lcg(seed);
    const t = 1_760_000_000n;
    return Array.from({ length: n }, (_, j) => ({
      tokenId: BigInt(j * 3 + 1),
      owner: `0x${Math.floor(rand() * (n / 3))
        .toString(16)
        .padStart(40, "0")}` as VeLock["owner"],
      amount: BigInt(Math.floor(rand() * 1e9)) * 10n ** 15n + 7n,
      lockEnd:
        endOf?.(j) ?? (rand() < 0.01 ? 2n ** 60n : t + BigInt(Math.floor(rand() * 2_000)) * 86_400n - 50_000_000n),
      autoMax: rand() < 0.05,
    }));
  };
  const fields = (a: VeAnchor) => ({
    accounts: a.accounts,
    owner: a.owner,
    r: a.r,
    end: a.end,
    first: a.first,
    byOwner: a.byOwner,
    locked: a.locked,
    count: a.count,
    odd: a.odd,
    lastEnd: a.lastEnd,
    cn: a.cn,
    qn: a.qn,
    c: a.c,
    q: a.q,
    byEnd: a.byEnd,
    endsSorted: a.endsSorted,
  });

  it("an anchor built in slices equals one built at once, and ranks and sums the same", async () => {
    for (const [n, seed] of [
      [1, 3],
      [5_000, 5],
      [30_000, 9],
    ] as const) {
      const locks = randomLocks(n, seed);
      const at = { block: 7n, time: 1_760_000_000n };
      let pauses = 0;
      const paced = await VeAnchor.paced(at, locks, async () => {
        pauses++;
        await new Promise((r) => setImmediate(r));
      });
      const whole = new VeAnchor(at, locks);
      expect(fields(paced)).toEqual(fields(whole));
      for (const l of locks.slice(0, 50)) expect(paced.indexOfToken(l.tokenId)).toBe(whole.indexOfToken(l.tokenId));
      if (n >= 30_000) expect(pauses).toBeGreaterThan(20);
      const t = at.time + 86_400n * 30n;
      const ranked = rankVe({ block: 8n, time: t }, paced, []);
      expect(rowsOf(ranked)).toEqual(bruteRanking(locks, t));
      // The stats base made ahead in slices gives the stats made at once.
      await prepareStats(paced, () => new Promise((r) => setImmediate(r)));
      expect(hasStatsBase(paced)).toBe(true);
      expect(hasStatsBase(whole)).toBe(false);
      expect(statsAt(t, paced, [], ranked.length)).toEqual(statsAt(t, whole, [], ranked.length));
    }
  });

  it("a ranking made in slices, readers' rankings made between every slice, equals rankVe and the rules, and patches the same", async () => {
    const locks = randomLocks(30_000, 13);
    const t0 = 1_760_000_000n;
    const anchor = new VeAnchor({ block: 1n, time: t0 }, locks);
    const rand = lcg(29);
    const changes: LockChange[] = locks
      .filter(() => rand() < 0.01)
      .map((l) => ({ tokenId: l.tokenId, lock: rand() < 0.3 ? null : { ...l, amount: l.amount * 3n } }));
    const at = { block: 9n, time: t0 + 86_400n * 12n };
    rankVe({ block: 8n, time: at.time - 2n }, anchor, changes);
    const own = new RankScratch();
    let pauses = 0;
    // Between every two slices a reader's ranking of another time (the shared buffers written over) and a past
    // block's (keepOrder false): the run made in slices reads its own buffers, and the anchor only.
    const paced = await rankVePaced(at, anchor, changes, { forPatch: true }, own, async () => {
      pauses++;
      rankVe({ block: 3n, time: t0 + BigInt(pauses) * 86_400n * 40n }, anchor, changes.slice(pauses % 7), {
        keepOrder: false,
      });
      await new Promise((r) => setImmediate(r));
    });
    expect(pauses, "made in several slices").toBeGreaterThanOrEqual(5);
    const now = new Map(locks.map((l) => [l.tokenId, l as VeLock | null]));
    for (const c of changes) now.set(c.tokenId, c.lock);
    const expected = bruteRanking(
      [...now.values()].filter((l): l is VeLock => l !== null),
      at.time,
    );
    expect(rowsOf(paced)).toEqual(expected);
    expect(rowsOf(paced)).toEqual(rowsOf(rankVe(at, anchor, changes)));
    // Its patch aids were made in slices too: a patch with other changes equals the rules with those.
    const more = locks.slice(0, 5).map((l) => ({ tokenId: l.tokenId, lock: { ...l, amount: l.amount * 5n } }));
    const after = [...changes.filter((c) => !more.some((m) => m.tokenId === c.tokenId)), ...more];
    const patched = patchRanking(paced, anchor, at.time, differingLocks(changes, after));
    expect(patched).toBeDefined();
    for (const c of more) now.set(c.tokenId, c.lock);
    const patchedExpected = bruteRanking(
      [...now.values()].filter((l): l is VeLock => l !== null),
      at.time,
    );
    expect(rowsOf(patched!.ranking)).toEqual(patchedExpected);
  });

  it("the plain locks in order of their end, ties by index, packed or (ends too large to pack) compared", () => {
    const t = 1_760_000_000n;
    for (const endOf of [(k: number) => t + BigInt(k % 17) * 1_000n, (k: number) => 2n ** 52n - BigInt(k % 13)]) {
      const locks = randomLocks(3_000, 11, endOf).map((l) => ({ ...l, autoMax: false }));
      const anchor = new VeAnchor({ block: 1n, time: t }, locks);
      const expected = locks.map((_, j) => j).sort((x, y) => Number(locks[x]!.lockEnd - locks[y]!.lockEnd) || x - y);
      expect(Array.from(anchor.byEnd)).toEqual(expected);
      expect(Array.from(anchor.endsSorted)).toEqual(expected.map((j) => Number(locks[j]!.lockEnd)));
    }
  });
});
