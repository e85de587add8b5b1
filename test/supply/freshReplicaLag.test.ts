/**
 * A node that lags while Redis has lost the entry, with a replica that holds the figures and a FRESH one (holding
 * nothing) sharing that Redis (docs/api.md "Supply API", "A lagging node"), from the API process as operators run it
 * (dist/server/main.js, no index) over a seeded devnet behind the fault proxy:
 *
 * - the fresh replica serves the figures the other holds, within their window, as that one does (red team supply F5:
 *   before, the fresh replica's remembered SUPPLY_RPC_LAGGING, shared in Redis and renewed by its own polls every 2 s,
 *   kept the holder from ever writing its figures back, and the fresh replica answered 502 on every poll);
 * - with nothing valid held by anyone, a replica still answers 502 SUPPLY_RPC_LAGGING.
 */
import { numberToHex } from "viem";
import { describe, expect, it } from "vitest";
import type { ServiceChild } from "../support/replica";
import { chainFigures, rpcResult, supplyProcesses } from "../support/supplyProcesses";

/** docs/api.md: a failure (SUPPLY_RPC_LAGGING too) is remembered this long. */
const BACKOFF_MS = 2_000;
/** docs/api.md: an in-process copy is re-validated against Redis at least this often. */
const REVALIDATE_MS = 1_000;
/** The processes' head-age bound (s): the header below is an hour old. */
const LAGGING_ENV = { SUPPLY_MAX_HEAD_AGE_SECONDS: "60" };

const s = supplyProcesses("supplyfresh");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Got = { at: number; status: number; answer: string; age: number | null };
async function getTotal(p: ServiceChild, t0: number): Promise<Got> {
  const res = await fetch(`${p.url}/api/supply/total?format=bare`, { signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  const age = res.headers.get("age");
  return {
    at: Date.now() - t0,
    status: res.status,
    answer: res.status === 200 ? text : (res.headers.get("x-supply-error") ?? ""),
    age: age === null ? null : Number(age),
  };
}
/** `status:answer` → count. */
const tally = (seen: readonly Got[]) =>
  seen.reduce<Record<string, number>>((t, r) => {
    const k = `${r.status}:${r.answer}`;
    t[k] = (t[k] ?? 0) + 1;
    return t;
  }, {});

/** From now on the node answers the header of `block` with a timestamp an hour old (a node stuck an hour ago). */
async function hourOldHeader(block: bigint): Promise<void> {
  const header = (await rpcResult(s.d.anvil.rpcUrl, "eth_getBlockByNumber", [numberToHex(block), false])) as object;
  const value = { ...header, timestamp: numberToHex(Math.floor(Date.now() / 1000) - 3_600) };
  s.d.proxy.setFault({
    kind: "result",
    value,
    match: (m, params) => m === "eth_getBlockByNumber" && params[0] === numberToHex(block),
  });
}

describe("the node lags and Redis lost the entry: a fresh replica beside one that holds the figures", () => {
  it("serves the held figures (from Redis, within their window) after at most a backoff and a re-validation; with nothing held anywhere, 502 SUPPLY_RPC_LAGGING", async () => {
    const a = await s.api(undefined, LAGGING_ENV);
    const held = await chainFigures(s.d);
    expect(await (await fetch(`${a.url}/api/supply/total?format=bare`)).text()).toBe(held.total);
    const readAt = Date.now();
    const head = await s.d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const b = await s.api(undefined, LAGGING_ENV);

    // The node lags, and Redis loses the entry; the fresh replica is asked first (an aggregator's poll), then both are
    // polled as a load balancer spreads an aggregator's polls: b often (it renews its remembered failure at once), a
    // now and then.
    await hourOldHeader(head);
    await s.admin.del(s.figuresKey());
    const t0 = Date.now();
    const first = await getTotal(b, t0);
    expect([first.status, first.answer]).toEqual([502, "SUPPLY_RPC_LAGGING"]);
    const seenA: Got[] = [];
    const seenB: Got[] = [];
    const pollFor = async (p: ServiceChild, into: Got[], everyMs: number) => {
      while (Date.now() - t0 < 4 * BACKOFF_MS + 1_000) {
        into.push(await getTotal(p, t0));
        await sleep(everyMs);
      }
    };
    await Promise.all([pollFor(b, seenB, 10), pollFor(b, seenB, 10), pollFor(a, seenA, 250)]);

    // The holder answers its figures throughout; the fresh replica does too once its own remembered failure lapsed
    // (the backoff) and the holder wrote them back (its next re-validation), with their Age counted from their read.
    expect(tally(seenA)).toEqual({ [`200:${held.total}`]: seenA.length });
    const settled = seenB.filter((r) => r.at > BACKOFF_MS + REVALIDATE_MS + 500);
    expect(settled.length).toBeGreaterThan(50);
    expect(tally(settled)).toEqual({ [`200:${held.total}`]: settled.length });
    const last = settled[settled.length - 1] as Got;
    expect(last.age).toBeGreaterThanOrEqual(Math.floor((t0 + last.at - readAt) / 1000) - 1);
    // The figures written back are the holder's, of their block; the node was asked about once per backoff, not per poll.
    expect((await s.admin.get(s.figuresKey()))?.split(" ")[0]).toBe(String(head));
    expect(s.d.proxy.count("eth_blockNumber")).toBeLessThanOrEqual(4);

    // Nothing valid held anywhere (another deployment's prefix, the node still lagging): the failure's code.
    s.newPrefix();
    const c = await s.api(undefined, LAGGING_ENV);
    for (let i = 0; i < 3; i++) {
      const r = await getTotal(c, t0);
      expect([r.status, r.answer]).toEqual([502, "SUPPLY_RPC_LAGGING"]);
      await sleep(BACKOFF_MS / 2);
    }
  });
});
