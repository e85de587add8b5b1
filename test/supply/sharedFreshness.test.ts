/**
 * How long a supply figure may be served once it is no longer the one to serve, from the API process as operators
 * run it (dist/server/main.js, no index) over a seeded devnet behind the fault proxy, with a real Redis:
 *
 * - Redis loses the entry (a restart without persistence, an eviction, a failover) and another replica reads a later
 *   block: every replica sharing Redis answers that block within about a second (its in-process copy is re-validated
 *   against Redis at that interval), not its own copy for the rest of the window; two replicas that both read (a lock
 *   that lapsed) serve ONE entry, the first written (SET NX, then the winner adopted);
 * - an entry in Redis whose read time is older than the window, or ahead of this clock, is not served;
 * - a figure read on a branch that is then reorged away is dropped (in process and in Redis) within the branch check's
 *   interval, and the canonical chain's figure is read again;
 * - a batch answer carrying an id the service did not send is SUPPLY_RPC_INVALID_UINT256 (docs/api.md error table).
 */
import { describe, expect, it } from "vitest";
import { encodeFigures } from "../../api/supply/figures";
import { chainSupplyAt } from "../support/chainTruth";
import type { ServiceChild } from "../support/replica";
import { chainFigures, mintSupply, servedFigures, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: an in-process copy is re-validated against Redis at least this often. */
const REVALIDATE_MS = 1_000;
/** docs/api.md: the block of the figures' read is checked against the chain this often (SUPPLY_BRANCH_CHECK_MS). */
const BRANCH_CHECK_MS = 4_000;

const s = supplyProcesses("supplyfresh");
const api = (redisUrl?: string) => s.api(redisUrl);
const figuresKey = () => s.figuresKey();

type Got = { status: number; result: string | null; error: string | null; age: string | null };
async function get(p: ServiceChild, path: string): Promise<Got> {
  const res = await fetch(`${p.url}${path}`, { signal: AbortSignal.timeout(15_000) });
  const body = JSON.parse(await res.text()) as { result: string | null; error?: string };
  return { status: res.status, result: body.result, error: body.error ?? null, age: res.headers.get("age") };
}
const truth = () => chainFigures(s.d);
const figures = servedFigures;

const mint = (amount: bigint) => mintSupply(s.d, amount);
async function anvil(method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(s.d.anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TOKENS = 10n ** 18n;

describe("replicas sharing Redis serve one block", () => {
  it("after Redis loses the entry and a new replica reads a later block, every replica answers that block within ~1 s", async () => {
    const [b, c] = [await api(), await api()];
    const before = await truth();
    expect(await figures(b)).toEqual(before);
    expect(await figures(c)).toEqual(before);
    // Redis restarted without persistence: the entry is gone; the chain moves (circulating now above the old total).
    await s.admin.del(figuresKey());
    const { locked } = await chainSupplyAt(s.d);
    await mint(locked + 1_000n * TOKENS);
    const after = await truth();
    expect(BigInt(after.circulating.replace(".", ""))).toBeGreaterThan(BigInt(before.total.replace(".", "")));
    const e = await api();
    expect(await figures(e)).toEqual(after);
    // The bound: one re-validation interval (and a request's round trips) later, b and c answer e's block.
    await sleep(REVALIDATE_MS + 300);
    for (const [name, p] of [
      ["b", b],
      ["c", c],
      ["e", e],
    ] as const) {
      expect([name, await figures(p)]).toEqual([name, after]);
    }
    // One read after the loss, for all three (e's); b and c took it from Redis.
    expect(s.d.proxy.count("eth_call")).toBe(4);
  });

  it("two replicas reading at once (a lock that lapsed mid-read) serve one entry: the first written, adopted by the other", async () => {
    const [b, c] = [await api(), await api()];
    const before = await truth();
    // The batch of each read is slow: b's read at block N is still under way when its lock is lost.
    s.d.proxy.setFault({ kind: "delay", ms: 2_500, match: (m) => m === "eth_call" });
    const fromB = figures(b);
    const lockKey = `${figuresKey()}:lock`;
    // b holds the lock and its batch, pinned to block N, has reached the (slow) node.
    for (let i = 0; i < 300 && s.d.proxy.count("eth_call") === 0; i++) await sleep(10);
    expect([s.d.proxy.count("eth_call"), await s.admin.exists(lockKey)]).toEqual([2, 1]);
    // The lock lapses (a failover to a Redis replica that lacks it); the chain moves; c reads too, at block N + 1.
    await s.admin.del(lockKey);
    await mint(1_000n * TOKENS);
    const fromC = await figures(c);
    const b1 = await fromB;
    expect(b1).toEqual({ total: before.total, circulating: before.circulating });
    // c's read came second: it adopts b's entry instead of serving (and writing over it with) its own block.
    expect(fromC).toEqual(b1);
    s.d.proxy.setFault(null);
    await sleep(REVALIDATE_MS + 300);
    expect(await figures(b)).toEqual(b1);
    expect(await figures(c)).toEqual(b1);
  });
});

describe("an entry in Redis is served only within its window, counted from its read", () => {
  it("an entry read 600 s ago (or stamped an hour ahead) with a fresh TTL is read again, not served", async () => {
    const now = await truth();
    const head = await s.d.chain.publicClient.getBlock();
    const stale = (readAtMs: number) =>
      encodeFigures({
        blockNumber: head.number,
        blockHash: head.hash,
        blockTimestampSec: Number(head.timestamp),
        total: "1234567.89",
        circulating: "1000000.00",
        readAtMs,
      });
    for (const readAt of [Date.now() - 600_000, Date.now() + 3_600_000]) {
      s.newPrefix();
      await s.admin.set(figuresKey(), stale(readAt), "PX", 300_000);
      const a = await api();
      s.d.proxy.reset();
      const total = await get(a, "/api/supply/total");
      expect([readAt, total.status, total.result]).toEqual([readAt, 200, now.total]);
      expect(Number(total.age)).toBeLessThanOrEqual(1);
      expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
      // Replaced in Redis by the read.
      expect((await s.admin.get(figuresKey()))?.includes("1234567.89")).toBe(false);
    }
  });
});

describe("a figure read on a branch that is reorged away", () => {
  it("is dropped (in process and in Redis) within the branch check's interval; the canonical figure is read again", async () => {
    const a = await api();
    const snapshot = await anvil("evm_snapshot");
    await mint(1_000_000n * TOKENS);
    const orphan = await truth();
    expect(await figures(a)).toEqual(orphan);
    const orphanEntry = await s.admin.get(figuresKey());
    expect(orphanEntry).not.toBeNull();
    expect(await anvil("evm_revert", [snapshot])).toBe(true);
    await anvil("evm_mine");
    const canonical = await truth();
    expect(canonical).not.toEqual(orphan);
    s.d.proxy.reset();
    // Polled at any rate meanwhile: the check is one call per interval per process, not one per request.
    const until = Date.now() + BRANCH_CHECK_MS + 2_500;
    let last = await figures(a);
    while (Date.now() < until && last.total !== canonical.total) {
      await sleep(50);
      last = await figures(a);
    }
    expect(last).toEqual(canonical);
    expect(await figures(a)).toEqual(canonical);
    expect(await s.admin.get(figuresKey())).not.toBe(orphanEntry);
    expect(s.d.proxy.count("eth_getBlockByNumber")).toBeLessThanOrEqual(4);
  });
});

describe("a batch answer under an id the service did not send", () => {
  it("is SUPPLY_RPC_INVALID_UINT256 (docs/api.md), not a figure", async () => {
    const a = await api("");
    s.d.proxy.setFault({
      kind: "extraMember",
      id: 999_999,
      value: `0x${"00".repeat(32)}`,
      match: (m) => m === "eth_call",
    });
    for (const path of ["/api/supply/total", "/api/supply/circulating"]) {
      const r = await get(a, path);
      expect([path, r.status, r.result, r.error]).toEqual([path, 502, null, "SUPPLY_RPC_INVALID_UINT256"]);
    }
  });
});
