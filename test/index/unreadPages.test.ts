/**
 * Unread 1,000-row pages on the API process as operators run it (dist/server/main.js over a Postgres index,
 * test/support/servedIndex.ts): clients pipelining REST history pages, account locks and GraphQL pages and never
 * reading them, from 1 address and from 400, leave every request of another client answered, its /health p99 under
 * 1 s on this shared machine (the goal, ≤ 50 ms, is bench/abuse-choices.ts's to measure) and new connections
 * answered within 1 s: the pages start one per turn (api/server/turnstile.ts), share one budget of rows in flight
 * with GraphQL (api/read/admission.ts), are built and written one per turn (api/index/answer.ts answerPage,
 * api/graphql/scope.ts, api/http/answerTurns.ts), the turns leave the loop iterations to accept connections
 * (api/http/loopPacer.ts), and the accept queue is deep enough for 400 connecting at once.
 * bench/abuse-choices.ts measures the same at length.
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";
import { freshConnection, holdUnread, percentile, probe, rawGet, rawGraphql } from "../support/unreadPages";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
let served: ServedIndex;
let accounts: string[];

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: "unread_pages",
    synthetic: { events: 20_000, owners: 20, seed: 17 },
    env: { RATE_LIMIT_MAX: "1000000" },
  });
  const counts = new Map<string, number>();
  for (const e of served.index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  accounts = [...counts].sort((a, b) => b[1] - a[1]).map(([a]) => getAddress(a));
}, 180_000);

afterAll(async () => {
  await served?.stop();
});

const FIELDS = "kind tokenId account amountWei lockEnd owner lockAmountWei blockNumber blockTimestamp txHash logIndex";

/** The k-th request of connection i: a 1,000-event REST page, an account's locks, or a 1,000-event GraphQL page. */
function page(host: string) {
  return (i: number, k: number) => {
    const a = accounts[(i + k) % accounts.length]!;
    switch ((i + k) % 3) {
      case 0:
        return rawGet(host, `/api/index/v1/accounts/${a}/events?limit=1000`);
      case 1:
        return rawGet(host, `/api/index/v1/accounts/${a}/locks`);
      default:
        return rawGraphql(host, `{ lockEvents(where: { account: "${a}" }, limit: 1000) { items { ${FIELDS} } } }`);
    }
  };
}

async function underUnread(addresses: number, sockets: number, pipelined: number) {
  const base = served.api.url;
  const host = new URL(base).host;
  const before = await probe(`${base}/health`, 2_000);
  const holding = holdUnread(base, { addresses, sockets, pipelined, holdMs: 6_000, request: page(host) });
  await new Promise((r) => setTimeout(r, 500));
  const [during, fresh] = await Promise.all([
    probe(`${base}/health`, 4_500),
    (async () => {
      const out: { status: number; ms: number }[] = [];
      for (let i = 0; i < 8; i++) {
        out.push(await freshConnection(`${base}/health`, `127.0.0.${200 + i}`));
        await new Promise((r) => setTimeout(r, 400));
      }
      return out;
    })(),
  ]);
  await holding;
  const metrics = await (await fetch(`${base}/api/metrics`)).text();
  const lagMax = Number(/^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(metrics)?.[1]);
  const figures = {
    eventLoopLagMaxMs: Math.round(lagMax * 1000),
    beforeP99: percentile(before.ms, 99),
    duringP99: percentile(during.ms, 99),
    duringN: during.ms.length,
    failed: during.failed,
    freshMs: fresh.map((f) => Math.round(f.ms)),
    freshStatus: fresh.map((f) => f.status),
  };
  console.log(
    `${addresses} address(es) × ${sockets} socket(s) × ${pipelined} pages unread: ${JSON.stringify(figures)}`,
  );
  return figures;
}

describe("unread 1,000-row pages, pipelined", () => {
  it("from 1 address (50 connections × 4 pages): another client's p99 and a new connection stay prompt", async () => {
    const f = await underUnread(1, 50, 4);
    expect(f.failed).toBe(0);
    // The goal is ≤ 50 ms (docs/operations.md, bench/abuse-choices.ts); on this shared machine (load ~15 on 2
    // cores) the bound is what fails when the event loop or the accept queue is held for seconds, as before (3 s,
    // no answer, from 400 addresses).
    expect(f.duringP99).toBeLessThan(1_000);
    for (const [i, ms] of f.freshMs.entries()) {
      expect(f.freshStatus[i]).toBe(200);
      expect(ms).toBeLessThan(1_000);
    }
  }, 60_000);

  it("from 400 addresses (1 connection × 2 pages each): every request answered, a new connection within 1 s", async () => {
    const f = await underUnread(400, 1, 2);
    // libuv accepts one connection per loop iteration: while every iteration built a page, the 400 were accepted
    // at ~140 a second and a new connection waited behind them in the accept queue for 1.8–3.0 s (2026-11-27, this
    // machine; CI failed on it). The heavy turns are paced now (api/http/loopPacer.ts): 30 ms. The bound is the
    // goal bench/abuse-choices.ts prints beside it, < 1 s, with the /health probe (its connection new then too).
    expect(f.failed).toBe(0);
    expect(f.duringP99).toBeLessThan(1_000);
    for (const [i, ms] of f.freshMs.entries()) {
      expect(f.freshStatus[i]).toBe(200);
      expect(ms).toBeLessThan(1_000);
    }
  }, 60_000);
});
