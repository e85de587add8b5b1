/**
 * Computing a new head's answers ahead of its first reader (api/read/computeAhead.ts), over the real BlockMemo and the
 * real polled signal: nothing is computed ahead until an answer is read at the head; then each new head is computed as
 * soon as it is signalled (the reader that comes next computes nothing); only an answer read at one of the last
 * AHEAD_BLOCKS heads is computed for the next (a read now and then costs that many computations more, not one per
 * block); a burst of heads
 * computes the newest, not each; an answer not read for idleMs is no longer computed, and the signal is let go; a
 * failed probe of the head is told and the next head is computed again; a head signalled with its time (a NOTIFY's
 * checkpoint) is computed without a probe of the head; the answers are asked for in the order their readers first asked
 * at the last head (the head's lane runs one at a time); what a reader made of an answer at the head (a page's text,
 * keptFields) is made of the next head's as soon as it is computed, before that head's first reader continues, the
 * last FOLLOWED_PER_ANSWER kinds only, a failure told, forgotten with the answer; and of an answer made before its
 * block (madeAhead: the ve board's next ranking, between heads) at once, only while the answer is read.
 */
import { describe, expect, it } from "vitest";
import { keptFields } from "../../api/index/answer";
import { BlockMemo } from "../../api/read/blockMemo";
import { AHEAD_BLOCKS, ComputeAhead, FOLLOWED_PER_ANSWER } from "../../api/read/computeAhead";
import { PolledSignal } from "../../api/read/indexSignal";
import { toldSignal } from "../support/toldSignal";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(5);
  }
}

function setup(o: { loadMs?: number; idleMs?: number; blocks?: number; failProbe?: () => boolean } = {}) {
  let head = 100n;
  const computed: bigint[] = [];
  const memo = new BlockMemo<bigint>({
    name: "board",
    load: async (at) => {
      await sleep(o.loadMs ?? 0);
      computed.push(at.block);
      return at.block;
    },
  });
  const signal = new PolledSignal(async () => head, 10);
  const outcomes: string[] = [];
  let now = 0;
  const ahead = new ComputeAhead({
    signal,
    head: async () => {
      if (o.failProbe?.()) throw new Error("index down");
      return { block: head, time: head * 2n };
    },
    idleMs: o.idleMs ?? 60_000,
    ...(o.blocks === undefined ? {} : { blocks: o.blocks }),
    now: () => now,
    onAhead: (name, outcome) => outcomes.push(`${name}:${outcome}`),
  });
  return {
    memo,
    ahead,
    computed,
    outcomes,
    setHead: (b: bigint) => {
      head = b;
    },
    advanceClock: (ms: number) => {
      now += ms;
    },
  };
}

/** A memo followed over a told signal (a NOTIFY's head and time), idle after 1 s of the returned clock. */
function toldAhead() {
  const { tell, signal } = toldSignal();
  const memo = new BlockMemo<bigint>({ name: "board", load: async (x) => x.block });
  const outcomes: string[] = [];
  const clock = { now: 0 };
  const ahead = new ComputeAhead({
    signal,
    head: async () => ({ block: 0n, time: 0n }),
    idleMs: 1_000,
    now: () => clock.now,
    onAhead: (name, outcome) => outcomes.push(`${name}:${outcome}`),
  });
  return { tell, memo, ahead, outcomes, clock };
}

describe("ComputeAhead", () => {
  it("computes nothing and follows no signal before an answer is read at the head", async () => {
    const s = setup();
    s.setHead(101n);
    await sleep(60);
    expect(s.ahead.following).toBe(false);
    expect(s.computed).toEqual([]);
  });

  it("computes each new head as it is signalled, so its first reader computes nothing", async () => {
    const s = setup();
    await s.memo.get({ block: 100n, time: 200n }, "head");
    s.ahead.readAtHead(s.memo, 100n);
    expect(s.ahead.following).toBe(true);
    // The signal's first poll reports the present head (100): already computed, nothing more.
    await sleep(40);
    expect(s.computed).toEqual([100n]);
    for (const b of [101n, 102n, 103n]) {
      s.setHead(b);
      await until(() => s.memo.has(b) && s.computed.includes(b));
      // The reader of the new head finds it computed: the load does not run again.
      expect(await s.memo.get({ block: b, time: b * 2n }, "head")).toBe(b);
      s.ahead.readAtHead(s.memo, b);
    }
    expect(s.computed).toEqual([100n, 101n, 102n, 103n]);
    expect(s.outcomes.filter((x) => x === "board:ok").length).toBeGreaterThanOrEqual(3);
    s.ahead.close();
  });

  it("an answer not read at one of the last `blocks` heads is not computed: one read, at most `blocks` more computations", async () => {
    const s = setup({ blocks: 2 });
    s.ahead.readAtHead(s.memo, 100n);
    for (const b of [101n, 102n]) {
      s.setHead(b);
      await until(() => s.computed.includes(b));
    }
    // Nobody read 101 or 102 at the head: 103 and 104 are left to their first readers.
    s.setHead(103n);
    await sleep(60);
    s.setHead(104n);
    await sleep(60);
    expect(s.computed).toEqual([101n, 102n]);
    expect(s.ahead.following).toBe(true);
    // Read at 104: 105 and 106 computed again.
    s.ahead.readAtHead(s.memo, 104n);
    s.setHead(105n);
    await until(() => s.computed.includes(105n));
    s.ahead.close();
  });

  it(`by default an answer read within the last ${AHEAD_BLOCKS} heads is computed ahead`, async () => {
    const s = setup();
    s.ahead.readAtHead(s.memo, 100n);
    for (let b = 101n; b <= 100n + BigInt(AHEAD_BLOCKS) + 1n; b++) {
      s.setHead(b);
      await sleep(40);
    }
    expect(s.computed).toEqual(Array.from({ length: AHEAD_BLOCKS }, (_, i) => 101n + BigInt(i)));
    s.ahead.close();
  });

  it("a burst of heads while one computes computes the newest, not each", async () => {
    const s = setup({ loadMs: 150 });
    s.ahead.readAtHead(s.memo, 100n);
    s.setHead(101n);
    await until(() => s.computed.length > 0 || s.memo.has(101n));
    // While 101 computes (150 ms), the heads 102…105 are signalled (one poll each 10 ms).
    for (const b of [102n, 103n, 104n, 105n]) {
      s.setHead(b);
      await sleep(25);
    }
    // Read meanwhile at the head before the newest (a reader keeps up): the newest is computed ahead.
    s.ahead.readAtHead(s.memo, 104n);
    await until(() => s.computed.includes(105n), 3_000);
    await sleep(200);
    expect(s.computed[0]).toBe(101n);
    expect(s.computed.at(-1)).toBe(105n);
    // 102–104 were replaced by the newer head waiting behind the computation: at most one of them ran.
    expect(s.computed.filter((b) => b > 101n && b < 105n).length).toBeLessThanOrEqual(1);
    s.ahead.close();
  });

  it("stops computing, and lets the signal go, once nothing is read at the head for idleMs", async () => {
    const s = setup({ idleMs: 1_000 });
    s.ahead.readAtHead(s.memo, 100n);
    s.setHead(101n);
    await until(() => s.computed.includes(101n));
    s.advanceClock(1_001);
    s.setHead(102n);
    await until(() => !s.ahead.following);
    await sleep(50);
    expect(s.computed).not.toContain(102n);
    // A reader at the head follows again.
    s.ahead.readAtHead(s.memo, 102n);
    s.setHead(103n);
    await until(() => s.computed.includes(103n));
    s.ahead.close();
  });

  it("a failed probe of the head is told; the next head is computed", async () => {
    let fail = true;
    const s = setup({ failProbe: () => fail });
    s.ahead.readAtHead(s.memo, 100n);
    s.setHead(101n);
    await until(() => s.outcomes.includes("board:error"));
    expect(s.computed).toEqual([]);
    fail = false;
    s.ahead.readAtHead(s.memo, 101n);
    s.setHead(102n);
    await until(() => s.computed.includes(102n));
    s.ahead.close();
  });

  it("a head signalled with its time (a NOTIFY's checkpoint) is computed at that time, without a probe", async () => {
    const { tell, signal } = toldSignal();
    const at: { block: bigint; time: bigint }[] = [];
    const memo = new BlockMemo<bigint>({
      name: "board",
      load: async (x) => {
        at.push({ block: x.block, time: x.time });
        return x.block;
      },
    });
    let probes = 0;
    const ahead = new ComputeAhead({
      signal,
      head: async () => {
        probes++;
        return { block: 101n, time: 1n };
      },
    });
    ahead.readAtHead(memo, 100n);
    tell(101n, 1_700_000_002n);
    await until(() => memo.has(101n));
    expect(at).toEqual([{ block: 101n, time: 1_700_000_002n }]);
    expect(probes).toBe(0);
    // Without its time (a polled signal), the head is probed.
    ahead.readAtHead(memo, 101n);
    tell(102n);
    await until(() => probes === 1);
    ahead.close();
  });

  it("asks for the next head's answers in the order readers first asked for them at the last head", async () => {
    const { tell, signal } = toldSignal();
    const asked: string[] = [];
    const memoOf = (name: string) =>
      new BlockMemo<bigint>({
        name,
        load: async (x) => {
          asked.push(`${name}@${x.block}`);
          return x.block;
        },
      });
    const [ve, day, week] = [memoOf("ve"), memoOf("24h"), memoOf("7d")];
    const ahead = new ComputeAhead({ signal, head: async () => ({ block: 0n, time: 0n }) });
    const signalled = (block: bigint) => {
      tell(block, block * 2n);
    };
    // At block 100 the reader asked 24h, 7d, then ve; at 101 ve first, then 24h (again, and once more), then 7d.
    ahead.readAtHead(day, 100n);
    ahead.readAtHead(week, 100n);
    ahead.readAtHead(ve, 100n);
    signalled(101n);
    await until(() => asked.length === 3);
    expect(asked).toEqual(["24h@101", "7d@101", "ve@101"]);
    ahead.readAtHead(ve, 101n);
    ahead.readAtHead(day, 101n);
    ahead.readAtHead(day, 101n);
    ahead.readAtHead(week, 101n);
    ahead.readAtHead(ve, 101n);
    signalled(102n);
    await until(() => asked.length === 6);
    expect(asked.slice(3)).toEqual(["ve@102", "24h@102", "7d@102"]);
    ahead.close();
  });

  it("asks first for the answers read at the newest head; what was made of an older one waits a turn of the loop", async () => {
    const { tell, signal } = toldSignal();
    const events: string[] = [];
    const memoOf = (name: string) =>
      new BlockMemo<bigint>({
        name,
        load: async (x) => {
          events.push(`${name}@${x.block}`);
          return x.block;
        },
      });
    const [board, stats] = [memoOf("board"), memoOf("stats")];
    const ahead = new ComputeAhead({ signal, head: async () => ({ block: 0n, time: 0n }) });
    // A dashboard read the board at 100, then moved to the stats at 101 and 102.
    ahead.readAtHead(board, 100n);
    ahead.follow(board, "page", (v) => events.push(`board page@${v}`));
    ahead.readAtHead(stats, 101n);
    ahead.readAtHead(stats, 102n);
    ahead.follow(stats, "text", (v) => {
      events.push(`stats text@${v}`);
      // A reader of the stats, come at once: the board's page is not made before it continues.
      setImmediate(() => events.push("reader"));
    });
    tell(103n, 206n);
    await until(() => events.length === 5);
    expect(events).toEqual(["stats@103", "board@103", "stats text@103", "reader", "board page@103"]);
    ahead.close();
  });

  it("makes what a reader made of the head's answer for the next head before that head's first reader continues", async () => {
    const { tell, signal } = toldSignal();
    let loading = 0;
    const memo = new BlockMemo<{ block: bigint }>({
      name: "board",
      load: async (x) => {
        loading++;
        await sleep(30);
        return { block: x.block };
      },
    });
    const outcomes: string[] = [];
    const ahead = new ComputeAhead({
      signal,
      head: async () => ({ block: 0n, time: 0n }),
      onAhead: (name, outcome) => outcomes.push(`${name}:${outcome}`),
    });
    const scope = {};
    let bodies = 0;
    // What the route does: the page's text kept beside the block's answer (api/index/answer.ts keptFields).
    const page = (value: { block: bigint }) =>
      keptFields(scope, value, "0:2", () => {
        bodies++;
        return { block: value.block.toString() };
      });
    const at100 = await memo.get({ block: 100n, time: 200n }, "head");
    expect(page(at100)).toBe('"block":"100"');
    ahead.readAtHead(memo, 100n);
    ahead.follow(memo, "0+2", page);
    tell(101n, 202n);
    await until(() => loading === 2);
    // The head's first reader joins the computation under way: when it continues, the page is made and kept.
    const at101 = await memo.get({ block: 101n, time: 202n }, "head");
    expect(bodies).toBe(2);
    expect(page(at101)).toBe('"block":"101"');
    expect(bodies).toBe(2);
    expect(outcomes).toEqual(["board:ok"]);
    ahead.close();
  });

  it(`makes ahead the last ${FOLLOWED_PER_ANSWER} kinds made of an answer; a failure is told; forgotten with the answer`, async () => {
    const { tell, memo, ahead, outcomes, clock } = toldAhead();
    const made: string[] = [];
    ahead.readAtHead(memo, 100n);
    for (const key of ["a", "b", "c"]) ahead.follow(memo, key, (v) => made.push(`${key}@${v}`));
    tell(101n, 202n);
    await until(() => outcomes.length === 1);
    expect(made).toEqual(["b@101", "c@101"]);
    expect(outcomes).toEqual(["board:ok"]);
    // A kind whose making throws: the others are made, the answer's outcome is an error (counted).
    ahead.readAtHead(memo, 101n);
    ahead.follow(memo, "b", () => {
      throw new Error("bad page");
    });
    tell(102n, 204n);
    await until(() => outcomes.length === 2);
    expect(made).toEqual(["b@101", "c@101", "c@102"]);
    expect(outcomes[1]).toBe("board:error");
    // Not read for idleMs: the answer and what was made of it are forgotten; a new reader follows it afresh.
    clock.now += 1_001;
    tell(103n, 206n);
    await until(() => !ahead.following);
    ahead.readAtHead(memo, 103n);
    tell(104n, 208n);
    await until(() => memo.has(104n));
    await sleep(20);
    expect(made).toEqual(["b@101", "c@101", "c@102"]);
    ahead.close();
  });

  it("makes what readers made of an answer made before its block (madeAhead) while the answer is read, not after", async () => {
    const { tell, memo, ahead, outcomes, clock } = toldAhead();
    const other = new BlockMemo<bigint>({ name: "stats", load: async (x) => x.block });
    const made: string[] = [];
    // Not read at the head yet: nothing is made of it.
    ahead.madeAhead(memo, 100n);
    expect(made).toEqual([]);
    ahead.readAtHead(memo, 100n);
    ahead.follow(memo, "page", (v) => made.push(`page@${v}`));
    // Made at once, in the caller's turn (between heads), and not counted as an answer computed ahead.
    ahead.madeAhead(memo, 101n);
    expect(made).toEqual(["page@101"]);
    expect(outcomes).toEqual([]);
    // Another memo's answer runs only its own followers (it has none).
    ahead.madeAhead(other, 101n);
    expect(made).toEqual(["page@101"]);
    // A making that throws is counted as an error.
    ahead.follow(memo, "bad", () => {
      throw new Error("bad page");
    });
    ahead.madeAhead(memo, 102n);
    expect(made).toEqual(["page@101", "page@102"]);
    expect(outcomes).toEqual(["board:error"]);
    // Not read for idleMs: nothing is made any more.
    clock.now += 1_001;
    ahead.madeAhead(memo, 103n);
    expect(made).toEqual(["page@101", "page@102"]);
    tell(101n, 202n);
    ahead.close();
  });
});
