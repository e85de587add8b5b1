/**
 * A head whose commit wrote no lock event takes its changed locks from the head before it (api/read/quietBlocks.ts):
 * first QuietBlocks' rules alone (when an earlier head's changes are taken, when the statement is read), then on the
 * real app over a synthetic index (in-memory PGlite) with the signal told by the test as the NOTIFY would, write
 * counts included: at a quiet head the ve page, a rank lookup and the stats are answered with no changed-locks
 * statement waited for, and equal, byte for byte but the freshness fields, an app without the signal asked at that
 * block; the statement still runs after (confirmed); a head whose events were written gets its own statement; a count
 * that lied (a head with lock events told the count of the head before) is caught by that check — what was made of it
 * forgotten, the next reader answered what the index holds, the count's sequence not trusted again; a new sequence is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LockChange, VeLocksAnswer } from "../../api/read/contract";
import {
  applyCarried,
  type CarriedRow,
  CONFIRM_AFTER_MS,
  parseCarried,
  QuietBlocks,
  type QuietOutcome,
} from "../../api/read/quietBlocks";
import { sameChanges } from "../../api/read/veBoard";
import { LOCK_EVENT_KINDS } from "../../indexer/rules";
import { expectSamePages, readIndex as read } from "../support/appAnswers";
import { metricOf, type ToldApps, toldApps } from "../support/toldApps";

const answerAt = (block: bigint, changes: LockChange[], finalized = 1n): VeLocksAnswer<LockChange> => ({
  head: { block, time: block * 2n, finalized },
  block,
  time: block * 2n,
  inRange: true,
  value: changes,
  finalizedTime: finalized * 2n,
});

describe("QuietBlocks", () => {
  it("takes an earlier head's changes only for a later head told the same count, read after its notification", async () => {
    let told: { block: bigint; writes: string | undefined }[] = [];
    const tell = (block: bigint, writes?: string) => told.push({ block, writes });
    const outcomes: QuietOutcome[] = [];
    const differed: bigint[] = [];
    const quiet = new QuietBlocks({
      told: {
        writesAt: (block) => told.find((t) => t.block === block)?.writes,
        get lastWrites() {
          return told.at(-1);
        },
      },
      onOutcome: (o) => outcomes.push(o),
      onDiffered: (b) => differed.push(b),
    });
    const anchor = { block: 1n, time: 2n };
    const changes: LockChange[] = [{ tokenId: 7n, lock: null }];
    let reads = 0;
    let truth = changes;
    const at = (block: bigint) => ({ block, time: block * 2n });
    const delta = (block: bigint, from = anchor) =>
      quiet.delta(from, at(block), async () => {
        reads++;
        return answerAt(block, truth);
      });
    // The statement after a taken block is sent CONFIRM_AFTER_MS later, away from the commit's first readers.
    const settle = () => new Promise((r) => setTimeout(r, CONFIRM_AFTER_MS + 50));

    // A statement sent before its block was notified says nothing of that block's count.
    tell(9n, "5.3");
    await delta(10n);
    tell(10n, "5.3");
    expect((await delta(10n)).block).toBe(10n);
    expect(reads).toBe(2);
    // 11 told the count 10 was read with: taken, with 11's block, time and head, the statement run after.
    tell(11n, "5.3");
    const taken = await delta(11n);
    // Sealed by its basis: 10's statement (no seal: a stand-in's), no lock event carried since (cursorSeal.ts).
    expect(taken).toEqual({
      ...answerAt(11n, changes),
      head: { block: 11n, time: 22n, finalized: 1n },
      basis: { block: 10n, seal: null, lines: "" },
    });
    await new Promise((r) => setTimeout(r, CONFIRM_AFTER_MS / 2));
    expect(reads).toBe(2); // not yet
    await settle();
    expect(reads).toBe(3);
    expect(outcomes).toEqual(["reused", "confirmed"]);
    // Not taken: another anchor, a lower block, a count not told, another count.
    reads = 0;
    await delta(11n, { block: 2n, time: 4n });
    await delta(10n);
    tell(12n);
    await delta(12n);
    tell(13n, "5.4");
    await delta(13n);
    expect(reads).toBe(4);
    expect(outcomes).toEqual(["reused", "confirmed"]);
    // 14 told 13's count, but a lock did change (a write the count missed): taken, then contradicted by the
    // statement after — 14 and above forgotten, the sequence not trusted again.
    tell(14n, "5.4");
    truth = [{ tokenId: 8n, lock: null }];
    expect((await delta(14n)).value).toEqual(changes);
    await settle();
    expect(outcomes.slice(-2)).toEqual(["reused", "differed"]);
    expect(differed).toEqual([14n]);
    tell(15n, "5.4");
    reads = 0;
    expect((await delta(15n)).value).toEqual(truth);
    tell(16n, "5.4");
    expect((await delta(16n)).value).toEqual(truth);
    expect(reads).toBe(2);
    // Another sequence (the triggers installed again) is trusted.
    told = [];
    tell(17n, "6.0");
    await delta(17n);
    tell(18n, "6.0");
    await delta(18n);
    await settle();
    expect(outcomes.slice(-2)).toEqual(["reused", "confirmed"]);
    // A reorg before the check is sent (the counts told cleared): the block it took was replaced, and the statement
    // would read the other branch's; no check, no outcome.
    tell(19n, "6.0");
    reads = 0;
    await delta(19n);
    told = [];
    await settle();
    expect(reads).toBe(0);
    expect(outcomes.slice(-2)).toEqual(["confirmed", "reused"]);
    // A check whose statement throws as it is sent (from its timer): no outcome, and no uncaught error (which would
    // end the process, and fails this test).
    tell(20n, "6.0");
    await quiet.delta(anchor, at(20n), async () => answerAt(20n, truth));
    tell(21n, "6.0");
    let sent = 0;
    await quiet.delta(anchor, at(21n), () => {
      sent++;
      throw new Error("lane full");
    });
    await settle();
    expect(sent).toBe(1);
    expect(outcomes.slice(-3)).toEqual(["reused", "reused", "confirmed"]); // 20 taken, 21 taken, 20's check
  });
});

let apps: ToldApps;

beforeAll(async () => {
  apps = await toldApps(23);
}, 60_000);

afterAll(async () => {
  await apps?.close();
});

const quietCount = (outcome: QuietOutcome) =>
  metricOf(apps.listening, `api_index_ve_quiet_blocks_total{outcome="${outcome}"}`);

const until = async (check: () => Promise<boolean>) => {
  const end = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("quiet heads on the real app", () => {
  it("take the head before's changes, answer what the index holds, and a lying count is caught", async () => {
    const { index, listening: quietApp, plain, commit } = apps;
    const written = new Set(index.events.map((e) => e.blockNumber));
    const blocks = [...index.blockTimes.keys()].sort((a, b) => (a < b ? -1 : 1));
    // Two quiet blocks after a block with events, then a block with events, well above the finalized lag's anchor.
    const p = blocks.find(
      (b, i) => i > blocks.length - 60 && written.has(b) && !written.has(b + 1n) && !written.has(b + 2n),
    )!;
    expect(p, "a block with events followed by two quiet ones").toBeDefined();
    // The second a block with a new lock (its token in no earlier block's changes).
    const b1 = blocks.find((b) => b > p + 2n && written.has(b))!;
    const b2 = blocks.find((b) => b > b1 && index.events.some((e) => e.blockNumber === b && e.kind === "create"))!;
    expect(b2, "a block with events, then one with a new lock").toBeDefined();
    const owner = index.events.find((e) => e.owner !== null && e.blockNumber <= p - 50n)!.owner!;
    const paths = ["/leaderboards/ve?limit=5", `/leaderboards/ve/${owner}`, "/stats"];
    const same = async (b: bigint) => {
      for (const path of paths) {
        const answer = await read(quietApp, path);
        expect(answer.blockNumber, path).toBe(String(b));
        const pinned = await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${b}`);
        await expectSamePages({ app: quietApp, answer }, { app: plain, answer: pinned }, path, `${path} at ${b}`);
      }
    };

    await commit(p, "7.10");
    await same(p);
    // The quiet blocks: no statement waited for (the check after is the only one), the answers the index's.
    for (const q of [p + 1n, p + 2n]) {
      const [reused, confirmed, before] = [
        await quietCount("reused"),
        await quietCount("confirmed"),
        apps.deltaStatements(),
      ];
      await commit(q, "7.10");
      await same(q);
      expect(await quietCount("reused")).toBe(reused + 1);
      await until(async () => (await quietCount("confirmed")) === confirmed + 1);
      expect(apps.deltaStatements()).toBe(before + 1);
    }
    // A block with events: its own statement.
    let reused = await quietCount("reused");
    await commit(b1, "7.11");
    await same(b1);
    expect(await quietCount("reused")).toBe(reused);
    // A count that lies: b2's events told with b1's count. Taken, the check contradicts it, and the next read is the
    // index's (what was made of b2 forgotten); the sequence is then not trusted.
    await commit(b2, "7.11");
    await read(quietApp, "/leaderboards/ve?limit=5");
    expect(await quietCount("reused")).toBe(reused + 1);
    await until(async () => (await quietCount("differed")) === 1);
    await same(b2);
    const q2 = blocks.find((b) => b > b2 && !written.has(b))!;
    reused = await quietCount("reused");
    await commit(q2, "7.11");
    await same(q2);
    expect(await quietCount("reused")).toBe(reused);
    // The triggers installed again: a new sequence, trusted.
    const q3 = blocks.find((b) => b > q2 && !written.has(b) && !written.has(b + 1n))!;
    await commit(q3, "8.0");
    await same(q3);
    await commit(q3 + 1n, "8.0");
    await same(q3 + 1n);
    expect(await quietCount("reused")).toBe(reused + 1);
  });
});

describe("carried lock events", () => {
  const row = (token: bigint, o: Partial<CarriedRow> = {}): CarriedRow => ({
    tokenId: token,
    owner: `0x${"ab".repeat(20)}`,
    amount: 10n,
    lockEnd: 100n,
    autoMax: false,
    burned: false,
    fromTokenId: null,
    block: 11n,
    logIndex: 0n,
    ...o,
  });
  const lock = (token: bigint, amount = 10n) => ({
    tokenId: token,
    owner: `0x${"ab".repeat(20)}` as const,
    amount,
    lockEnd: 100n,
    autoMax: false,
  });

  it("parses only what the trigger writes", () => {
    const owner = `0x${"ab".repeat(20)}`;
    expect(parseCarried(`5.2:10:7,${owner},10,100,t,f,,11,0;8,,0,90,f,t,7,11,1`)).toEqual({
      rewrites: "5.2",
      from: 10n,
      rows: [
        row(7n, { autoMax: true }),
        row(8n, { owner: "", amount: 0n, lockEnd: 90n, burned: true, fromTokenId: 7n, logIndex: 1n }),
      ],
      body: `7,${owner},10,100,t,f,,11,0;8,,0,90,f,t,7,11,1`,
    });
    expect(parseCarried("5.2:10:")).toEqual({ rewrites: "5.2", from: 10n, rows: [], body: "" });
    for (const bad of [
      "5:10:",
      "5.2:x:",
      "5.2:10",
      "5.2:10::",
      `5.2:10:7,${owner},10,100,t,f,,11`,
      `5.2:10:7,${owner.toUpperCase()},10,100,t,f,,11,0`,
      `5.2:10:7,${owner},10,100,yes,f,,11,0`,
      `5.2:10:7,${owner},-1,100,t,f,,11,0`,
    ]) {
      expect(parseCarried(bad), bad).toBeUndefined();
    }
  });

  it("applies a block's events to the changes before it as the statement reads them, or declines", () => {
    const before: LockChange[] = [
      { tokenId: 1n, lock: lock(1n) },
      { tokenId: 2n, lock: null },
    ];
    const byToken = (cs: LockChange[] | undefined) => new Map(cs?.map((c) => [c.tokenId, c.lock]));
    // A top-up of 1, a new lock 3 then merged into 4 in the same block (3 dead, 4 its newest row), 5 burned.
    const next = applyCarried(
      before,
      [
        row(1n, { amount: 15n, logIndex: 0n }),
        row(3n, { logIndex: 1n }),
        row(4n, { amount: 20n, fromTokenId: 3n, logIndex: 2n }),
        row(5n, { owner: "", amount: 0n, burned: true, block: 12n }),
      ],
      10n,
      12n,
    );
    expect(byToken(next)).toEqual(
      new Map([
        [1n, lock(1n, 15n)],
        [2n, null],
        [3n, null],
        [4n, lock(4n, 20n)],
        [5n, null],
      ]),
    );
    // In token order, as the statement's list is (the same entries where a token did not change); from a list in
    // another order (made by hand), the same changes.
    expect(next!.map((c) => c.tokenId)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(next![1]).toBe(before[1]);
    const rows = [row(3n, { logIndex: 1n }), row(4n, { amount: 20n, fromTokenId: 3n, logIndex: 2n })];
    expect(byToken(applyCarried([...before].reverse(), rows, 10n, 11n))).toEqual(
      byToken(applyCarried(before, rows, 10n, 11n)),
    );
    expect(applyCarried([...before].reverse(), [row(2n)], 10n, 11n)).toBeUndefined();
    // A token merged from whose own rows are older: dead, listed.
    expect(byToken(applyCarried(before, [row(4n, { fromTokenId: 1n })], 10n, 11n)).get(1n)).toBeNull();
    // Declined: a row outside (from, to], rows out of order, a token dead before with a live row, a live row
    // without an owner.
    expect(applyCarried(before, [row(1n, { block: 10n })], 10n, 11n)).toBeUndefined();
    expect(applyCarried(before, [row(1n, { block: 12n })], 10n, 11n)).toBeUndefined();
    expect(applyCarried(before, [row(1n, { logIndex: 2n }), row(3n, { logIndex: 1n })], 10n, 11n)).toBeUndefined();
    expect(applyCarried(before, [row(2n)], 10n, 11n)).toBeUndefined();
    expect(applyCarried(before, [row(3n, { owner: "" })], 10n, 11n)).toBeUndefined();
  });
});

describe("blocks with lock events on the real app", () => {
  let carriedApps: ToldApps;
  beforeAll(async () => {
    carriedApps = await toldApps(31);
  }, 60_000);
  afterAll(async () => {
    await carriedApps?.close();
  });
  const count = (outcome: QuietOutcome) =>
    metricOf(carriedApps.listening, `api_index_ve_quiet_blocks_total{outcome="${outcome}"}`);

  it("the carried events applied equal the statement at every block with events, merges and burns included", async () => {
    const { index, carriedSince } = carriedApps;
    const written = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));
    const anchor = written[0]! + 1n;
    const at = (block: bigint) => ({ block, time: index.blockTimes.get(block)! });
    const anchorAt = at(anchor);
    const kinds = new Set<string>();
    let applied = 0;
    let declined = 0;
    let widest = 0;
    // Every next block with events, every third one (a gap of several blocks, as after a quiet stretch), and every
    // twelfth (spans of more rows than the notification carried before it held 48).
    for (const gap of [1, 3, 12]) {
      for (let i = 0; i + gap < written.length; i += gap) {
        const [p, n] = [written[i]!, written[i + gap]!];
        if (p <= anchor) continue;
        const carried = parseCarried(await carriedSince(p, n, "1.0"))!;
        widest = Math.max(widest, carried.rows.length);
        const before = await carriedApps.statementAt(anchorAt, at(p));
        const truth = await carriedApps.statementAt(anchorAt, at(n));
        const made = applyCarried(before.value, carried.rows, p, n);
        if (made === undefined) {
          declined++;
          continue;
        }
        applied++;
        for (const e of index.events) if (e.blockNumber > p && e.blockNumber <= n) kinds.add(e.kind);
        expect(sameChanges(made, truth.value), `${p} → ${n}`).toBe(true);
        // Entry for entry, in the statement's token order (what the next block's list is compared with, side by side).
        expect(made, `${p} → ${n}`).toEqual(truth.value);
      }
    }
    expect(applied).toBeGreaterThan(200);
    expect(declined).toBe(0);
    expect(widest).toBeGreaterThan(16);
    // Every kind of event among them: merges (a token dead, its lock moved), unlocks and sell-backs (burned).
    expect([...kinds].sort()).toEqual([...LOCK_EVENT_KINDS].sort());
  });

  it("take the head before's changes with the carried events applied, and a carried lie is caught", async () => {
    const { index, listening, plain, commit, carriedSince } = carriedApps;
    const written = [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));
    const blocks = [...index.blockTimes.keys()].sort((a, b) => (a < b ? -1 : 1));
    const top = blocks.at(-1)!;
    // Blocks with events in the last 60 blocks (well above the anchor, 200 blocks back).
    const recent = written.filter((b) => b > top - 60n && b < top);
    expect(recent.length, "blocks with events near the top").toBeGreaterThanOrEqual(12);
    const owner = index.events.find((e) => e.owner !== null && e.blockNumber <= top - 100n)!.owner!;
    const paths = ["/leaderboards/ve?limit=5", `/leaderboards/ve/${owner}`, "/stats"];
    const same = async (b: bigint) => {
      for (const path of paths) {
        const answer = await read(listening, path);
        expect(answer.blockNumber, path).toBe(String(b));
        const pinned = await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${b}`);
        await expectSamePages({ app: listening, answer }, { app: plain, answer: pinned }, path, `${path} at ${b}`);
      }
    };
    let head = recent[0]! - 1n;
    let seq = 0;
    const step = async (to: bigint, rewrites = "3.0", carried?: string) => {
      const from = head;
      head = to;
      await commit(to, `9.${++seq}`, carried ?? (await carriedSince(from, to, rewrites)));
    };
    await step(recent[0]!);
    await same(recent[0]!);
    // Each next block with events, one at a time and then over a gap of several: no statement waited (the check after
    // is the only one), the answers the index's.
    for (const b of [recent[1]!, recent[2]!, recent[4]!]) {
      const [carried, confirmed, before] = [
        await count("carried"),
        await count("confirmed"),
        carriedApps.deltaStatements(),
      ];
      await step(b);
      await same(b);
      expect(await count("carried"), `carried at ${b}`).toBe(carried + 1);
      await until(async () => (await count("confirmed")) === confirmed + 1);
      expect(carriedApps.deltaStatements()).toBe(before + 1);
    }
    // A quiet block (the same write count: its changes the head before's), then a block with events carried from it.
    const e = written.find((b) => b > head && !written.includes(b + 1n) && written.some((w) => w > b + 1n && w < top))!;
    await step(e);
    await same(e);
    const quiet = e + 1n;
    const reused = await count("reused");
    await commit(quiet, `9.${seq}`, `3.0:${head}:`);
    head = quiet;
    await same(quiet);
    expect(await count("reused")).toBe(reused + 1);
    const next = written.find((b) => b > quiet)!;
    let carried = await count("carried");
    await step(next);
    await same(next);
    expect(await count("carried")).toBe(carried + 1);
    // A rewrite between the two commits (a revert's deletes: another rewrites count): the statement is read.
    carried = await count("carried");
    const later = written.filter((b) => b > next);
    await step(later[0]!, "3.1");
    await same(later[0]!);
    expect(await count("carried")).toBe(carried);
    // The next head carries from that one (its rewrites count is the new one's).
    await step(later[1]!, "3.1");
    await same(later[1]!);
    expect(await count("carried")).toBe(carried + 1);
    // Carried events that lie (the block's own events left out): taken, the check contradicts them, what was made
    // of the block is forgotten and the next read is the index's; the sequence is then not trusted.
    carried = await count("carried");
    const lie = later[2]!;
    await step(lie, "3.1", `3.1:${head}:`);
    await read(listening, "/leaderboards/ve?limit=5");
    expect(await count("carried")).toBe(carried + 1);
    await until(async () => (await count("differed")) === 1);
    await same(lie);
    const after = written.find((b) => b > lie)!;
    await step(after, "3.1");
    await same(after);
    expect(await count("carried")).toBe(carried + 1);
  });
});
