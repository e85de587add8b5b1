/**
 * A reorg of the supply figures' block to a SHORTER chain, with two replicas sharing Redis (docs/api.md "Supply API",
 * its Reorgs paragraph), from the API process as operators run it (dist/server/main.js, no index) over a seeded devnet
 * behind the fault proxy:
 *
 * - replica a read block X itself, replica b took X's entry from Redis; the chain is then reorged to one block below X
 *   whose head is younger than X: both leave X within the branch check's interval (4 s) plus its round trip, and never
 *   answer X again (before this, b kept X for as long as the chain stayed below X, a went back to X from b's
 *   "lagging node" write-back: the red team's rtsupply F1, shortBoth);
 * - the contrast: a node that lags (no block at X's height, its head OLDER than X) makes neither replica go back in
 *   block, the one that took X from Redis included (test/supply/laggingNode.test.ts holds the other lagging cases).
 */
import { numberToHex } from "viem";
import { afterEach, describe, expect, it } from "vitest";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import type { ServiceChild } from "../support/replica";
import { chainFigures, mintSupply, rpcResult, servedFigures, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: the block of the figures' read is checked against the chain this often. */
const BRANCH_CHECK_MS = 4_000;
/** The check's round trip and the poll's own, on a loaded test machine. */
const SLACK_MS = 1_500;
/** How long both replicas are polled after the reorg (docs: never again afterwards; the brief: ≥ 10 s past the bound). */
const POLL_MS = BRANCH_CHECK_MS + SLACK_MS + 10_500;

const s = supplyProcesses("supplyreorg");
const TOKENS = 10n ** 18n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const truth = () => chainFigures(s.d);

const rpc = rpcResult;
const anvil = (method: string, params: unknown[] = []) => rpc(s.d.anvil.rpcUrl, method, params);

async function bareTotal(p: ServiceChild): Promise<string> {
  const res = await fetch(`${p.url}/api/supply/total?format=bare`, { signal: AbortSignal.timeout(15_000) });
  return `${res.status} ${await res.text()}`;
}

/** Each replica's answers over `ms` of polling (every 50 ms): when it last answered `x`, and anything but x or y. */
async function poll(replicas: Record<string, ServiceChild>, x: string, y: string, ms: number) {
  const t0 = Date.now();
  const seen: Record<string, { lastX: number; firstY: number; xAfterY: number; other: string[] }> = {};
  for (const name of Object.keys(replicas)) seen[name] = { lastX: -1, firstY: -1, xAfterY: 0, other: [] };
  while (Date.now() - t0 < ms) {
    for (const [name, p] of Object.entries(replicas)) {
      const got = await bareTotal(p);
      const at = Date.now() - t0;
      const it = seen[name] as (typeof seen)[string];
      if (got === `200 ${x}`) {
        it.lastX = at;
        if (it.firstY >= 0) it.xAfterY++;
      } else if (got === `200 ${y}`) {
        if (it.firstY < 0) it.firstY = at;
      } else if (it.other.length < 5) it.other.push(`${at}: ${got}`);
    }
    await sleep(50);
  }
  return seen;
}

let lagging: AnvilHandle | undefined;
afterEach(async () => {
  await lagging?.stop();
  lagging = undefined;
});

describe("a reorg to a shorter chain, two replicas sharing Redis", () => {
  it("both leave the orphaned block's figures within the check's interval and never answer them again", async () => {
    const a = await s.api();
    const b = await s.api();
    const snapshot = await anvil("evm_snapshot");
    await anvil("evm_mine");
    await mintSupply(s.d, 1_000n * TOKENS);
    const x = await truth();
    const dropped = await s.d.chain.publicClient.getBlock({ blockTag: "latest" });
    // a reads X; b takes a's entry from Redis (no read of its own).
    expect(await servedFigures(a)).toEqual(x);
    expect(await servedFigures(b)).toEqual(x);
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);

    // The reorg: back to the snapshot, one block younger than X on the new branch; the chain is one block below X.
    expect(await anvil("evm_revert", [snapshot])).toBe(true);
    await anvil("evm_setNextBlockTimestamp", [numberToHex(dropped.timestamp + 10n)]);
    await anvil("evm_mine");
    expect(await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(dropped.number - 1n);
    const y = await truth();
    expect(y.total).not.toBe(x.total);

    const seen = await poll({ a, b }, x.total, y.total, POLL_MS);
    const summary = Object.fromEntries(
      Object.entries(seen).map(([name, v]) => [
        name,
        { leftXBy: v.lastX <= BRANCH_CHECK_MS + SLACK_MS, answersY: v.firstY >= 0, xAfterY: v.xAfterY, other: v.other },
      ]),
    );
    const want = { leftXBy: true, answersY: true, xAfterY: 0, other: [] };
    expect([summary, seen]).toEqual([{ a: want, b: want }, seen]);
    expect(await servedFigures(a)).toEqual(y);
    expect(await servedFigures(b)).toEqual(y);
    expect((await s.admin.get(s.figuresKey()))?.split(" ").slice(0, 2)).toEqual([
      String(dropped.number - 1n),
      (await s.d.chain.publicClient.getBlock({ blockTag: "latest" })).hash,
    ]);
    expect(a.log()).toContain("reorged away");
    expect(b.log()).toContain("reorged away");
  });
});

describe("a lagging node, two replicas sharing Redis", () => {
  it("no block at X's height and a head older than X: neither replica goes back in block (b took X from Redis)", async () => {
    const head = await s.d.chain.publicClient.getBlock({ blockTag: "latest" });
    lagging = await startAnvil({ forkUrl: s.d.anvil.rpcUrl, forkBlockNumber: head.number });
    const older = await truth();
    await mintSupply(s.d, 1_000n * TOKENS);
    const x = await truth();
    const a = await s.api();
    const b = await s.api();
    expect(await servedFigures(a)).toEqual(x);
    expect(await servedFigures(b)).toEqual(x);
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);

    // The load balancer sends every call to the lagging node, and Redis loses the entry: over two branch checks and
    // several re-validations, both keep X.
    s.d.proxy.setUpstream(lagging.rpcUrl);
    s.d.proxy.reset();
    await s.admin.del(s.figuresKey());
    const seen = await poll({ a, b }, x.total, older.total, 2 * BRANCH_CHECK_MS + SLACK_MS);
    expect([seen.a?.firstY, seen.b?.firstY, seen.a?.other, seen.b?.other]).toEqual([-1, -1, [], []]);
    expect(s.d.proxy.count("eth_getBlockByNumber")).toBeGreaterThan(0);
    expect((await s.admin.get(s.figuresKey()))?.split(" ")[0]).toBe(String(head.number + 1n));
    expect(b.log()).toContain("supply node lags");
    expect(b.log()).not.toContain("reorged away");
  });
});
