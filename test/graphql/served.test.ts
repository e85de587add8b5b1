/**
 * GraphQL on the API process as operators run it (dist/server/main.js, api/server/main.ts) over a Postgres index
 * (a synthetic one shaped like Ponder's tables, test/support/syntheticIndex.ts), where the in-process tests cannot
 * show it:
 * - the answer equals the index's own truth at `_meta.block` and the REST route at that block, through the server;
 * - the 1 MiB answer limit: an answer past it is refused whole (RESPONSE_TOO_LARGE), nothing partial is sent;
 * - the 2 s execution limit: a read stuck behind a table lock is answered EXECUTION_TIMEOUT and its query is gone
 *   from Postgres with the answer, not left running;
 * - a client that hangs up mid-read: the query's backend stops at once and api_aborted_work_total{kind="db"} counts it.
 */
import pg from "pg";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPHQL_LIMITS } from "../../api/graphql/limits";
import type { ServiceChild } from "../support/replica";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";
import type { SyntheticIndex } from "../support/syntheticIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SCHEMA = "gqlserved";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Gql = { data?: Record<string, any> | null; errors?: { message: string; extensions: { code: string } }[] };

let served: ServedIndex;
let databaseUrl: string;
let index: SyntheticIndex;
let api: ServiceChild;
let probe: pg.Client;

const post = (query: string, signal?: AbortSignal) =>
  fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query }),
    signal,
  });

/** Queries of the API's pool waiting on a table lock (the holder's own session is idle in its transaction). */
async function waitingReads(): Promise<number> {
  const { rows } = await probe.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lock_event%'`,
  );
  return rows[0].n as number;
}

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** The two accounts with the most events, and how many each has. */
function busiest(): [string, number][] {
  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 2)
    .map(([a, n]) => [getAddress(a), n]);
}

/** Runs `body` while another session holds lock_event, so the API's reads of it wait. */
async function withTableHeld(body: () => Promise<void>): Promise<void> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  try {
    await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.lock_event IN ACCESS EXCLUSIVE MODE`);
    await body();
  } finally {
    await holder.query("ROLLBACK").catch(() => {});
    await holder.end();
  }
}

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: SCHEMA,
    synthetic: { events: 3_000, owners: 3, seed: 5 },
  });
  ({ databaseUrl, index, api } = served);
  probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
}, 120_000);

afterAll(async () => {
  await probe?.end();
  await served?.stop();
});

describe("GraphQL on the API process (Postgres)", () => {
  it("answers at `_meta.block`: the index's truth there, and the REST route's answer at that block", async () => {
    const [[owner]] = busiest() as [[string, number]];
    const res = await post(`{ _meta { block head }
      locks(where: { owner: "${owner}" }, limit: 1000) { items { tokenId owner amountWei lockEnd autoMax burned } }
      lockEvents(where: { account: "${owner}" }, limit: 5) { items { tokenId txHash logIndex blockNumber } } }`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Gql;
    expect(body.errors).toBeUndefined();
    const d = body.data!;
    expect(d._meta.block).toBe(String(index.head.block));
    const live = [...index.locks.values()]
      .filter((l) => !l.burned && l.owner?.toLowerCase() === owner.toLowerCase())
      .sort((a, b) => (a.tokenId < b.tokenId ? -1 : 1));
    expect(live.length).toBeGreaterThan(0);
    expect(d.locks.items.map((l: { tokenId: string }) => l.tokenId)).toEqual(live.map((l) => String(l.tokenId)));
    for (const [i, l] of live.entries()) {
      expect(d.locks.items[i]).toMatchObject({
        owner: getAddress(l.owner!),
        amountWei: String(l.amount),
        autoMax: l.autoMax,
        burned: false,
      });
    }
    const newest = index.events
      .filter((e) => e.account.toLowerCase() === owner.toLowerCase())
      .sort((a, b) =>
        a.blockNumber === b.blockNumber ? b.logIndex - a.logIndex : a.blockNumber > b.blockNumber ? -1 : 1,
      )
      .slice(0, 5);
    expect(d.lockEvents.items.map((e: { txHash: string; logIndex: number }) => [e.txHash, e.logIndex])).toEqual(
      newest.map((e) => [e.txHash, e.logIndex]),
    );
    const rest = (await (
      await fetch(`${api.url}/api/index/v1/accounts/${owner}/locks?block=${d._meta.block}`)
    ).json()) as { locks: { tokenId: string; amountWei: string }[] };
    expect(d.locks.items.map((l: { tokenId: string; amountWei: string }) => [l.tokenId, l.amountWei])).toEqual(
      rest.locks.map((l) => [l.tokenId, l.amountWei]),
    );
  });

  it(`an answer past ${GRAPHQL_LIMITS.responseBytes} bytes is refused whole: RESPONSE_TOO_LARGE, nothing partial`, async () => {
    const [[a, na], [b, nb]] = busiest() as [[string, number], [string, number]];
    expect(Math.min(na, nb)).toBeGreaterThanOrEqual(500); // the two lists hold ≥ 1,000 rows
    // Every field, and 14 aliases of the 66-character hash in each list (30 aliases in all): ≈ 1.6 kB a row.
    const hashes = Array.from({ length: 14 }, (_, i) => `h${i}: txHash`).join(" ");
    const fields = `${hashes} kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei
      listed blockNumber blockTimestamp txHash logIndex`;
    const list = (who: string) => `lockEvents(where: { account: "${who}" }, limit: 1000) { items { ${fields} } }`;
    const res = await post(`{ x: ${list(a)} y: ${list(b)} }`);
    const text = await res.text();
    expect(res.status).toBe(200);
    const body = JSON.parse(text) as Gql;
    expect(body.data, text.slice(0, 500)).toBeNull();
    expect(body.errors?.map((e) => e.extensions.code)).toEqual(["RESPONSE_TOO_LARGE"]);
    expect(text.length).toBeLessThan(1_000);
    // The same shape with fewer rows is answered: the limit is the answer's size, not the document.
    const small = await post(`{ x: ${list(a).replace("limit: 1000", "limit: 10")} }`);
    const ok = (await small.json()) as Gql;
    expect(ok.errors).toBeUndefined();
    expect(ok.data!.x.items).toHaveLength(10);
  });

  it(`a read stuck past ${GRAPHQL_LIMITS.timeMs} ms: EXECUTION_TIMEOUT, and its query is gone from Postgres`, async () => {
    const [[owner]] = busiest() as [[string, number]];
    await withTableHeld(async () => {
      const started = performance.now();
      const res = await post(`{ lockEvents(where: { account: "${owner}" }) { items { txHash } } }`);
      const body = (await res.json()) as Gql;
      const ms = performance.now() - started;
      expect(res.status).toBe(200);
      expect(body.errors?.map((e) => e.extensions.code)).toEqual(["EXECUTION_TIMEOUT"]);
      expect(ms).toBeGreaterThanOrEqual(GRAPHQL_LIMITS.timeMs - 50);
      expect(ms).toBeLessThan(GRAPHQL_LIMITS.timeMs + 1_500);
      // Cancelled with the answer, while the table is still held: nothing of it keeps waiting.
      const until = performance.now() + 500;
      while ((await waitingReads()) > 0 && performance.now() < until) await sleep(20);
      expect(await waitingReads()).toBe(0);
    });
  });

  it("a client that hangs up mid-read: the query's backend stops at once and is counted", async () => {
    const [[owner]] = busiest() as [[string, number]];
    const before = await metric('api_aborted_work_total{kind="db"}');
    await withTableHeld(async () => {
      const controller = new AbortController();
      const answered = post(`{ lockEvents(where: { account: "${owner}" }) { items { txHash } } }`, controller.signal)
        .then(() => "answered")
        .catch(() => "aborted");
      const seenBy = performance.now() + 1_500;
      while ((await waitingReads()) === 0) {
        if (performance.now() > seenBy) throw new Error("the read never waited on the held table");
        await sleep(20);
      }
      const hungUp = performance.now();
      controller.abort();
      expect(await answered).toBe("aborted");
      while ((await waitingReads()) > 0 && performance.now() - hungUp < 1_500) await sleep(20);
      const ms = performance.now() - hungUp;
      expect(await waitingReads()).toBe(0);
      // Well before the 2 s execution limit (or statement_timeout) would have ended it.
      expect(ms).toBeLessThan(1_000);
    });
    expect(await metric('api_aborted_work_total{kind="db"}')).toBe(before + 1);
  });
});
