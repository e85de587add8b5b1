/**
 * The stream hub's reorgs as the index signal tells them (api/read/indexSignal.ts: Ponder's revert heard, told with
 * the next head), on the real app over a synthetic index (in-memory PGlite): a head past the stream's last one that
 * carries a revert is announced as a reorg from the revert's first orphaned block, then the blocks from the finalized
 * one it named replayed up to that head; the same head told again with a revert is one too; a head past the last
 * without one replays the blocks between. The signal is told by the test, as a NOTIFY would (test/read/indexSignal.test.ts hears Ponder's SQL).
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import type { Reverted } from "../../api/read/indexSignal";
import { readSse } from "../support/sseReader";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";

const BASE = "/api/index/v1";
const SCHEMA = "synthetic";
const START = 46_183_959n;

let index: SyntheticIndex;
let client: PGlite;
let app: ReturnType<typeof createApp>;
/** The same index with a replay bound of 2 blocks. */
let tight: ReturnType<typeof createApp>;
const told = toldSignal();
const signal = told.signal;

/** The index's head moved to `block` (Ponder's checkpoint), then told as the signal tells it. */
const commit = (block: bigint, reverted?: Reverted) =>
  commitTold(told, (text, params) => client.query(text, params), SCHEMA, index, block, reverted);

/** The blocks with an event, ascending. */
const eventBlocks = () => [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 20, seed: 7, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  app = createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal },
    logger: silentLogger,
  });
  tight = createApp({
    config: loadConfig({ NETWORK: "base", STREAM_REPLAY_BLOCKS: "2" }),
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal },
    logger: silentLogger,
  });
}, 60_000);

afterAll(async () => {
  await client?.close();
});

describe("StreamHub: reorgs told by the index signal", () => {
  it("a revert told with a head past the last is one reorg from its first orphaned block; a plain head replays", async () => {
    const blocks = eventBlocks();
    const [h0, h1, orphan, h2] = [blocks.at(-40)!, blocks.at(-30)!, blocks.at(-20)!, blocks.at(-10)!];
    await commit(h0);
    const controller = new AbortController();
    const res = await app.request(`${BASE}/stream?stats`, { signal: controller.signal });
    const s = readSse(res);
    await s.until((e) => e.event === "stats" && e.id === String(h0));
    const opened = s.events.length;
    // A plain head past the last: the blocks between with a change, each at its block; no reorg.
    await commit(h1);
    await s.until((e) => e.id === String(h1));
    const between = blocks.filter((b) => b > h0 && b <= h1).map(String);
    expect(s.events.slice(opened).map((e) => [e.event, e.id])).toEqual(between.map((b) => ["stats", b]));
    // A reorg from a block the stream was sent, whose new branch is committed at h2, past h1, in one step: one reorg
    // event with the id of the finalized block the revert named, then the new branch's blocks from there to h2, each
    // at its block, as a resumed stream's catch-up replays them (h2 with every topic's answer).
    const sent = s.events.length;
    const from = between.map(BigInt).at(-3)!;
    const finalized = from - 10n;
    const replayed = blocks.filter((b) => b > finalized && b <= h2).map((b) => ["stats", String(b)]);
    await commit(h2, { from, finalized });
    await s.until((e) => e.event === "stats" && e.id === String(h2));
    expect(s.events.slice(sent).map((e) => [e.event, e.id])).toEqual([["reorg", String(finalized)], ...replayed]);
    expect(JSON.parse(s.events[sent]!.data)).toEqual({
      orphaned: { from: String(from), to: String(h1) },
      head: String(h2),
    });
    const rest = await (await app.request(`${BASE}/stats?block=${h2}`)).json();
    // The lag describes the moment of each answer (api/index/answer.ts): the event's and the REST answer's may be a
    // second apart; everything else is the block's.
    const { indexLagSeconds: eventLag, ...event } = JSON.parse(s.events.at(-1)!.data);
    const { indexLagSeconds: restLag, ...restBlock } = rest;
    expect(event).toEqual(restBlock);
    expect(restLag - eventLag).toBeGreaterThanOrEqual(0);
    expect(restLag - eventLag).toBeLessThanOrEqual(1);
    // The same head told again with a revert (the new branch committed at the old height): a reorg too.
    const again = s.events.length;
    await commit(h2, { from: orphan, finalized });
    await s.until((e) => e.event === "stats" && e.id === String(h2) && s.events.indexOf(e) > again);
    expect(s.events.slice(again).map((e) => [e.event, e.id])).toEqual([["reorg", String(finalized)], ...replayed]);
    expect(JSON.parse(s.events[again]!.data).orphaned).toEqual({ from: String(orphan), to: String(h2) });
    controller.abort();
  });

  it("a stream resumed after a reorg it did not see is told of it when its last block may be an orphan's, then replayed", async () => {
    const blocks = eventBlocks();
    const [kept, a, from, b, c] = [blocks.at(-9)!, blocks.at(-8)!, blocks.at(-7)!, blocks.at(-6)!, blocks.at(-4)!];
    await commit(a);
    const first = new AbortController();
    const s = readSse(await app.request(`${BASE}/stream?stats`, { signal: first.signal }));
    await s.until((e) => e.event === "stats" && e.id === String(a));
    await commit(b);
    await s.until((e) => e.event === "stats" && e.id === String(b));
    // The client goes away (a dropped connection, a drained replica); meanwhile a reorg from a block it was sent is
    // committed past its last head. No stream is open to hear it live.
    first.abort();
    await commit(c, { from, finalized: kept });
    const resume = async (on: typeof app, last: bigint) => {
      const controller = new AbortController();
      const r = readSse(
        await on.request(`${BASE}/stream?stats`, {
          headers: { "last-event-id": String(last) },
          signal: controller.signal,
        }),
      );
      await r.until((e) => e.id === String(c));
      controller.abort();
      return r.events;
    };
    // Told with the id of the finalized block the revert named (every block above it may differ, and the new branch
    // may hold rows of ours below the first replaced one), then the new branch's blocks from there, each at its block,
    // as a catch-up replays them.
    const told = await resume(app, b);
    const replayed = blocks.filter((x) => x > kept && x <= c).map(String);
    expect(told.map((e) => [e.event, e.id])).toEqual([["reorg", String(kept)], ...replayed.map((x) => ["stats", x])]);
    expect(JSON.parse(told[0]!.data)).toEqual({ orphaned: { from: String(from), to: String(b) }, head: String(c) });
    // A client whose last block is above the finalized one but below the first replaced: told in doubt, from its own
    // block, and replayed from the finalized one as well.
    const doubt = await resume(app, a);
    expect(doubt.map((e) => [e.event, e.id])).toEqual([["reorg", String(kept)], ...replayed.map((x) => ["stats", x])]);
    expect(JSON.parse(doubt[0]!.data)).toEqual({ orphaned: { from: String(a), to: String(a) }, head: String(c) });
    // At or below the finalized block the revert named: nothing it was sent may differ; its blocks replay, no reorg.
    const plain = await resume(app, kept);
    expect(plain.map((e) => [e.event, e.id])).toEqual(
      blocks.filter((x) => x > kept && x <= c).map((x) => ["stats", String(x)]),
    );
    // Bounded as any catch-up: past STREAM_REPLAY_BLOCKS behind, the reorg then one `reset`.
    expect(c - kept).toBeGreaterThan(2n);
    const reset = await resume(tight, b);
    expect(reset.map((e) => [e.event, e.id])).toEqual([
      ["reorg", String(kept)],
      ["reset", String(c)],
    ]);
    expect(JSON.parse(reset[1]!.data)).toEqual({ reason: "too_far_behind", lastEventId: String(kept) });
  });
});
