/**
 * The `Age` of a supply figure (RFC 9111 §5.1), from the API process as operators run it (`npm run serve:api`,
 * dist/server/main.js, no index) over a seeded devnet: every 200 of /total and /circulating says how many whole
 * seconds ago its figures were read from the chain, on whichever replica serves them, so a cache downstream that got
 * one late in the window keeps it only until the window ends, not `max-age=300` more. Without it, a figure served at
 * second 299 was kept by a CDN 300 s more: up to 10 minutes old. Errors stay `no-store` without an Age.
 */
import { describe, expect, it } from "vitest";
import { TOTAL_LOCKED_CLAIM_CALLDATA } from "../../api/supply/reads";
import { formatWei2 } from "../../api/supply/wei";
import { chainSupplyAt } from "../support/chainTruth";
import type { ServiceChild } from "../support/replica";
import { ethCallSelector } from "../support/rpcProxy";
import { TEST_REDIS_URL as REDIS_URL, supplyProcesses } from "../support/supplyProcesses";

const WINDOW_MS = 300_000;
const AGE = /^(0|[1-9][0-9]*)$/;

const s = supplyProcesses("supplyage");
const api = (redisUrl: string) => s.api(redisUrl);

type Got = { status: number; body: string; headers: Headers; age: string | null; sentAt: number; gotAt: number };

async function get(p: ServiceChild, path: string, init: RequestInit = {}): Promise<Got> {
  const sentAt = Date.now();
  const res = await fetch(`${p.url}${path}`, { ...init, signal: AbortSignal.timeout(15_000) });
  const body = await res.text();
  return { status: res.status, body, headers: res.headers, age: res.headers.get("age"), sentAt, gotAt: Date.now() };
}

/** A figure's 200: the fixed Cache-Control, and an Age of whole seconds since `readAt` (at some moment of the exchange). */
function expectFigureAged(path: string, r: Got, readAt: { from: number; to: number }) {
  expect([path, r.status, r.headers.get("cache-control")]).toEqual([path, 200, "public, max-age=300"]);
  expect([path, r.age]).toEqual([path, expect.stringMatching(AGE)]);
  const age = Number(r.age);
  expect([path, age]).toEqual([path, expect.any(Number)]);
  expect(age).toBeGreaterThanOrEqual(Math.floor((r.sentAt - readAt.to) / 1000));
  expect(age).toBeLessThanOrEqual(Math.floor((r.gotAt - readAt.from) / 1000));
  expect(age).toBeLessThanOrEqual(WINDOW_MS / 1000);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const figuresKey = () => s.figuresKey();
/** The shared entry's read time (Unix ms): its fifth field (api/supply/figures.ts). */
const storedReadAt = async () => Number((await s.admin.get(figuresKey()))?.split(" ")[4]);

/** Every form a figure is served in: the Node-level hot path (plain, ?format=) and the routed one (a cache-buster). */
const FIGURE_PATHS = [
  "/api/supply/total",
  "/api/supply/total?format=bare",
  "/api/supply/circulating",
  "/api/supply/circulating?format=json",
  "/api/supply/circulating?cb=1",
] as const;

describe("Age of the supply figures", () => {
  it("one process: every figure's 200 says how long ago it was read, and it grows with time; max has none", async () => {
    const a = await api("");
    const from = Date.now();
    const first = await get(a, "/api/supply/total");
    // The read began after `from` and before the answer came.
    const readAt = { from, to: first.gotAt };
    expectFigureAged("first", first, readAt);
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
    for (const path of FIGURE_PATHS) expectFigureAged(path, await get(a, path), readAt);
    // HEAD is routed; a conditional request gets the full 200 (the figures carry no validator, so no 304).
    expectFigureAged("HEAD", await get(a, "/api/supply/total", { method: "HEAD" }), readAt);
    const conditional = await get(a, "/api/supply/circulating", { headers: { "if-none-match": "*" } });
    expectFigureAged("If-None-Match", conditional, readAt);
    expect(conditional.headers.get("etag")).toBeNull();

    await sleep(Math.max(0, readAt.to + 2_100 - Date.now()));
    for (const path of FIGURE_PATHS) {
      const later = await get(a, path);
      expectFigureAged(path, later, readAt);
      expect(Number(later.age)).toBeGreaterThanOrEqual(2);
    }
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);

    // max is static, answered as it is made: no Age (RFC 9111 §4.2.3 reads none as 0).
    for (const path of ["/api/supply/max", "/api/supply/max?format=bare"]) {
      const max = await get(a, path);
      expect([path, max.status, max.headers.get("cache-control"), max.age]).toEqual([
        path,
        200,
        "public, max-age=86400",
        null,
      ]);
    }
  });

  it("two processes sharing Redis: the Age counts from the one read, whichever serves it; its window ends one window after the read", async () => {
    const [b, c] = [await api(REDIS_URL), await api(REDIS_URL)];
    // A slow node: the read takes seconds (two round trips), so the read and the write of the entry are far apart.
    s.d.proxy.setFault({ kind: "delay", ms: 1_000 });
    const first = await get(b, "/api/supply/total?format=bare");
    s.d.proxy.setFault(null);
    const readAt = await storedReadAt();
    expect(readAt).toBeGreaterThanOrEqual(first.sentAt);
    expect(readAt).toBeLessThanOrEqual(first.gotAt - 2_000);
    const exact = { from: readAt, to: readAt };
    expectFigureAged("first", first, exact);
    expect(Number(first.age)).toBeGreaterThanOrEqual(2);
    // The entry lives in Redis until one window after the read, not after its write: no replica serves it past the
    // window, so none answers an Age above max-age.
    // (Before the change it lived one window after the write: 2 s later here.) The PTTL is taken after `asked`.
    const asked = Date.now();
    const pttl = await s.admin.pttl(figuresKey());
    expect(asked + pttl).toBeLessThanOrEqual(readAt + WINDOW_MS + 100);
    expect(asked + pttl).toBeGreaterThan(readAt + WINDOW_MS - 1_000);

    await sleep(1_100);
    // c's first answers come from Redis: its Age is since b's read, not since c took the entry.
    for (const path of FIGURE_PATHS) {
      expectFigureAged(`c ${path}`, await get(c, path), exact);
      expectFigureAged(`b ${path}`, await get(b, path), exact);
    }
    expect([s.d.proxy.count("eth_blockNumber"), s.d.proxy.count("eth_call")]).toEqual([1, 2]);
  });

  it("never above the window: an entry read 299.1 s ago answers Age 299; one read more than a window ago is not served", async () => {
    const { blockNumber, total, circulating } = await chainSupplyAt(s.d);
    const { hash, timestamp } = await s.d.chain.publicClient.getBlock({ blockNumber });
    const entry = (readAt: number) =>
      `${blockNumber} ${hash} ${formatWei2(total)} ${formatWei2(circulating)} ${readAt} ${timestamp}`;
    const c = await api(REDIS_URL);
    // What a replica that read the figures 299.1 s ago left in Redis: 0.9 s of its window still to go.
    await s.admin.set(figuresKey(), entry(Date.now() - 299_100), "PX", 900);
    const late = await get(c, "/api/supply/circulating");
    expect([late.status, late.age, JSON.parse(late.body).result]).toEqual([200, "299", formatWei2(circulating)]);
    expect(s.d.proxy.count("eth_blockNumber")).toBe(0);
    // A read stamped 400 s ago (an old writer, or a clock 100 s behind this one) with a fresh TTL: its window, counted
    // from its read, is over, so it is read again instead of served with an Age pinned at 300.
    await sleep(1_000);
    await s.admin.set(figuresKey(), entry(Date.now() - 400_000), "PX", 2_000);
    for (const path of FIGURE_PATHS) {
      const r = await get(c, path);
      expect([path, r.status, Number(r.age) <= 1]).toEqual([path, 200, true]);
    }
    expect(s.d.proxy.count("eth_blockNumber")).toBe(1);
  });

  it("errors stay no-store without an Age; an entry whose circulating half failed still ages its total", async () => {
    const a = await api(REDIS_URL);
    s.d.proxy.setFault({ kind: "result", value: "0x", match: (m) => m === "eth_call" });
    for (const path of FIGURE_PATHS) {
      const r = await get(a, path);
      expect([path, r.status, r.headers.get("cache-control"), r.age]).toEqual([path, 502, "no-store", null]);
    }
    // After the failure's backoff: locked ≥ total at the block read, so circulating fails closed and total is served.
    await sleep(2_100);
    s.d.proxy.setFault({
      kind: "result",
      value: `0x${"ff".repeat(32)}`,
      match: (m, p) => ethCallSelector(m, p) === TOTAL_LOCKED_CLAIM_CALLDATA,
    });
    const from = Date.now();
    const circ = await get(a, "/api/supply/circulating");
    expect([circ.status, circ.headers.get("x-supply-error"), circ.headers.get("cache-control"), circ.age]).toEqual([
      502,
      "SUPPLY_INCONSISTENT",
      "no-store",
      null,
    ]);
    const readAt = await storedReadAt();
    expect(readAt).toBeGreaterThanOrEqual(from);
    expectFigureAged("total", await get(a, "/api/supply/total"), { from: readAt, to: readAt });
  });
});
