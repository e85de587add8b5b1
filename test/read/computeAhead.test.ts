/**
 * Computing a new head's answers ahead of its first reader (api/read/computeAhead.ts), over the real BlockMemo and the
 * real polled signal: nothing is computed ahead until an answer is read at the head; then each new head is computed as
 * soon as it is signalled (the reader that comes next computes nothing); only an answer read at the previous head is
 * computed for the next (a read now and then costs one computation more, not one per block); a burst of heads
 * computes the newest, not each; an answer not read for idleMs is no longer computed, and the signal is let go; a
 * failed probe of the head is told and the next head is computed again; a head signalled with its time (a NOTIFY's
 * checkpoint) is computed without a probe of the head; the answers are asked for in the order their readers first asked
 * at the last head (the head's lane runs one at a time).
 */
import { describe, expect, it } from "vitest";
import { BlockMemo } from "../../api/read/blockMemo";
import { ComputeAhead } from "../../api/read/computeAhead";
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

function setup(o: { loadMs?: number; idleMs?: number; failProbe?: () => boolean } = {}) {
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

  it("an answer not read at the previous head is not computed for the next: one read, at most one more computation", async () => {
    const s = setup();
    s.ahead.readAtHead(s.memo, 100n);
    s.setHead(101n);
    await until(() => s.computed.includes(101n));
    // Nobody read 101 at the head: 102 and 103 are left to their first readers.
    s.setHead(102n);
    await sleep(60);
    s.setHead(103n);
    await sleep(60);
    expect(s.computed).toEqual([101n]);
    expect(s.ahead.following).toBe(true);
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
});
