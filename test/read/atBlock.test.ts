/**
 * The read model (api/read/atBlock.ts) against the indexer's own rules: a synthetic index (test/support/
 * syntheticIndex.ts) built by indexer/rules.ts keeps the rules' state at chosen blocks, and every read at those
 * blocks — one lock, an owner's locks, histories page by page, the ve ranking, the stats — must equal what that
 * state says, computed here row by row with api/math. In-memory PGlite: no chain, no Ponder.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { lockVe } from "../../api/math";
import { buildDigest, createLockIndex, WEEK } from "../../api/read/atBlock";
import { BlockTimeUnknownError, type EventKey, IndexNotStartedError, type LockIndex } from "../../api/read/contract";
import type { LockEventRow, LockRow } from "../../indexer/rules";
import { rowsOf } from "../support/rankingRows";
import {
  createSyntheticTables,
  generateSyntheticIndex,
  SYNTHETIC_BUILD_ID,
  type SyntheticIndex,
  stateAt,
  writeSyntheticIndex,
} from "../support/syntheticIndex";

const SCHEMA = "synthetic";
let index: SyntheticIndex;
let reader: LockIndex;
let viaDrizzle: LockIndex;
let blocks: bigint[];

beforeAll(async () => {
  const probe = generateSyntheticIndex({ events: 3_000, owners: 40, seed: 7 });
  const first = probe.startBlock;
  const head = probe.head.block;
  const mid = first + (head - first) / 2n;
  // An early block, the middle, a late one, the head (a block without events) and the first.
  blocks = [first, first + 25n, mid, head - 3n, head];
  index = generateSyntheticIndex({ events: 3_000, owners: 40, seed: 7, snapshotAt: blocks });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index);
  // Each statement as text with $n placeholders (the API process's prepared path), here run by PGlite; the drizzle
  // path (Ponder's in-process db) is checked against it below.
  reader = createLockIndex({
    db: drizzle(client),
    schema: SCHEMA,
    prepared: ({ text, values }) => client.query(text, values) as Promise<{ rows: Record<string, unknown>[] }>,
    wholeIndex: ({ text, values }) => client.query(text, values) as Promise<{ rows: Record<string, unknown>[] }>,
  });
  viaDrizzle = createLockIndex({ db: drizzle(client), schema: SCHEMA });
}, 60_000);

const at = (block: bigint) => (block === index.head.block ? null : { block, time: index.blockTimes.get(block)! });
const live = (state: Map<bigint, LockRow>) => [...state.values()].filter((l) => !l.burned);
const low = (a: string | null) => (a === null ? null : a.toLowerCase());

describe("one rule at any block: the newest event row, or the merge that burned it", () => {
  it("the head is Ponder's checkpoint: block, timestamp and finalized block", async () => {
    const { head } = await reader.probe(index.head.block);
    expect(head).toEqual({
      block: index.head.block,
      time: index.head.time,
      finalized: index.head.block - 30n,
      build: buildDigest(SYNTHETIC_BUILD_ID),
    });
  });

  it("every lock equals the rules' row at each block; one minted later is null", async () => {
    for (const block of blocks) {
      const state = stateAt(index, block);
      const ids = [...state.keys()];
      const sample = ids.filter((_, i) => i % 37 === 0 || i === ids.length - 1);
      for (const id of sample) {
        const { value, block: answered, time, inRange } = await reader.lock(id, at(block));
        expect([answered, time, inRange]).toEqual([block, index.blockTimes.get(block), true]);
        const row = state.get(id)!;
        expect(value, `lock ${id} at ${block}`).toEqual({
          tokenId: id,
          owner: low(row.owner),
          amount: row.amount,
          lockEnd: row.lockEnd,
          autoMax: row.autoMax,
          listed: row.listed,
          burned: row.burned,
          createdBlock: row.createdBlock,
        });
      }
      const unborn = BigInt(ids.length + 1);
      expect((await reader.lock(unborn, at(block))).value).toBeNull();
    }
  });

  it("the burned kinds: merged away, unlocked, sold back then burned by the Furnace", async () => {
    const kinds = new Set<string>(index.events.map((e) => e.kind));
    for (const k of ["merge", "unlock", "transfer", "list", "unlist", "automax", "extend", "topup"]) {
      expect(kinds.has(k), k).toBe(true);
    }
    const merged = index.events.find((e) => e.kind === "merge")!;
    const { value } = await reader.lock(merged.fromTokenId!, null);
    expect(value).toMatchObject({ burned: true, owner: null, amount: 0n });
    // Just before its merge block it was live.
    const before = await reader.lock(merged.fromTokenId!, {
      block: merged.blockNumber - 1n,
      time: index.blockTimes.get(merged.blockNumber - 1n)!,
    });
    if (before.value !== null) expect(before.value.burned).toBe(false);
  });

  it("an owner's live locks by token id", async () => {
    for (const block of blocks) {
      const state = stateAt(index, block);
      const owners = [...new Set(live(state).map((l) => l.owner!))].slice(0, 12);
      for (const owner of [...owners, index.furnace]) {
        const expected = live(state)
          .filter((l) => l.owner === owner)
          .map((l) => l.tokenId)
          .sort((a, b) => (a < b ? -1 : 1));
        const { value } = await reader.locksOf(owner, at(block));
        expect(
          value.map((l) => l.tokenId),
          `${owner} at ${block}`,
        ).toEqual(expected);
      }
    }
  });

  it("histories page newest first by (block, log index) and add up to the whole history at the block", async () => {
    const byRecency = (a: LockEventRow, b: LockEventRow) =>
      a.blockNumber === b.blockNumber ? b.logIndex - a.logIndex : a.blockNumber > b.blockNumber ? -1 : 1;
    const merged = index.events.find((e) => e.kind === "merge")!;
    const sold = index.events.find((e) => e.kind === "transfer")!;
    const cases = [
      {
        of: { tokenId: merged.fromTokenId! },
        match: (e: LockEventRow) => [e.tokenId, e.fromTokenId].includes(merged.fromTokenId),
      },
      {
        of: { tokenId: merged.tokenId },
        match: (e: LockEventRow) => [e.tokenId, e.fromTokenId].includes(merged.tokenId),
      },
      {
        of: { account: merged.account },
        match: (e: LockEventRow) => e.account === merged.account || e.recipient === merged.account,
      },
      {
        of: { account: index.furnace },
        match: (e: LockEventRow) => e.account === index.furnace || e.recipient === index.furnace,
      },
      {
        of: { account: sold.account },
        match: (e: LockEventRow) => e.account === sold.account || e.recipient === sold.account,
      },
    ];
    for (const block of [index.head.block, blocks[2]!]) {
      for (const { of, match } of cases) {
        const expected = index.events.filter((e) => e.blockNumber <= block && match(e)).sort(byRecency);
        const got: string[] = [];
        let after: EventKey | null = null;
        for (let pages = 0; pages < 100; pages++) {
          const { value } = await reader.events(of, at(block), { limit: 3, after });
          got.push(...value.map((e) => `${e.txHash}-${e.logIndex}`));
          if (value.length < 3) break;
          const last = value[value.length - 1]!;
          after = { block: last.blockNumber, logIndex: last.logIndex };
        }
        expect(got, `${Object.values(of)[0]} at ${block}`).toEqual(expected.map((e) => e.id));
        expect(got.length).toBeGreaterThan(0);
      }
    }
  });

  it("the ve board: every holder with ve > 0, ve descending then address, equal to the rules' sums", async () => {
    for (const block of blocks) {
      const t = index.blockTimes.get(block)!;
      const sums = new Map<string, { ve: bigint; locked: bigint; locks: number }>();
      for (const l of live(stateAt(index, block))) {
        const key = l.owner!.toLowerCase();
        const s = sums.get(key) ?? { ve: 0n, locked: 0n, locks: 0 };
        sums.set(key, { ve: s.ve + lockVe(l, t), locked: s.locked + l.amount, locks: s.locks + 1 });
      }
      const expected = [...sums.entries()]
        .filter(([, s]) => s.ve > 0n)
        .map(([address, s]) => ({ address, ...s }))
        .sort((a, b) => (a.ve === b.ve ? (a.address < b.address ? -1 : 1) : a.ve > b.ve ? -1 : 1));
      const { value } = await reader.holders(at(block));
      expect(rowsOf(value), `board at ${block}`).toEqual(expected);
      if (block !== index.startBlock) expect(value.length).toBeGreaterThan(5);
      // The ranking kept as the statement's text (api/read/textRanking.ts): each row found, keyset pages after it.
      expected.forEach((row, i) => {
        expect(value.indexOf(row.address), `rank of ${row.address} at ${block}`).toBe(i);
        expect(value.indexOf(row.address.toUpperCase().replace("0X", "0x"))).toBe(i);
        expect(value.after(row)).toBe(i + 1);
        expect(value.after({ ve: row.ve + 1n, address: row.address })).toBe(i);
      });
      expect(value.get(expected.length)).toBeUndefined();
      expect(value.get(-1)).toBeUndefined();
    }
  });

  it("stats: totals, counts and the unlock weeks from the rules' rows", async () => {
    for (const block of blocks) {
      const t = index.blockTimes.get(block)!;
      const rows = live(stateAt(index, block));
      const plain = rows.filter((l) => !l.autoMax);
      const weeks = new Map<bigint, bigint>();
      for (const l of plain.filter((x) => x.lockEnd > t)) {
        weeks.set(l.lockEnd / WEEK, (weeks.get(l.lockEnd / WEEK) ?? 0n) + l.amount);
      }
      const veByOwner = new Map<string, bigint>();
      for (const l of rows) veByOwner.set(l.owner!, (veByOwner.get(l.owner!) ?? 0n) + lockVe(l, t));
      const sum = (xs: LockRow[]) => xs.reduce((a, l) => a + l.amount, 0n);
      const { value } = await reader.stats(at(block));
      expect(value).toEqual({
        totalLocked: sum(rows),
        totalVe: rows.reduce((a, l) => a + lockVe(l, t), 0n),
        holders: new Set(rows.map((l) => l.owner)).size,
        veHolders: [...veByOwner.values()].filter((v) => v > 0n).length,
        liveLocks: rows.length,
        autoMaxLocks: rows.filter((l) => l.autoMax).length,
        autoMaxLocked: sum(rows.filter((l) => l.autoMax)),
        expiredLocked: sum(plain.filter((l) => l.lockEnd <= t)),
        unlocksByWeek: weeks,
      });
    }
  });

  it("the drizzle path (bound values) reads exactly what the prepared path (text and $n) reads", async () => {
    const merged = index.events.find((e) => e.kind === "merge")!;
    for (const block of blocks) {
      const at_ = at(block);
      const [drizzled, prepared] = [await viaDrizzle.holders(at_), await reader.holders(at_)];
      expect({ ...drizzled, value: rowsOf(drizzled.value) }).toEqual({ ...prepared, value: rowsOf(prepared.value) });
      expect(await viaDrizzle.stats(at_)).toEqual(await reader.stats(at_));
      expect(await viaDrizzle.lock(merged.tokenId, at_)).toEqual(await reader.lock(merged.tokenId, at_));
      expect(await viaDrizzle.locksOf(merged.account, at_)).toEqual(await reader.locksOf(merged.account, at_));
      const page = { limit: 5, after: null };
      expect(await viaDrizzle.events({ account: merged.account }, at_, page)).toEqual(
        await reader.events({ account: merged.account }, at_, page),
      );
    }
  });

  it("a block below the head whose time nobody gave and without events: BlockTimeUnknownError, with the head", async () => {
    const withEvents = new Set(index.events.map((e) => e.blockNumber));
    const empty = [...index.blockTimes.keys()].find((b) => !withEvents.has(b) && b < index.head.block)!;
    const err = await reader.stats({ block: empty, time: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockTimeUnknownError);
    expect((err as BlockTimeUnknownError).head.block).toBe(index.head.block);
    // With events in it, the index knows the block's time itself.
    const busy = index.events[100]!.blockNumber;
    expect((await reader.stats({ block: busy, time: null })).time).toBe(index.blockTimes.get(busy));
  });

  it("a block above the head is out of range and reads nothing; the head is still reported", async () => {
    const beyond = { block: index.head.block + 1n, time: index.head.time + 60n };
    const answer = await reader.holders(beyond);
    expect(answer.inRange).toBe(false);
    expect(rowsOf(answer.value)).toEqual([]);
    expect(answer.head.block).toBe(index.head.block);
    expect((await reader.lock(1n, beyond)).value).toBeNull();
  });

  it("an index without a checkpoint has not started", async () => {
    const client = new PGlite();
    await createSyntheticTables((text) => client.query(text), "empty");
    const empty = createLockIndex({ db: drizzle(client), schema: "empty" });
    await expect(empty.stats(null)).rejects.toBeInstanceOf(IndexNotStartedError);
  });
});

describe("the source and the head in one statement (sourceHead, the webhooks' feeder's)", () => {
  it("is what source and probe say, on both paths; null where source is (no schema); not started as probe", async () => {
    for (const r of [reader, viaDrizzle]) {
      expect(await r.sourceHead!()).toEqual({ source: await r.source!(), head: (await r.probe(null)).head });
    }
    expect((await reader.sourceHead!())?.head.build).toBe(buildDigest(SYNTHETIC_BUILD_ID));
    const client = new PGlite();
    const none = createLockIndex({ db: drizzle(client), schema: "absent" });
    expect(await none.source!()).toBeNull();
    expect(await none.sourceHead!()).toBeNull();
    await createSyntheticTables((text) => client.query(text), "empty");
    const empty = createLockIndex({ db: drizzle(client), schema: "empty" });
    expect(await empty.source!()).not.toBeNull();
    await expect(empty.probe(null)).rejects.toBeInstanceOf(IndexNotStartedError);
    await expect(empty.sourceHead!()).rejects.toBeInstanceOf(IndexNotStartedError);
  });
});
