/**
 * The webhook feeder's reorgs as the index signal tells them (api/read/indexSignal.ts: Ponder's revert heard, told
 * with the next head), on the real app and store over a synthetic index (in-memory PGlite) and a real receiver: a
 * head past the cursor that carries a revert sends `index.reverted` for each delivered block from the revert's first
 * orphaned one, then the topic's answer at that head, nothing of the blocks between; a plain head feeds each block;
 * a deeper reorg after it reverts only what was not reverted yet.
 * The signal is told by the test, as a NOTIFY would (test/read/indexSignal.test.ts hears Ponder's SQL).
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import type { Reverted } from "../../api/read/indexSignal";
import { WEBHOOK_TIMING } from "../../api/webhooks/engine";
import { Webhooks } from "../../api/webhooks/service";
import { pgliteSql } from "../../api/webhooks/sql";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";
import { type Received, WebhookReceiver } from "../support/webhookReceiver";

const SCHEMA = "synthetic";
const START = 46_183_959n;

let index: SyntheticIndex;
let client: PGlite;
let outbox: PGlite;
let webhooks: Webhooks;
const receiver = new WebhookReceiver();
const told = toldSignal();
const signal = told.signal;

/** The index's head moved to `block` (Ponder's checkpoint), then told as the signal tells it. */
const commit = (block: bigint, reverted?: Reverted) =>
  commitTold(told, (text, params) => client.query(text, params), SCHEMA, index, block, reverted);

/** The blocks with an event, ascending. */
const eventBlocks = () => [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));

type Body = { type: string; data: { blockNumber: string; head?: string; revertedId?: string } };
const parsed = (r: Received) => JSON.parse(r.body) as Body;
const seen = (acked: Received[]) => acked.map((r) => [parsed(r).type, parsed(r).data.blockNumber]);

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 20, seed: 7, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  const blocks = eventBlocks();
  await commit(blocks.at(-40)!);
  outbox = new PGlite();
  await outbox.waitReady;
  webhooks = new Webhooks(
    pgliteSql(outbox),
    "webhooks",
    { operatorToken: null, allowPrivate: "loopback", retryScheduleMs: [100], timeoutMs: 2_000, maxSubscriptions: 10 },
    silentLogger,
    undefined,
    { ...WEBHOOK_TIMING, pollMs: 100, subscribedCheckMs: 60_000, backlogMs: 60_000 },
  );
  createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal },
    webhooks,
    logger: silentLogger,
  });
  await receiver.up();
}, 60_000);

afterAll(async () => {
  await webhooks?.close(); // and its database
  await receiver.down();
  await client?.close();
});

describe("webhooks: reorgs told by the index signal", () => {
  it("a revert told with a head past the cursor reverts what was delivered from its first orphaned block", async () => {
    const blocks = eventBlocks();
    const [h0, h1, h2] = [blocks.at(-40)!, blocks.at(-30)!, blocks.at(-10)!];
    // The app attached the engine; the feed's cursor starts at the head (h0).
    const cursor = async () =>
      (await outbox.query<{ b: string | null }>("SELECT block::text AS b FROM webhooks.cursor")).rows[0]?.b;
    for (let i = 0; i < 100 && (await cursor()) !== String(h0); i++) await new Promise((r) => setTimeout(r, 20));
    expect(await cursor()).toBe(String(h0));
    await webhooks.store.create(receiver.url, ["stats"], "whsec_AAAA", 10);
    webhooks.wake();
    // A plain head past the cursor: one delivery per block with a change, each at its block.
    await commit(h1);
    const between = blocks.filter((b) => b > h0 && b <= h1).map(String);
    await receiver.until((acked) => acked.length === between.length, 10_000);
    expect(seen(receiver.acked())).toEqual(between.map((b) => ["index.stats", b]));
    // A reorg from the third-last of them, its new branch committed at h2, past h1, in one step.
    const from = between.at(-3)!;
    await commit(h2, { from: BigInt(from), finalized: BigInt(from) - 10n });
    await receiver.until((acked) => acked.length === between.length + 4, 10_000);
    const after = receiver.acked().slice(between.length);
    expect(seen(after)).toEqual([...between.slice(-3).map((b) => ["index.reverted", b]), ["index.stats", String(h2)]]);
    const delivered = receiver.acked().slice(between.length - 3, between.length);
    expect(after.slice(0, 3).map((r) => parsed(r).data.revertedId)).toEqual(delivered.map((r) => r.id));
    expect(after.slice(0, 3).map((r) => parsed(r).data.head)).toEqual([String(h2), String(h2), String(h2)]);
    expect(await cursor()).toBe(String(h2));

    // A deeper reorg next, from below the first's: what was reverted is not reverted again (exactly once each).
    const h3 = blocks.at(-5)!;
    const deeper = between.at(-5)!;
    const sent = receiver.acked().length;
    await commit(h3, { from: BigInt(deeper), finalized: BigInt(deeper) - 10n });
    await receiver.until((acked) => acked.some((r, i) => i >= sent && parsed(r).type === "index.stats"), 10_000);
    await new Promise((r) => setTimeout(r, 500)); // anything else the feed would send
    const again = receiver.acked().slice(sent);
    expect(seen(again)).toEqual([
      ["index.reverted", between.at(-5)!],
      ["index.reverted", between.at(-4)!],
      ["index.reverted", String(h2)],
      ["index.stats", String(h3)],
    ]);
    const revertedIds = receiver
      .acked()
      .filter((r) => parsed(r).type === "index.reverted")
      .map((r) => parsed(r).data.revertedId);
    expect(new Set(revertedIds).size).toBe(revertedIds.length);
  });
});
