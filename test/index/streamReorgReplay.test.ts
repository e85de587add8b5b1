/**
 * A reorg heard by streams that are open, through the served process as production runs it: the seeded devnet, ONE
 * indexer (`ponder start --schema s_v1 --views-schema s` on Postgres) and an API process (dist/server/main.js) reading
 * the views; the reorgs made with anvil_reorg (live) and evm_snapshot / evm_revert (during a catch-up). Every event a stream is sent is checked against the chain
 * (viem) at the block it names: `stats` with totalLockedClaim, `account` with the account's locks and its `activity`
 * items' transactions, `activity` with its items' transactions — each in the chain's block of that number.
 *
 * Live: a stream up to date is told the `reorg`, then sent the new branch's blocks one by one (an account's with its
 * activity items) — before, the answers at the new head alone, the items of the blocks before it never.
 * During a catch-up (red team rtlive F9): a stream resumed far behind whose client reads slowly is held below the fork
 * when the reorg comes; its catch-up goes on through every block below the fork it had not reached, then the `reorg`,
 * then the new branch — before, the `reorg` and the new head's answers, and the blocks between never.
 */
import http from "node:http";
import { Readable } from "node:stream";
import { type Address, encodeFunctionData, getAddress, type Hash } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { liveTopologyPerFile, lockViaFurnace } from "../support/liveTopology";
import { bulkTopUps, headBlock, readChainLocks } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";
import { readSse, type SseEvent } from "../support/sseReader";

const BASE = "/api/index/v1";
const alice = getAddress(DEVNET_ACCOUNTS.alice.address);

let chain: SeededChain;
let api: ServiceChild;

async function openStream(query: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${api.url}${BASE}/stream?${query}`, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  return { ...readSse(res), close: () => controller.abort() };
}

/** Until the index has `block` (its REST answer there exists). */
async function indexed(block: bigint): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await fetch(`${api.url}${BASE}/stats?block=${block}`)).status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the index never reached ${block}`);
}

/** The events the API process has written to its streams so far (every stream, every event). */
async function eventsWritten(): Promise<number> {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith("api_stream_events_total{"))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

/** Until the events written stop growing for `quietMs`: every stream is sent what it can take. */
async function settled(quietMs = 2_000): Promise<number> {
  let last = await eventsWritten();
  for (let since = Date.now(); Date.now() - since < quietMs; ) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await eventsWritten();
    if (now !== last) [last, since] = [now, Date.now()];
  }
  return last;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const receipts = new Map<Hash, Promise<{ blockNumber: bigint; blockHash: Hash; logs: { logIndex: number }[] }>>();
const receipt = (hash: Hash) => {
  const found = receipts.get(hash);
  if (found) return found;
  const read = chain.devnet.clients.publicClient.getTransactionReceipt({ hash });
  receipts.set(hash, read);
  return read;
};

type Item = { kind: string; blockNumber: string; blockTimestamp: string; txHash: Hash; logIndex: number };

const blocks = new Map<bigint, Promise<{ hash: Hash; timestamp: bigint }>>();
/** The chain's block `n` now (read once). */
const chainBlock = (n: bigint) => {
  const found = blocks.get(n);
  if (found) return found;
  const read = chain.devnet.clients.publicClient.getBlock({ blockNumber: n });
  blocks.set(n, read);
  return read;
};

/** Items already found on the chain (an item is on many pages of the feed). */
const checked = new Set<string>();

/** An activity item is the chain's: its transaction in the chain's block of that number, its log in it. */
async function expectItemOnChain(item: Item, label: string): Promise<void> {
  const key = JSON.stringify(item);
  if (checked.has(key)) return;
  const block = await chainBlock(BigInt(item.blockNumber));
  const r = await receipt(item.txHash);
  expect(r.blockHash, `${label}: ${item.txHash}'s block`).toBe(block.hash);
  expect(String(r.blockNumber), label).toBe(item.blockNumber);
  expect(item.blockTimestamp, label).toBe(String(block.timestamp));
  expect(
    r.logs.some((l) => l.logIndex === item.logIndex),
    `${label}: log ${item.logIndex}`,
  ).toBe(true);
  checked.add(key);
}

/** Each event (but `reorg` and `reset`) is true of the chain at the block its id names. */
async function expectTrueOfChain(events: readonly SseEvent[]): Promise<void> {
  const { publicClient } = chain.devnet.clients;
  for (const e of events) {
    if (e.event === "reorg" || e.event === "reset") continue;
    const block = BigInt(e.id!);
    const label = `${e.event} at ${block}`;
    const data = JSON.parse(e.data);
    const onChain = await chainBlock(block);
    expect(data.blockNumber, label).toBe(String(block));
    expect(data.blockTimestamp, label).toBe(String(onChain.timestamp));
    if (e.event === "stats") {
      const total = await publicClient.readContract({
        address: chain.devnet.addresses.VeLockNFT,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "totalLockedClaim",
        blockNumber: block,
      });
      expect(data.totalLockedWei, label).toBe(String(total));
    } else if (e.event === "account") {
      const locks = (await readChainLocks(chain.devnet, block)).locks
        .filter((l) => l.owner === (alice as Address) && l.amount > 0n)
        .map((l) => String(l.tokenId));
      expect((data.locks as { tokenId: string }[]).map((l) => l.tokenId).sort(), label).toEqual(locks.sort());
      // The block's items: each the chain's, in this block.
      const items = data.activity as Item[];
      for (const item of items) {
        expect(item.blockNumber, label).toBe(String(block));
        await expectItemOnChain(item, label);
      }
    } else if (e.event === "activity") {
      // The first page at its block (the head's, told after a reorg, may hold no item of its own block).
      const items = data.events as Item[];
      for (const item of items) {
        expect(BigInt(item.blockNumber) <= block, label).toBe(true);
        await expectItemOnChain(item, label);
      }
    }
  }
}

/** The blocks in from..to (inclusive) with a lock event on the chain now (the VeLockNFT's logs). */
async function lockEventBlocks(from: bigint, to: bigint): Promise<bigint[]> {
  const logs = await chain.devnet.clients.publicClient.getLogs({
    address: chain.devnet.addresses.VeLockNFT,
    fromBlock: from,
    toBlock: to,
  });
  return [...new Set(logs.map((l) => l.blockNumber))].sort((a, b) => (a < b ? -1 : 1));
}

const topology = liveTopologyPerFile();
beforeAll(() => {
  chain = topology().chain;
  api = topology().apis[0]!;
});

describe("a reorg heard by open streams", () => {
  it("live: the reorg, then the new branch's blocks one by one with their activity, then the head", async () => {
    const { testClient } = chain.devnet.clients;
    const live = await openStream(`account=${alice}&stats`);
    await live.until((e) => e.event === "stats");
    const head = await headBlock(chain.devnet);
    // The old branch: alice's two locks, then an empty block.
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 1_000n);
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 1_100n);
    await testClient.mine({ blocks: 1 });
    const oldTip = await headBlock(chain.devnet);
    await live.until((e) => e.event === "stats" && e.id === (oldTip - 1n).toString(), 60_000);
    await indexed(oldTip);
    const before = live.events.length;
    // The new branch in one step (anvil_reorg, as long as the old): alice's two other locks, then bob's.
    const enter = (amount: bigint) =>
      encodeFunctionData({
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [amount * 10n ** 18n, 0n, 30n * 86_400n, false, 1n],
      });
    const tx = (from: Address, amount: bigint) => ({
      from,
      to: chain.devnet.addresses.Furnace,
      data: enter(amount),
      gas: "0x100000",
    });
    const bob = getAddress(DEVNET_ACCOUNTS.bob.address);
    await testClient.request({
      method: "anvil_reorg" as never,
      params: [
        3,
        [
          [tx(alice, 2_000n), 0],
          [tx(alice, 2_100n), 1],
          [tx(bob, 1_200n), 2],
        ],
      ] as never,
    });
    const tip = await headBlock(chain.devnet);
    expect(tip).toBe(oldTip);
    const told = await live.until((e) => e.event === "reorg", 60_000);
    await indexed(tip);
    // Bob's lock, the new branch's last block with one of ours.
    await live.until(
      (e) => e.event === "stats" && e.id === tip.toString() && live.events.indexOf(e) > live.events.indexOf(told),
      30_000,
    );
    await settled();
    live.close();

    const after = live.events.slice(before);
    const r = after.findIndex((e) => e.event === "reorg");
    expect(r).toBe(0);
    expect(after.filter((e) => e.event === "reorg")).toHaveLength(1);
    const { orphaned } = JSON.parse(after[0]!.data);
    expect(orphaned.to).toBe(oldTip.toString());
    expect(BigInt(orphaned.from)).toBeLessThanOrEqual(head + 1n);
    // Then the new branch's blocks from there, ascending, each sent once: alice's in head + 1 and head + 2 (before the
    // fix, only the answers at the index's head came), every block with a lock event a `stats`.
    const replay = after.slice(1);
    const accounts = replay.filter((e) => e.event === "account").map((e) => BigInt(e.id!));
    expect(accounts.filter((b) => b > head).slice(0, 2)).toEqual([head + 1n, head + 2n]);
    expect(accounts.every((b, i) => i === 0 || accounts[i - 1]! < b)).toBe(true);
    for (const b of [head + 1n, head + 2n]) {
      const ev = replay.find((e) => e.event === "account" && e.id === b.toString())!;
      expect((JSON.parse(ev.data).activity as Item[]).map((i) => i.kind)).toContain("create");
    }
    // Its id: a block below the first that may differ (the finalized one the revert named), what a client reconnecting
    // right after it resumes from.
    const at = BigInt(after[0]!.id!);
    expect(at).toBeLessThanOrEqual(head);
    const ids = replay.map((e) => BigInt(e.id!));
    expect(ids.every((b, i) => b > at && (i === 0 || ids[i - 1]! <= b))).toBe(true);
    const stats = replay.filter((e) => e.event === "stats").map((e) => BigInt(e.id!));
    const changed = await lockEventBlocks(at + 1n, tip);
    for (const b of changed) expect(stats, `stats of ${b}`).toContain(b);
    await expectTrueOfChain(replay);
  }, 240_000);

  it("during a catch-up: the blocks below the fork it had not reached, the reorg, then the new branch", async () => {
    const { testClient } = chain.devnet.clients;
    // The blocks a client will be resumed from below, each with an activity page of 100 items (~60 kB): far more than
    // the loopback's socket buffers take, so a client that does not read holds its catch-up below the fork.
    // A block past the last reorg's (the live test's): a resume from it is not told that reorg in doubt.
    await testClient.mine({ blocks: 1 });
    const resumeFrom = await headBlock(chain.devnet);
    await bulkTopUps(chain.devnet, { blocks: 150, perBlock: 2, tokenIds: chain.devnet.seed.tokenIds.capped.slice(1) });
    const forkAt = (await headBlock(chain.devnet)) + 1n;
    const snapshot = await testClient.snapshot();
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
    await testClient.mine({ blocks: 1 });
    const oldTip = await headBlock(chain.devnet);
    await indexed(oldTip);
    // A live stream: it is told the reorg when the process hears it.
    const live = await openStream("stats");
    await live.until((e) => e.event === "stats");

    // The slow client: resumed from far behind, not reading until the reorg has been heard.
    const quiet = await settled(1_000);
    const request = http.get(`${api.url}${BASE}/stream?activity&account=${alice}&stats`, {
      agent: false,
      headers: { "last-event-id": resumeFrom.toString() },
    });
    const res = await new Promise<http.IncomingMessage>((resolve) => request.once("response", resolve));
    res.pause();
    expect(res.statusCode).toBe(200);
    // Held: what it was sent is far from all the blocks below the fork (two events each, activity and stats).
    const held = (await settled()) - quiet;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(2 * Number(forkAt - 1n - resumeFrom));

    await testClient.revert({ id: snapshot });
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_500n);
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, 1_300n);
    await testClient.mine({ blocks: 1 });
    const tip = await headBlock(chain.devnet);
    await live.until((e) => e.event === "reorg", 60_000);
    await indexed(tip);
    live.close();

    // Now read it all.
    const s = readSse(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: 200 }));
    await s.until((e) => e.event === "reorg", 120_000);
    // Bob's lock: the new branch's last block with one of ours (empty on the old branch).
    await s.until((e) => e.event === "stats" && e.id === (tip - 1n).toString(), 120_000);
    await settled();
    await sleep(500);
    request.destroy();

    const events = s.events;
    expect(events.filter((e) => e.event === "reset")).toHaveLength(0);
    const reorgs = events.map((e, i) => [e, i] as const).filter(([e]) => e.event === "reorg");
    expect(reorgs).toHaveLength(1);
    const [reorg, r] = reorgs[0]!;
    const at = BigInt(reorg.id!);
    // No block skipped unseen: every block with a lock event up to the new head is sent (activity and stats), below
    // the reorg's id before it (those it had not reached when the reorg came), above it after it.
    for (const b of await lockEventBlocks(resumeFrom + 1n, tip)) {
      const list = b <= at ? events.slice(0, r) : events.slice(r + 1);
      for (const kind of ["activity", "stats"]) {
        expect(
          list.some((e) => e.event === kind && e.id === b.toString()),
          `${kind} of ${b}`,
        ).toBe(true);
      }
    }
    const { orphaned } = JSON.parse(reorg.data);
    expect(orphaned.to).toBe(oldTip.toString());
    expect(BigInt(orphaned.from)).toBeLessThanOrEqual(forkAt);
    expect(at).toBeLessThan(forkAt);
    const ids = (list: readonly SseEvent[]) => list.map((e) => BigInt(e.id!));
    const [told, replayed] = [ids(events.slice(0, r)), ids(events.slice(r + 1))];
    // In order; nothing of the orphaned branch: before the reorg, blocks below the fork only; after it, from its id.
    for (const list of [told, replayed]) expect(list.every((b, i) => i === 0 || list[i - 1]! <= b)).toBe(true);
    expect(told.every((b) => b > resumeFrom && b < forkAt)).toBe(true);
    expect(replayed.every((b) => b > at && b <= tip)).toBe(true);
    // Alice's lock of the new branch is sent with its item.
    expect(events.slice(r + 1).some((e) => e.event === "account" && BigInt(e.id!) >= forkAt)).toBe(true);
    await expectTrueOfChain(events);
  }, 400_000);
});
