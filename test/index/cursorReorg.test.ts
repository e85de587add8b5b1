/**
 * Page cursors across a reorg, on the served processes as production runs them: the seeded devnet (anvil), ONE
 * indexer (`ponder start` on Postgres) and one API process (dist/server/main.js). A cursor of a block above Ponder's
 * finalized one carries its seal (api/read/cursor.ts: a digest of our events in the blocks a reorg could replace);
 * when a reorg (evm_snapshot / evm_revert) replaces its block with other events of ours, the next page is refused
 * 400 BAD_PARAMS `reason: "reorg"` (GraphQL: BAD_USER_INPUT on `after`) — every kind of list: a history, the activity
 * feed, the ve board, GraphQL's lockEvents, locks and activity. A cursor of a final block carries none and pages on
 * across a reorg, and so does a sealed one whose reorg replaced no event of ours.
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CURSOR_MAC_BYTES } from "../../api/read/cursor";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { headBlock } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";

const BASE = "/api/index/v1";
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;

let chain: SeededChain;
let topology: LiveTopology;
let api: ServiceChild;
const alice = getAddress(DEVNET_ACCOUNTS.alice.address);

async function get(path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${BASE}${path}`);
  return { status: res.status, body: (await res.json()) as Json };
}

/** A GraphQL answer; asked again while a busy machine's compile queue is full (a new document is compiled once). */
async function gql(query: string): Promise<Json> {
  for (let i = 0; ; i++) {
    const res = await fetch(`${api.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query }),
    });
    const body = (await res.json()) as Json;
    if (body.errors?.[0]?.extensions?.code !== "COMPILE_QUEUE_FULL" || i === 50) return body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The cursor's wire JSON (its MAC cut off): what the test checks of its seal. */
const wire = (cursor: string): Json => {
  const bytes = Buffer.from(cursor, "base64url");
  return JSON.parse(bytes.subarray(0, bytes.length - CURSOR_MAC_BYTES).toString("utf8")) as Json;
};

/** Waits until the index's head is at least `block`. */
async function indexed(block: bigint): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { status, body } = await get("/stats");
    if (status === 200 && BigInt(body.blockNumber) >= block) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the index did not reach block ${block}`);
}

/** The chain's head once mined to, and the index at it. */
async function mineIndexed(blocks: number): Promise<bigint> {
  await chain.devnet.clients.testClient.mine({ blocks });
  const head = await headBlock(chain.devnet);
  await indexed(head);
  return head;
}

/** Every list's first page (one row each, so each has a next page), at the index's head, and its cursor. */
async function firstPages(): Promise<{ block: string; rest: Record<string, string>; graphql: Record<string, string> }> {
  const paths = {
    history: `/accounts/${alice}/events?limit=1`,
    activity: "/activity?limit=1",
    ve: "/leaderboards/ve?limit=1",
  };
  const rest: Record<string, string> = {};
  let block = "";
  for (const [name, path] of Object.entries(paths)) {
    const { status, body } = await get(path);
    expect(status, path).toBe(200);
    expect(body.nextCursor, path).toEqual(expect.any(String));
    block ||= body.blockNumber;
    expect(body.blockNumber, path).toBe(block);
    rest[name] = `${path}&cursor=${body.nextCursor}`;
  }
  const answer = await gql(`{
    lockEvents(where: { account: "${alice}" }, limit: 1) { pageInfo { endCursor } }
    locks(where: { owner: "${alice}" }, limit: 1) { pageInfo { endCursor } }
    activity(limit: 1) { pageInfo { endCursor } }
    _meta { block }
  }`);
  expect(answer.errors).toBeUndefined();
  expect(answer.data._meta.block).toBe(block);
  const graphql = {
    lockEvents: `lockEvents(where: { account: "${alice}" }, limit: 1, after: "${answer.data.lockEvents.pageInfo.endCursor}") { items { blockNumber } }`,
    locks: `locks(where: { owner: "${alice}" }, limit: 1, after: "${answer.data.locks.pageInfo.endCursor}") { items { tokenId } }`,
    activity: `activity(limit: 1, after: "${answer.data.activity.pageInfo.endCursor}") { items { blockNumber } }`,
  };
  return { block, rest, graphql };
}

beforeAll(async () => {
  topology = await startLiveTopology({
    apis: 1,
    env: { REDIS_URL: "", LOG_LEVEL: "error", INDEXER_POLLING_MS: "200" },
  });
  chain = topology.chain;
  api = topology.apis[0]!;
  // Alice's locks, so her lists have two pages, then past Ponder's finality depth (30 blocks on the devnet).
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 2_000n);
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 2_500n);
  await mineIndexed(40);
}, 480_000);

afterAll(async () => {
  await topology?.stop();
});

describe("page cursors across a reorg", () => {
  it("a cursor whose block a reorg replaced with other events of ours is refused: 400 reason reorg, every list", async () => {
    const { testClient } = chain.devnet.clients;
    // The fork is a block without rows of ours.
    await mineIndexed(1);
    const snapshot = await testClient.snapshot();
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
    await mineIndexed(2);
    const first = await firstPages();
    // Above Ponder's finalized block: each cursor carries its block's seal.
    for (const [name, path] of Object.entries(first.rest)) {
      expect(wire(new URL(path, "http://x").searchParams.get("cursor")!).s, name).toEqual([
        expect.any(String),
        expect.any(String),
      ]);
    }
    // The reorg: the orphan's lock is gone, carol's is in a block of the new branch, which outgrows the old one.
    await testClient.revert({ id: snapshot });
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.carol, 1_700n);
    await mineIndexed(4);
    for (const [name, path] of Object.entries(first.rest)) {
      const { status, body } = await get(path);
      expect(status, name).toBe(400);
      expect(body, name).toMatchObject({
        error: "BAD_PARAMS",
        detail: { param: "cursor", reason: "reorg", cursorBlock: first.block },
      });
      expect(body.message, name).toMatch(/start the list again/);
    }
    for (const [name, field] of Object.entries(first.graphql)) {
      const answer = await gql(`{ ${field} }`);
      expect(answer.errors?.[0]?.extensions, name).toMatchObject({
        code: "BAD_USER_INPUT",
        param: "after",
        reason: "reorg",
      });
    }
    // A list started again on the new branch pages on.
    const again = await firstPages();
    for (const [name, path] of Object.entries(again.rest)) expect((await get(path)).status, name).toBe(200);
  }, 240_000);

  it("a cursor of a final block carries no seal and pages on across a reorg; so does one whose reorg replaced none of our events", async () => {
    const { testClient } = chain.devnet.clients;
    const head = await mineIndexed(100);
    // A block Ponder has finalized (30 blocks deep, once its finalized checkpoint has moved): no seal in its cursor.
    const final = head - 70n;
    let finalPage = await get(`/accounts/${alice}/events?limit=1&block=${final}`);
    for (let i = 0; i < 100 && wire(finalPage.body.nextCursor).s !== undefined; i++) {
      await new Promise((r) => setTimeout(r, 200));
      finalPage = await get(`/accounts/${alice}/events?limit=1&block=${final}`);
    }
    expect(finalPage.status).toBe(200);
    const finalCursor = finalPage.body.nextCursor as string;
    expect(wire(finalCursor).s).toBeUndefined();
    // A reorg of blocks without events of ours, under a sealed cursor at the head.
    const snapshot = await testClient.snapshot();
    await mineIndexed(3);
    const first = await firstPages();
    await testClient.revert({ id: snapshot });
    const tip = await mineIndexed(6);
    expect(tip).toBeGreaterThan(BigInt(first.block));
    for (const [name, path] of Object.entries(first.rest)) {
      const { status, body } = await get(path);
      expect(status, name).toBe(200);
      expect(body.blockNumber, name).toBe(first.block);
    }
    for (const [name, field] of Object.entries(first.graphql)) {
      const answer = await gql(`{ ${field} }`);
      expect(answer.errors, name).toBeUndefined();
    }
    const next = await get(`/accounts/${alice}/events?limit=1&cursor=${finalCursor}`);
    expect(next.status).toBe(200);
    expect(next.body.blockNumber).toBe(String(final));
    expect(BigInt(next.body.events[0].blockNumber)).toBeLessThanOrEqual(BigInt(finalPage.body.events[0].blockNumber));
  }, 240_000);
});
