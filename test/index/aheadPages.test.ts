/**
 * The head's pages made ahead (issue 33, item 6; api/read/computeAhead.ts follow): a page read at the head — the ve
 * board's first page, the stats, a duration board's first page — is made into text for each next head as soon as
 * the index commits it, before its first reader. On the real app over a synthetic index (in-memory PGlite), the
 * signal told by the test as a NOTIFY would: once a new head is computed ahead, its first reader's answer is, byte
 * for byte but the freshness fields, what an app that made nothing ahead answers for that block, and its nextCursor
 * leads to the same second page. (That the reader is answered from the text made ahead, not made again, is
 * test/read/computeAhead.test.ts's; the time it saves, bench/first-reader.ts's.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type IndexBody, ofBlock, readIndex as read } from "../support/appAnswers";
import type { SyntheticIndex } from "../support/syntheticIndex";
import { metricOf, type ToldApps, toldApps } from "../support/toldApps";

const BASE = "/api/index/v1";

let apps: ToldApps;
let index: SyntheticIndex;
/** Follows the index's signal: computes each new head's answers, and the pages read of them, ahead. */
let ahead: ToldApps["listening"];
/** No signal: makes every answer on its first request. */
let plain: ToldApps["plain"];

const commit = (block: bigint) => apps.commit(block);

const eventBlocks = () => [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));

beforeAll(async () => {
  // Base's 2 s blocks: the next block's board is made ahead 1 s after a head's.
  apps = await toldApps(13);
  ({ index, listening: ahead, plain } = apps);
}, 60_000);

afterAll(async () => {
  await apps?.close();
});

async function aheadCount(): Promise<number> {
  const text = await (await ahead.request("/api/metrics")).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith("api_index_computed_ahead_total{") && l.includes('outcome="ok"'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/** A counter of the ahead app's (0 until it is listed: a counter is listed once it was counted). */
const counted = (name: string) => metricOf(ahead, name);

/** Head blocks whose ve board the ahead app made between heads and took as it was. */
const takenAhead = () => counted("api_index_ve_board_taken_ahead_total");
/** Head blocks whose ve ranking the ahead app patched from the one made ahead (the block's own events). */
const patchedAhead = () => counted("api_index_ve_board_patched_ahead_total");

/** The first reader's page and stats at `h` (and the board's second page) equal what the plain app makes for it. */
async function sameAsMade(h: bigint, pages: readonly string[]): Promise<void> {
  for (const path of pages) {
    const first = await read(ahead, path);
    expect(first.blockNumber, path).toBe(String(h));
    const made = await read(plain, `${path}${path.includes("?") ? "&" : "?"}block=${h}`);
    expect(ofBlock(first), path).toEqual(ofBlock(made));
    if (first.nextCursor) {
      const second = await read(ahead, `${path}&cursor=${first.nextCursor}`);
      expect(ofBlock(second), path).toEqual(ofBlock(await read(plain, `${path}&cursor=${made.nextCursor}`)));
    }
  }
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("the head's pages made ahead of their first reader", () => {
  it("a new head's first page, stats and duration board page: what an app making nothing ahead answers", async () => {
    // Heads one block apart, as the index commits them (only an answer read at the last head is computed ahead).
    const h0 = eventBlocks().at(-30)!;
    const [h1, h2] = [h0 + 1n, h0 + 2n];
    const pages = ["/leaderboards/ve?limit=5", "/stats", "/leaderboards/takeovers?window=lifetime&limit=3"];
    await commit(h0);
    for (const path of pages) expect((await read(ahead, path)).blockNumber).toBe(String(h0));
    for (const h of [h1, h2]) {
      const before = await aheadCount();
      await commit(h);
      // The three answers computed ahead, each with the page read of it at the last head made of it.
      await until(async () => (await aheadCount()) >= before + 3);
      await sameAsMade(h, pages);
    }
  });

  it("a block that changed no lock: its board, page and stats made between heads are its first reader's answer", async () => {
    // Three consecutive heads, the third without a lock event: after the second, the third's board is made ahead
    // (halfway through the step between the two: 1 s for 2 s blocks) with its first page and stats, and taken as it
    // was when it comes.
    const withEvents = new Set(index.events.map((e) => e.blockNumber));
    const head = index.head.block;
    const a = eventBlocks()
      .filter((b) => b < head - 3n && !withEvents.has(b + 2n))
      .at(-1)!;
    expect(a).toBeDefined();
    const pages = ["/leaderboards/ve?limit=5", "/stats"];
    for (const h of [a, a + 1n]) {
      const before = await aheadCount();
      await commit(h);
      if (h > a) await until(async () => (await aheadCount()) >= before + 2);
      for (const path of pages) expect((await read(ahead, path)).blockNumber).toBe(String(h));
    }
    const step = Number(index.blockTimes.get(a + 1n)! - index.blockTimes.get(a)!);
    await new Promise((r) => setTimeout(r, step * 500 + 300));
    const taken = await takenAhead();
    const before = await aheadCount();
    await commit(a + 2n);
    await until(async () => (await aheadCount()) >= before + 2);
    expect(await takenAhead()).toBe(taken + 1);
    await sameAsMade(a + 2n, pages);
  });

  it("a block with lock events: its ranking is the one made ahead with their owners summed again, and exact", async () => {
    // Three consecutive heads after the last test's, the third with lock events: its board made ahead (with the
    // changes known at the second) is patched with the third's own, not ranked again over every lock. A page within
    // the rows the two boards share is the text made ahead; the 100-row page holds every holder here, so a changed row
    // is in it and its text must be made anew. Tried on successive blocks with events until one kept the number of
    // holders (only then may the made-ahead text be taken: same length, same rows), at most six.
    const withEvents = new Set(index.events.map((e) => e.blockNumber));
    const pages = ["/leaderboards/ve?limit=5", "/leaderboards/ve?limit=100", "/stats"];
    let c = BigInt((await read(ahead, "/stats")).blockNumber) + 1n;
    let sameHolders = false;
    for (let tries = 0; tries < 6 && !sameHolders; tries++) {
      while (c + 2n <= index.head.block && !withEvents.has(c + 2n)) c++;
      expect(c + 2n <= index.head.block, "a block with events after the heads before").toBe(true);
      let holders = "";
      for (const h of [c, c + 1n]) {
        const before = await aheadCount();
        await commit(h);
        await until(async () => (await aheadCount()) >= before + 2);
        for (const path of pages) {
          const body = await read(ahead, path);
          expect(body.blockNumber).toBe(String(h));
          if (path.endsWith("limit=100")) holders = String(body.holders);
        }
      }
      const step = Number(index.blockTimes.get(c + 1n)! - index.blockTimes.get(c)!);
      await new Promise((r) => setTimeout(r, step * 500 + 300));
      const [taken, patched] = [await takenAhead(), await patchedAhead()];
      const before = await aheadCount();
      await commit(c + 2n);
      await until(async () => (await aheadCount()) >= before + 2);
      expect([await takenAhead(), await patchedAhead()]).toEqual([taken, patched + 1]);
      await sameAsMade(c + 2n, pages);
      sameHolders = String((await read(ahead, "/leaderboards/ve?limit=100")).holders) === holders;
      // A rank lookup of an owner whose lock changed in that block, at that block.
      const { account } = index.events.find((e) => e.blockNumber === c + 2n)!;
      const path = `/leaderboards/ve/${account}?block=${c + 2n}`;
      const [x, y] = [await ahead.request(`${BASE}${path}`), await plain.request(`${BASE}${path}`)];
      expect(x.status).toBe(y.status);
      expect(ofBlock((await x.json()) as IndexBody)).toEqual(ofBlock((await y.json()) as IndexBody));
      c += 3n;
    }
    expect(sameHolders, "a block with lock events that kept the number of holders").toBe(true);
  });
});
