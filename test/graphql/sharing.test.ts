/**
 * GraphQL requests sharing an execution, on the API process as operators run it (dist/server/main.js over a
 * synthetic Postgres index): identical requests arriving together make one execution and get its bytes; an execution
 * that fails (its own client hung up) is shared with no one, so a fault never becomes another client's answer; the
 * process's rows in flight are bounded (api/graphql/admission.ts). The
 * body is read from Node's request stream (api/http/boundedBody.ts): a chunked body past 64 KiB is refused, a body
 * that is not JSON gets GraphQL's own BAD_REQUEST.
 */
import { rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SCHEMA = "gqlsharing";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let devnet: TestDevnet;
let database: TestDatabase;
let databaseUrl: string;
let manifestFile: string;
let index: SyntheticIndex;
let api: ServiceChild;
let probe: pg.Client;

const post = (body: string, signal?: AbortSignal, accept = "application/json") =>
  fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept },
    body,
    signal,
  });

/** Queries of the API's pool waiting on a table lock. */
async function waitingReads(): Promise<number> {
  const { rows } = await probe.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lock_event%'`,
  );
  return rows[0].n as number;
}

async function untilWaiting(n: number): Promise<void> {
  const by = performance.now() + 1_500;
  while ((await waitingReads()) !== n) {
    if (performance.now() > by) throw new Error(`never ${n} reads waiting on the held table`);
    await sleep(10);
  }
}

async function metric(series: string): Promise<number> {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Holds lock_event (so the API's reads of it wait) until the returned release is called. */
async function holdTable(): Promise<() => Promise<void>> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query(`BEGIN; LOCK TABLE ${SCHEMA}.lock_event IN ACCESS EXCLUSIVE MODE`);
  return async () => {
    await holder.query("ROLLBACK").catch(() => {});
    await holder.end();
  };
}

function busiest(): string {
  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  return getAddress([...counts].sort((a, b) => b[1] - a[1])[0]![0]);
}

beforeAll(async () => {
  devnet = await startDevnet();
  manifestFile = writeManifest(devnet.deployment.manifest);
  database = await createTestDatabase(PG_URL);
  databaseUrl = (database.forPonder(SCHEMA) as { url: string }).url;
  index = generateSyntheticIndex({ events: 2_000, owners: 3, seed: 9 });
  const writer = new pg.Client({ connectionString: databaseUrl });
  await writer.connect();
  await writeSyntheticIndex((text, params) => writer.query(text, params), SCHEMA, index, {
    chainId: devnet.deployment.manifest.chainId,
  });
  await writer.end();
  probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  api = await spawnService({
    command: "api",
    rpcUrl: devnet.rpcUrl,
    manifestFile,
    databaseUrl,
    schema: SCHEMA,
    env: { LOG_LEVEL: "error", REDIS_URL: "" },
  });
  await api.waitFor200("/health", 30_000);
}, 120_000);

afterAll(async () => {
  await api?.stop("SIGKILL");
  await probe?.end();
  await database?.drop();
  await devnet?.stop();
  if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
});

describe("GraphQL answers shared between identical requests (API process, Postgres)", () => {
  it("one statement per request: `_meta` takes the block the rows' statement read, before or after them", async () => {
    const account = busiest();
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
      const res = await post(JSON.stringify({ query }));
      const body = (await res.json()) as { data: { _meta: { block: string } }; errors?: unknown };
      expect(body.errors, query).toBeUndefined();
      expect(body.data._meta.block).toBe(String(index.head.block));
      const after = await statements();
      expect(after.all - before.all, query).toBe(all);
      expect(after.probe - before.probe, query).toBe(probes);
    }
  });

  it("ten identical requests arriving together: one read of the index, ten equal answers of the index's truth", async () => {
    const account = busiest();
    const body = JSON.stringify({
      query: `{ _meta { block } lockEvents(where: { account: "${account}" }, limit: 50) { items { txHash logIndex } } }`,
    });
    const own = await metric('api_graphql_answers_total{made="own"}');
    const shared = await metric('api_graphql_answers_total{made="shared"}');
    const release = await holdTable();
    let answers: string[];
    try {
      const pending = Array.from({ length: 10 }, () => post(body).then((r) => r.text()));
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
    const account = busiest();
    const body = JSON.stringify({
      query: `{ lockEvents(where: { account: "${account}" }, limit: 7) { items { txHash } } }`,
    });
    const own = await metric('api_graphql_answers_total{made="own"}');
    const release = await holdTable();
    try {
      const leader = new AbortController();
      const first = post(body, leader.signal).catch(() => "hung up");
      await untilWaiting(1);
      const second = post(body).then(async (r) => ({ status: r.status, body: await r.json() }));
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

  it("rows in flight: five different 1,000-row requests at once, four read the index, the fifth waits its turn", async () => {
    const account = busiest();
    const release = await holdTable();
    try {
      const pending = [1000, 999, 998, 997, 996].map((limit) =>
        post(
          JSON.stringify({
            query: `{ lockEvents(where: { account: "${account}" }, limit: ${limit}) { items { logIndex } } }`,
          }),
        ).then(async (r) => ((await r.json()) as { data: { lockEvents: { items: unknown[] } } }).data),
      );
      await untilWaiting(4);
      await sleep(200);
      expect(await waitingReads()).toBe(4); // 3,994 rows held; 996 more would pass the 4,000
      await release();
      const pages = await Promise.all(pending);
      const expected = Math.min(
        996,
        index.events.filter(
          (e) => getAddress(e.account) === account || (e.recipient && getAddress(e.recipient) === account),
        ).length,
      );
      expect(pages[4]!.lockEvents.items.length).toBe(expected);
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
      const res = await post(bad, undefined, "application/graphql-response+json");
      const answer = (await res.json()) as { errors: { extensions: { code: string } }[] };
      expect(res.status, bad).toBe(400);
      expect(answer.errors.map((e) => e.extensions.code)).toEqual(["BAD_REQUEST"]);
    }
    // The next request on the server is answered as usual.
    const ok = await post(JSON.stringify({ query: "{ _meta { block } }" }));
    expect(((await ok.json()) as { data: { _meta: { block: string } } }).data._meta.block).toBe(
      String(index.head.block),
    );
  });
});
