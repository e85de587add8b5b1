/**
 * GraphQL on the API process as operators run it (dist/server/main.js, api/server/main.ts) over a Postgres index
 * (a synthetic one shaped like Ponder's tables, test/support/syntheticIndex.ts), where the in-process tests cannot
 * show it:
 * - the answer equals the index's own truth at `_meta.block` and the REST route at that block, through the server;
 * - the 1 MiB answer limit: an answer past it is refused whole (RESPONSE_TOO_LARGE), nothing partial is sent;
 * - the 2 s execution limit: a read stuck behind a table lock is answered EXECUTION_TIMEOUT and its query is gone
 *   from Postgres with the answer, not left running;
 * - a client that hangs up mid-read: the query's backend stops at once and api_aborted_work_total{kind="db"} counts it;
 * - one statement per request, `_meta` included; identical requests arriving together share one execution and its
 *   bytes, and one that fails (its own client hung up) is shared with no one; the rows in flight are bounded
 *   (api/read/admission.ts); the body read from Node's stream (a chunked one past 64 KiB is 413, not JSON is
 *   BAD_REQUEST).
 */
import net from "node:net";
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

const post = (query: string, signal?: AbortSignal) => postBody(JSON.stringify({ query }), signal);

const postBody = (body: string, signal?: AbortSignal, accept = "application/json") =>
  fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body,
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

async function untilWaiting(n: number): Promise<void> {
  const by = performance.now() + 1_500;
  while ((await waitingReads()) !== n) {
    if (performance.now() > by) throw new Error(`never ${n} reads waiting on the held table`);
    await sleep(10);
  }
}

/** Another session holds lock_event (so the API's reads of it wait) until the returned release is called. */
async function holdTable(): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.lock_event IN ACCESS EXCLUSIVE MODE`);
  let released: Promise<void> | undefined;
  return () => {
    released ??= holder
      .query("ROLLBACK")
      .catch(() => {})
      .then(() => holder.end());
    return released;
  };
}

/** Runs `body` while another session holds lock_event, so the API's reads of it wait. */
async function withTableHeld(body: (release: () => Promise<void>) => Promise<void>): Promise<void> {
  const release = await holdTable();
  try {
    await body(release);
  } finally {
    await release();
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

describe("GraphQL answers shared between identical requests (API process, Postgres)", () => {
  it("one statement per request: `_meta` takes the block the rows' statement read, before or after them", async () => {
    const [[account]] = busiest() as [[string, number]];
    // The read model's statements (api_index_db_query_duration_seconds), not the watermark's index_mark.
    const statements = async () => {
      const text = await (await fetch(`${api.url}/api/metrics`)).text();
      const count = (names: RegExp) =>
        text
          .split("\n")
          .filter((l) => l.startsWith("api_index_db_query_duration_seconds_count{") && names.test(l))
          .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
      return {
        all: count(/statement="index_(probe|lock|locks_of|events_of_lock|events_of_account|holders|stats)"/),
        probe: count(/statement="index_probe"/),
      };
    };
    const events = `lockEvents(where: { account: "${account}" }, limit: 3) { items { txHash } }`;
    for (const [query, all, probes] of [
      [`{ _meta { block head } ${events} }`, 1, 0],
      [`{ ${events} _meta { block } }`, 1, 0],
      [`{ _meta { block } }`, 1, 1],
    ] as const) {
      const before = await statements();
      const res = await post(query);
      const body = (await res.json()) as { data: { _meta: { block: string } }; errors?: unknown };
      expect(body.errors, query).toBeUndefined();
      expect(body.data._meta.block).toBe(String(index.head.block));
      const after = await statements();
      expect(after.all - before.all, query).toBe(all);
      expect(after.probe - before.probe, query).toBe(probes);
    }
  });

  it("ten identical requests arriving together: one read of the index, ten equal answers of the index's truth", async () => {
    const [[account]] = busiest() as [[string, number]];
    const body = JSON.stringify({
      query: `{ _meta { block } lockEvents(where: { account: "${account}" }, limit: 50) { items { txHash logIndex } } }`,
    });
    const own = await metric('api_graphql_answers_total{made="own"}');
    const shared = await metric('api_graphql_answers_total{made="shared"}');
    const release = await holdTable();
    let answers: string[];
    try {
      const pending = Array.from({ length: 10 }, () => postBody(body).then((r) => r.text()));
      await untilWaiting(1);
      await sleep(200); // every other request has arrived: still one read waiting
      expect(await waitingReads()).toBe(1);
      await release();
      answers = await Promise.all(pending);
    } finally {
      await release();
    }
    expect(new Set(answers).size).toBe(1);
    const answer = JSON.parse(answers[0]!);
    expect(answer.errors).toBeUndefined();
    expect(answer.data._meta.block).toBe(String(index.head.block));
    const truth = index.events
      .filter((e) => getAddress(e.account) === account || (e.recipient && getAddress(e.recipient) === account))
      .sort((a, b) =>
        a.blockNumber === b.blockNumber ? b.logIndex - a.logIndex : a.blockNumber > b.blockNumber ? -1 : 1,
      )
      .slice(0, 50);
    expect(answer.data.lockEvents.items).toEqual(truth.map((e) => ({ txHash: e.txHash, logIndex: e.logIndex })));
    expect(await metric('api_graphql_answers_total{made="own"}')).toBe(own + 1);
    expect(await metric('api_graphql_answers_total{made="shared"}')).toBe(shared + 9);
  });

  it("an execution whose client hung up is shared with no one: the one that joined it runs its own", async () => {
    const [[account]] = busiest() as [[string, number]];
    const body = JSON.stringify({
      query: `{ lockEvents(where: { account: "${account}" }, limit: 7) { items { txHash } } }`,
    });
    const own = await metric('api_graphql_answers_total{made="own"}');
    const release = await holdTable();
    try {
      const leader = new AbortController();
      const first = postBody(body, leader.signal).catch(() => "hung up");
      await untilWaiting(1);
      const second = postBody(body).then(async (r) => ({ status: r.status, body: await r.json() }));
      await sleep(200); // the second has joined the first: no read of its own yet
      expect(await waitingReads()).toBe(1);
      leader.abort();
      expect(await first).toBe("hung up");
      // The first's read is cancelled; the second's own read takes its place behind the lock.
      await untilWaiting(1);
      await release();
      const answer = await second;
      expect(answer.status).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data.lockEvents.items).toHaveLength(7);
    } finally {
      await release();
    }
    expect(await metric('api_graphql_answers_total{made="own"}')).toBe(own + 2);
  });

  // 1,000, 999, 998, … rows: as many as fit in the process's budget read the index together, the next one waits.
  const asked: number[] = [];
  for (let held = 0; held <= GRAPHQL_LIMITS.rowsInFlight; ) {
    asked.push(1000 - asked.length);
    held += asked.at(-1)!;
  }
  const fit = asked.length - 1;
  it(`rows in flight: ${asked.length} different 1,000-row requests at once, ${fit} read the index, the last waits its turn`, async () => {
    const [[account]] = busiest() as [[string, number]];
    const release = await holdTable();
    try {
      const pending = asked.map((limit) =>
        post(`{ lockEvents(where: { account: "${account}" }, limit: ${limit}) { items { logIndex } } }`).then(
          async (r) => ((await r.json()) as { data: { lockEvents: { items: unknown[] } } }).data,
        ),
      );
      await untilWaiting(fit);
      await sleep(200);
      // The first `fit` hold at most the budget; the last would pass it.
      expect(await waitingReads()).toBe(fit);
      await release();
      const pages = await Promise.all(pending);
      const expected = Math.min(
        asked.at(-1)!,
        index.events.filter(
          (e) => getAddress(e.account) === account || (e.recipient && getAddress(e.recipient) === account),
        ).length,
      );
      expect(pages.at(-1)!.lockEvents.items.length).toBe(expected);
    } finally {
      await release();
    }
  });

  it("the body from Node's stream: a chunked body past 64 KiB is 413; a body that is not JSON is BAD_REQUEST", async () => {
    const { port } = new URL(api.url);
    const chunk = "x".repeat(16 * 1024);
    const response = await new Promise<string>((resolve, reject) => {
      const s = net.connect({ host: "127.0.0.1", port: Number(port) });
      let got = "";
      s.on("data", (d) => {
        got += d.toString();
      });
      s.on("end", () => resolve(got));
      s.on("close", () => resolve(got));
      s.on("error", reject);
      s.write(
        "POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n" +
          "transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
      );
      for (let i = 0; i < 5; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      s.write("0\r\n\r\n");
    });
    expect(response).toMatch(/^HTTP\/1\.1 413 /);
    expect(response).toContain('"PAYLOAD_TOO_LARGE"');

    for (const bad of ["{ not json", "[]", "42"]) {
      const res = await postBody(bad, undefined, "application/graphql-response+json");
      const answer = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(res.status, bad).toBe(400);
      expect(answer.errors.map((e) => e.extensions.code)).toEqual(["BAD_REQUEST"]);
    }
    // The next request on the server is answered as usual.
    const ok = await post("{ _meta { block } }");
    expect(((await ok.json()) as { data: { _meta: { block: string } } }).data._meta.block).toBe(
      String(index.head.block),
    );
  });
});
