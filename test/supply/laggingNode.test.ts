/**
 * A node that lags (one behind a load balancer minutes behind the others, one restarted from an old snapshot) never
 * makes the published supply go back in block (docs/api.md "Supply API"), from the API process as operators run it
 * (dist/server/main.js, no index) over a seeded devnet behind the fault proxy, with a real Redis; the lagging node is a
 * second anvil, forked from the first at an earlier block, that the proxy switches to (the load balancer):
 *
 * - the figures of block N stay served when the node answers block N - 1: the branch check, which finds no block N
 *   there, does not take that for a reorg; a replica that reads the lagging node after Redis lost the entry does not
 *   make the others serve its older block: they write theirs back and it adopts it within two re-validations;
 * - a head older than SUPPLY_MAX_HEAD_AGE_SECONDS is a lagging node: nothing held → 502 SUPPLY_RPC_LAGGING in the
 *   supply envelope (no-store); held → those figures, their Age counting from their own read; told in the log;
 * - a reorg to a shorter chain is still followed (a head below the figures' block and younger than it; a reorg at the
 *   same height: test/supply/sharedFreshness.test.ts);
 * - past the figures' window (in process, a window of 2 s) the node still behind is a failure like any other (spec
 *   §7.1, §8): 502 SUPPLY_RPC_LAGGING, not the held figures as 200 for as long as the node stays behind; the figures
 *   of the next block are served once the node has it.
 */
import { numberToHex } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import type { ServiceChild } from "../support/replica";
import { chainFigures, mintSupply, rpcResult, servedFigures, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: an in-process copy is re-validated against Redis at least this often. */
const REVALIDATE_MS = 1_000;
/** docs/api.md: the block of the figures' read is checked against the chain this often. */
const BRANCH_CHECK_MS = 4_000;
/** docs/api.md: a failed read (SUPPLY_RPC_LAGGING too) is not made again for this long. */
const BACKOFF_MS = 2_000;

const s = supplyProcesses("supplylag");
const figuresKey = () => s.figuresKey();

type Got = { status: number; text: string; result: string | null; error: string | null; headers: Headers };
async function get(p: ServiceChild, path: string): Promise<Got> {
  const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  const body = path.includes("bare") ? null : (JSON.parse(text) as { result: string | null; error?: string });
  return { status: res.status, text, result: body?.result ?? null, error: body?.error ?? null, headers: res.headers };
}
const truth = () => chainFigures(s.d);
const figures = servedFigures;
/** The block of the shared entry (its first field, api/supply/figures.ts). */
const storedBlock = async () => (await s.admin.get(figuresKey()))?.split(" ")[0];

const mint = (amount: bigint) => mintSupply(s.d, amount);
const rpc = rpcResult;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOKENS = 10n ** 18n;

let lagging: AnvilHandle | undefined;
afterEach(async () => {
  await lagging?.stop();
  lagging = undefined;
});

/** A second node on the same chain, stuck at the head the first has now (forked from it there). */
async function laggingNodeAtHead(): Promise<{ url: string; block: bigint }> {
  const head = await s.d.chain.publicClient.getBlock({ blockTag: "latest" });
  lagging = await startAnvil({ forkUrl: s.d.anvil.rpcUrl, forkBlockNumber: head.number });
  // The same chain: its block at that height is the first node's.
  const header = (await rpc(lagging.rpcUrl, "eth_getBlockByNumber", [numberToHex(head.number), false])) as {
    hash: string;
  };
  expect(header.hash).toBe(head.hash);
  return { url: lagging.rpcUrl, block: head.number };
}

describe("a node behind the figures served", () => {
  it("keeps the newer block's figures (the branch check takes no block there for lag, not a reorg); replicas sharing Redis converge on them", async () => {
    const behind = await laggingNodeAtHead();
    const older = await truth();
    await mint(1_000n * TOKENS);
    const newer = await truth();
    expect(newer).not.toEqual(older);
    const a = await s.api();
    expect(await figures(a)).toEqual(newer);
    expect(await storedBlock()).toBe(String(behind.block + 1n));

    // The load balancer sends every call to the lagging node from now on, polled over two branch checks.
    s.d.proxy.setUpstream(behind.url);
    s.d.proxy.reset();
    const until = Date.now() + 2 * BRANCH_CHECK_MS + 1_000;
    while (Date.now() < until) {
      expect(await figures(a)).toEqual(newer);
      await sleep(100);
    }
    // The check did ask the lagging node for the block of the figures (and found none).
    expect(s.d.proxy.count("eth_getBlockByNumber")).toBeGreaterThan(0);

    // Redis loses the entry; a new replica, knowing nothing newer, reads the lagging node (its first answer may be the
    // older block's: nothing newer was known to it), and so does a once its copy is re-validated.
    await s.admin.del(figuresKey());
    const e = await s.api();
    expect([older, newer]).toContainEqual(await figures(e));
    // Within two re-validations: a wrote its newer figures back over e's, and e took them; no replica goes back.
    await sleep(2 * REVALIDATE_MS + 500);
    expect(await figures(a)).toEqual(newer);
    expect(await figures(e)).toEqual(newer);
    expect(await storedBlock()).toBe(String(behind.block + 1n));
    expect(a.log()).toContain("supply node lags");

    // The node catches up (back to the first): the figures follow the chain again.
    s.d.proxy.setUpstream(null);
    await mint(1_000n * TOKENS);
    await s.admin.del(figuresKey());
    const caughtUp = await truth();
    const deadline = Date.now() + 4 * REVALIDATE_MS;
    let last = await figures(a);
    while (Date.now() < deadline && last.total !== caughtUp.total) {
      await sleep(100);
      last = await figures(a);
    }
    expect(last).toEqual(caughtUp);
  });
});

describe("a reorg to a shorter chain", () => {
  it("is still followed: a head below the figures' block and younger than it drops them, and the lower block is served", async () => {
    const a = await s.api();
    const snapshot = await rpc(s.d.anvil.rpcUrl, "evm_snapshot");
    await mint(1_000_000n * TOKENS);
    await mint(1_000_000n * TOKENS);
    const orphan = await truth();
    expect(await figures(a)).toEqual(orphan);
    const dropped = await s.d.chain.publicClient.getBlock({ blockTag: "latest" });
    expect(await rpc(s.d.anvil.rpcUrl, "evm_revert", [snapshot])).toBe(true);
    // One block on the new branch, younger than the dropped one: the chain is now one block shorter.
    await rpc(s.d.anvil.rpcUrl, "evm_setNextBlockTimestamp", [numberToHex(dropped.timestamp + 10n)]);
    await rpc(s.d.anvil.rpcUrl, "evm_mine");
    expect(await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(dropped.number - 1n);
    const canonical = await truth();
    expect(canonical).not.toEqual(orphan);
    const until = Date.now() + BRANCH_CHECK_MS + 2_500;
    let last = await figures(a);
    while (Date.now() < until && last.total !== canonical.total) {
      await sleep(100);
      last = await figures(a);
    }
    expect(last).toEqual(canonical);
    expect(await storedBlock()).toBe(String(dropped.number - 1n));
  });
});

describe("a head older than SUPPLY_MAX_HEAD_AGE_SECONDS", () => {
  /** The proxy answers the header of `block` with a timestamp an hour behind the wall clock (a node stuck an hour ago). */
  async function hourOldHeader(block: bigint): Promise<void> {
    const header = (await rpc(s.d.anvil.rpcUrl, "eth_getBlockByNumber", [numberToHex(block), false])) as object;
    const value = { ...header, timestamp: numberToHex(Math.floor(Date.now() / 1000) - 3_600) };
    s.d.proxy.setFault({
      kind: "result",
      value,
      match: (m, params) => m === "eth_getBlockByNumber" && params[0] === numberToHex(block),
    });
  }

  it("nothing held: 502 SUPPLY_RPC_LAGGING in the supply envelope; held: those figures with their own Age, not the old head's", async () => {
    const p = await s.api(undefined, { SUPPLY_MAX_HEAD_AGE_SECONDS: "60" });
    const head = await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    await hourOldHeader(head);
    for (const path of ["/api/supply/total", "/api/supply/circulating"]) {
      const r = await get(p, path);
      expect([path, r.status, JSON.parse(r.text), r.headers.get("cache-control")]).toEqual([
        path,
        502, // spec §7.1: every supply failure is a 502
        { result: null, error: "SUPPLY_RPC_LAGGING" },
        "no-store",
      ]);
    }
    const bare = await get(p, "/api/supply/total?format=bare");
    expect([bare.status, bare.text, bare.headers.get("x-supply-error")]).toEqual([502, "", "SUPPLY_RPC_LAGGING"]);
    expect(p.log()).toContain("head_age");

    // The node's head is fresh again: its figures are served.
    s.d.proxy.setFault(null);
    await sleep(BACKOFF_MS + 100);
    const held = await truth();
    expect(await figures(p)).toEqual(held);
    const readAt = Date.now();

    // The chain moves, the node stalls on the next block an hour old, and Redis loses the entry: re-read within a
    // second, the stale head is refused and the held figures are written back, their Age still counting.
    await mint(1_000n * TOKENS);
    await hourOldHeader(head + 1n);
    await s.admin.del(figuresKey());
    const until = Date.now() + 2 * REVALIDATE_MS + 500;
    while (Date.now() < until) {
      expect(await figures(p)).toEqual(held);
      await sleep(100);
    }
    const later = await get(p, "/api/supply/total");
    expect(Number(later.headers.get("age"))).toBeGreaterThanOrEqual(Math.floor((Date.now() - readAt) / 1000) - 1);
    expect(Number(later.headers.get("age"))).toBeGreaterThanOrEqual(2);
    expect(await storedBlock()).toBe(String(head));
  });
});

describe("past the figures' window, the node still behind", () => {
  it("answers 502 SUPPLY_RPC_LAGGING, never the held figures as a 200 past their window (in process, a 2 s window)", async () => {
    const behind = await laggingNodeAtHead();
    await mint(1_000n * TOKENS);
    const newer = await truth();
    const app = s.d.app({ supply: { ttlMs: 2_000 } });
    const read = async (path: string) => {
      const r = await s.d.get(app, path);
      return {
        status: r.status,
        result: r.body?.result ?? null,
        error: r.body?.error ?? null,
        age: r.headers.get("age"),
        cacheControl: r.headers.get("cache-control"),
      };
    };
    expect((await read("/api/supply/total")).result).toBe(newer.total);
    s.d.proxy.setUpstream(behind.url);
    // Within the window the held figures stand for the lagging read (docs/api.md "Supply API", a lagging node).
    await sleep(1_000);
    const within = await read("/api/supply/circulating");
    expect([within.status, within.result]).toEqual([200, newer.circulating]);
    await sleep(1_500);
    s.d.proxy.reset();
    for (const path of ["/api/supply/total", "/api/supply/circulating"]) {
      const r = await read(path);
      expect([path, r.status, r.result, r.error, r.age, r.cacheControl]).toEqual([
        path,
        502,
        null,
        "SUPPLY_RPC_LAGGING",
        null,
        "no-store",
      ]);
    }
    // One read of the lagging node, remembered for the backoff.
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
    // The node catches up: the next block's figures are served.
    s.d.proxy.setUpstream(null);
    await mint(1n * TOKENS);
    const next = await truth();
    await sleep(BACKOFF_MS + 100);
    expect((await read("/api/supply/total")).result).toBe(next.total);
  });
});
