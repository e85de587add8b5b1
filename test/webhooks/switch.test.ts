/**
 * The webhook feeder after the index moves to another schema (api/webhooks/engine.ts, "Another schema"), on the real
 * app and store over a synthetic index (in-memory PGlite) and a real receiver. The schema is dropped and written again
 * (a new oid: another source) with one delivered block's events otherwise: a re-index of the same build (the Unrecoverable
 * reorg runbook's) is checked and reverted from that block; a redeploy of another build is not checked — its answers
 * may be shaped otherwise, and every delivery fed, however old, would be taken as replaced. What the feeder names the
 * rows by (their schema and build) is one statement each time it is read (LockIndex.sourceHead), not a catalog
 * statement and a probe of the head.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { WEBHOOK_TIMING } from "../../api/webhooks/engine";
import { Webhooks } from "../../api/webhooks/service";
import { pgliteSql } from "../../api/webhooks/sql";
import {
  generateSyntheticIndex,
  SYNTHETIC_BUILD_ID,
  type SyntheticIndex,
  writeSyntheticIndex,
} from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";
import { type Received, WebhookReceiver } from "../support/webhookReceiver";

const SCHEMA = "synthetic";
const START = 46_183_959n;

let index: SyntheticIndex;
let client: PGlite;
let outbox: PGlite;
let webhooks: Webhooks;
let receiver: WebhookReceiver;
let told: ReturnType<typeof toldSignal>;

const query = (text: string, params?: unknown[]) => client.query(text, params);
const commit = (block: bigint) => commitTold(told, query, SCHEMA, index, block);
const eventBlocks = () => [...new Set(index.events.map((e) => e.blockNumber))].sort((a, b) => (a < b ? -1 : 1));

type Body = { type: string; data: { blockNumber: string; revertedId?: string } };
const parsed = (r: Received) => JSON.parse(r.body) as Body;
const seen = (acked: Received[]) => acked.map((r) => [parsed(r).type, parsed(r).data.blockNumber]);

/**
 * The schema dropped and written again (another oid), the locks of `changed`'s events one wei larger after them (the
 * other branch's events there), Ponder's build id `build`.
 */
async function reindex(changed: bigint, build: string, head: bigint): Promise<void> {
  await query(`DROP SCHEMA ${SCHEMA} CASCADE`);
  await writeSyntheticIndex(query, SCHEMA, index, { finalizedLag: 200n });
  await query(`UPDATE ${SCHEMA}.lock_event SET lock_amount = lock_amount + 1 WHERE block_number = $1`, [
    changed.toString(),
  ]);
  await query(`UPDATE ${SCHEMA}._ponder_meta SET value = jsonb_set(value, '{build_id}', to_jsonb($1::text))`, [build]);
  await commit(head);
}

beforeEach(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 20, seed: 7, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex(query, SCHEMA, index, { finalizedLag: 200n });
  told = toldSignal();
  receiver = new WebhookReceiver();
  await commit(eventBlocks().at(-40)!);
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
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal: told.signal },
    webhooks,
    logger: silentLogger,
  });
  await receiver.up();
}, 60_000);

afterEach(async () => {
  await webhooks?.close();
  await receiver?.down();
  await client?.close();
});

/** Feeds stats from the first head to the -30th event block; answers those blocks (ascending). */
async function delivered(): Promise<string[]> {
  const blocks = eventBlocks();
  const [h0, h1] = [blocks.at(-40)!, blocks.at(-30)!];
  const cursor = async () =>
    (await outbox.query<{ b: string | null }>("SELECT block::text AS b FROM webhooks.cursor")).rows[0]?.b;
  for (let i = 0; i < 100 && (await cursor()) !== String(h0); i++) await new Promise((r) => setTimeout(r, 20));
  expect(await cursor()).toBe(String(h0));
  await webhooks.store.create(receiver.url, ["stats"], "whsec_AAAA", 10);
  webhooks.wake();
  await commit(h1);
  const between = blocks.filter((b) => b > h0 && b <= h1).map(String);
  await receiver.until((acked) => acked.length === between.length, 10_000);
  expect(seen(receiver.acked())).toEqual(between.map((b) => ["index.stats", b]));
  return between;
}

describe("webhooks after the index moves to another schema", () => {
  it("a re-index of the same build whose rows differ at a delivered block reverts from that block", async () => {
    const between = await delivered();
    const gone = between.at(-4)!;
    const h2 = eventBlocks().at(-20)!;
    await reindex(BigInt(gone), SYNTHETIC_BUILD_ID, h2);
    const sent = between.length;
    await receiver.until((acked) => acked.some((r, i) => i >= sent && parsed(r).type === "index.stats"), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const after = seen(receiver.acked().slice(sent));
    // Every delivery from the block whose rows differ up (the lowest that differs is the reorg's first block).
    expect(after).toEqual([...between.slice(-4).map((b) => ["index.reverted", b]), ["index.stats", String(h2)]]);
  }, 60_000);

  it("a redeploy of another build is not checked: nothing fed is reverted, the feed goes on", async () => {
    const between = await delivered();
    const gone = between.at(-4)!;
    const h2 = eventBlocks().at(-20)!;
    await reindex(BigInt(gone), "another-build", h2);
    const sent = between.length;
    const next = eventBlocks().filter((b) => b > BigInt(between.at(-1)!) && b <= h2);
    await receiver.until((acked) => acked.length >= sent + next.length, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen(receiver.acked().slice(sent))).toEqual(next.map((b) => ["index.stats", String(b)]));
  }, 60_000);
});

describe("the feeder's reads of the index's source", () => {
  it("reads the schema and the build in one statement per head: no probe of the head beside the catalog's", async () => {
    const cursor = async () =>
      (await outbox.query<{ b: string | null }>("SELECT block::text AS b FROM webhooks.cursor")).rows[0]?.b;
    const fedTo = async (block: bigint) => {
      for (let i = 0; i < 200 && (await cursor()) !== String(block); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await cursor()).toBe(String(block));
    };
    await fedTo(eventBlocks().at(-40)!);
    // Every statement the index's database receives from now on (drizzle's PGlite session calls client.query).
    const texts: string[] = [];
    const sent = client.query.bind(client);
    client.query = ((text: string, ...rest: unknown[]) => {
      texts.push(text);
      return (sent as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof client.query;
    const heads = eventBlocks().slice(-39, -34);
    for (const head of heads) {
      await commit(head);
      await fedTo(head);
    }
    const catalog = (t: string) => t.includes("pg_rewrite");
    const head = (t: string) => t.includes("ORDER BY latest_checkpoint");
    // No subscription: each head's feed reads the source once (LockIndex.sourceHead), nothing else of the index.
    expect(texts.filter((t) => catalog(t) && head(t))).toHaveLength(heads.length);
    expect(texts.filter((t) => head(t) && !catalog(t))).toHaveLength(0);
  }, 60_000);
});
