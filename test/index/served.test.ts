/**
 * Conditional GETs of the index API on the API process as operators run it (dist/server/main.js over a Postgres
 * index, test/support/servedIndex.ts): what goes on the wire for a 304 — the status line and the headers the 200
 * had for caching and CORS, and no body, no Content-Length or Transfer-Encoding (RFC 9110 §15.4.5, RFC 9112 §6.3); the 200's Content-Type,
 * since a cache refreshes its stored headers from a 304's and the server would otherwise write text/plain.
 * And a client that hangs up while its route's statement waits (behind a table lock held by the test): the API cancels
 * the statement within 250 ms (counted in api_aborted_work_total) and its backend stops within Postgres's connection
 * check interval after that (docs/operations.md), not at the statement timeout.
 * The routes' behaviour in full is test/index/router.test.ts's, in process.
 */
import pg from "pg";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAIN_FINALITY_MS } from "../../api/read/chainFinality";
import { CLIENT_CONNECTION_CHECK_MS } from "../../api/read/statements";
import { sendRaw } from "../support/rawHttp";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";
import { SYNTHETIC_BUILD_ID } from "../support/syntheticIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const BASE = "/api/index/v1";

let served: ServedIndex;
let chainId: number;

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: "conditional",
    synthetic: { events: 400, owners: 4, seed: 7 },
  });
  chainId = served.devnet.deployment.manifest.chainId;
}, 120_000);

afterAll(async () => {
  await served?.stop();
});

const url = (path: string) => `${served.api.url}${BASE}${path}`;
const FIXTURE_BUILD = SYNTHETIC_BUILD_ID;

async function devnetRpc(method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(served.devnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

const chainFinalized = async () =>
  BigInt(((await devnetRpc("eth_getBlockByNumber", ["finalized", false])) as { number: string }).number);

/**
 * Mines the devnet until its node calls `block` finalized, then waits for the API to have read that (it asks every
 * CHAIN_FINALITY_MS): its answer at `block` turns `immutable`.
 */
async function finalizeOnChain(block: bigint): Promise<void> {
  // anvil calls final the block 64 under its head (0 while the chain is shorter): twice at most.
  for (let finalized = await chainFinalized(); finalized < block; finalized = await chainFinalized()) {
    await devnetRpc("anvil_mine", [`0x${(block - finalized).toString(16)}`]);
  }
  const deadline = Date.now() + 4 * CHAIN_FINALITY_MS;
  for (;;) {
    const res = await sendRaw(url(`/stats?block=${block}`));
    if (res.headers["cache-control"] === "public, max-age=86400, immutable") return;
    if (Date.now() > deadline) throw new Error(`block ${block} still not immutable: ${res.headers["cache-control"]}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function withIndex<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: served.databaseUrl });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

describe("If-None-Match on the API process", () => {
  it("the head's answer revalidated: 304 on the wire with its ETag, caching and CORS headers and nothing else of the 200", async () => {
    const owner = getAddress(served.index.events[0]!.account);
    for (const path of ["/stats", `/accounts/${owner}/events?limit=10`, "/leaderboards/ve?limit=10"]) {
      const first = await sendRaw(url(path));
      expect(first.status, path).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(new RegExp(`^W/"${chainId}-\\d+-[\\w-]{16}"$`));
      const again = await sendRaw(url(path), "GET", { "if-none-match": etag });
      expect(again.status, path).toBe(304);
      expect(again.body).toBe("");
      // The type too (the server would otherwise write text/plain, which a cache would take into its stored headers).
      for (const h of [
        "etag",
        "cache-control",
        "content-type",
        "access-control-allow-origin",
        "access-control-expose-headers",
      ])
        expect(again.headers[h], `${path} ${h}`).toBe(first.headers[h]);
      expect(again.headers["x-request-id"]).toMatch(/.+/);
      for (const h of ["content-length", "transfer-encoding"]) expect(again.headers[h], `${path} ${h}`).toBeUndefined();
    }
  });

  it("a block Ponder finalized but the chain has not is not `immutable` until the node calls it finalized", async () => {
    const head = served.index.head.block;
    // Well below Ponder's finalized block (30 under the head); the devnet's chain is far shorter than the synthetic
    // index, so its node's `finalized` block (anvil: 64 under its head) is below it until the test mines past it.
    const past = served.index.events.map((e) => e.blockNumber).find((b) => b < head - 100n)!;
    expect(await chainFinalized()).toBeLessThan(past);
    const before = await sendRaw(url(`/stats?block=${past}`));
    expect(before.status).toBe(200);
    expect(before.headers["cache-control"]).toBe("public, max-age=2");
    // A 304 of it says the same.
    const again = await sendRaw(url(`/stats?block=${past}`), "GET", { "if-none-match": before.headers.etag as string });
    expect([again.status, again.headers["cache-control"]]).toEqual([304, "public, max-age=2"]);

    await finalizeOnChain(past);
    const after = await sendRaw(url(`/stats?block=${past}`));
    expect(after.headers["cache-control"]).toBe("public, max-age=86400, immutable");
    // The same answer: only what it may promise caches changed.
    const { indexLagSeconds: _a, ...sameAfter } = JSON.parse(after.body);
    const { indexLagSeconds: _b, ...sameBefore } = JSON.parse(before.body);
    expect([sameAfter, after.headers.etag]).toEqual([sameBefore, before.headers.etag]);
  }, 60_000);

  it("a past block's answer revalidated: 304 that keeps `immutable`; a tag that does not match gets the 200", async () => {
    const head = served.index.head.block;
    // A block well below the finalized one (30 blocks under the head) in which an event happened.
    const past = served.index.events.map((e) => e.blockNumber).find((b) => b < head - 100n)!;
    await finalizeOnChain(past);
    const first = await sendRaw(url(`/stats?block=${past}`));
    expect(first.status).toBe(200);
    expect(first.headers["cache-control"]).toBe("public, max-age=86400, immutable");
    const tag = first.headers.etag as string;
    expect(tag).toMatch(new RegExp(`^W/"${chainId}-${past}-[\\w-]{16}"$`));
    const again = await sendRaw(url(`/stats?block=${past}`), "GET", { "if-none-match": `"x", ${tag}` });
    expect([again.status, again.body]).toEqual([304, ""]);
    expect(again.headers["cache-control"]).toBe("public, max-age=86400, immutable");

    // The past block's tag does not validate the head's answer (nor a strong tag of another block, nor garbage).
    for (const other of [tag, tag.slice(2).replace(`-${past}-`, `-${past + 1n}-`), "garbage"]) {
      const res = await sendRaw(url("/stats"), "GET", { "if-none-match": other });
      expect(res.status, other).toBe(200);
      expect(JSON.parse(res.body).blockNumber).toBe(String(head));
    }
  });

  it("another build's answer at the same block has another tag: the old build's If-None-Match is a 200", async () => {
    const head = served.index.head.block;
    const past = served.index.events.map((e) => e.blockNumber).find((b) => b < head - 100n)!;
    const tokenId = served.index.events.find((e) => e.tokenId > 0n && e.blockNumber <= past)!.tokenId;
    // A statement's own read (the lock) and an answer this process keeps per block (the stats).
    const paths = [`/locks/${tokenId}?block=${past}`, `/stats?block=${past}`];
    const setBuild = (id: string) =>
      withIndex((c) =>
        c.query(
          `UPDATE ${served.schema}._ponder_meta
      SET value = jsonb_set(value, '{build_id}', to_jsonb($1::text)) WHERE key = 'app'`,
          [id],
        ),
      );
    const tags = new Map<string, string>();
    for (const path of paths) {
      const first = await sendRaw(url(path));
      expect(first.status, path).toBe(200);
      tags.set(path, first.headers.etag as string);
    }
    try {
      // A redeploy into a new schema whose views the API processes now read: the same blocks, another build's rows.
      await setBuild("0123456789");
      for (const path of paths) {
        const old = tags.get(path)!;
        const answer = await sendRaw(url(path), "GET", { "if-none-match": old });
        expect(answer.status, path).toBe(200);
        const tag = answer.headers.etag as string;
        expect(tag, path).toMatch(new RegExp(`^W/"${chainId}-${past}-[\\w-]{16}"$`));
        expect(tag, path).not.toBe(old);
        expect((await sendRaw(url(path), "GET", { "if-none-match": tag })).status, path).toBe(304);
      }
    } finally {
      await setBuild(FIXTURE_BUILD);
    }
  });
});

describe("an index answer on the wire", () => {
  it("is written from its string (Content-Length as the adapter spells it for one), with the RateLimit headers", async () => {
    // A route's answer rebuilt after it was made (c.header on a finalized response) is a web stream the adapter
    // reads back, and then writes `content-length` in lower case: that rebuild was most of an answer's CPU.
    const owner = getAddress(served.index.events[0]!.account);
    const tokenId = served.index.events.find((e) => e.tokenId > 0n)!.tokenId;
    for (const path of [
      `/accounts/${owner}/events?limit=100`,
      `/accounts/${owner}/locks`,
      "/leaderboards/ve?limit=100",
      `/leaderboards/ve/${owner}`,
      // The duration boards share the ve board's patterns (api/index/router.ts): both served through the process.
      "/leaderboards/takeovers?window=7d",
      `/leaderboards/takeovers/${owner}?window=7d`,
      `/locks/${tokenId}`,
      "/stats",
      "/accounts/0xnope/locks",
    ]) {
      const res = await sendRaw(url(path));
      expect(res.status, path).toBe(path.includes("0xnope") ? 400 : 200);
      const names = res.rawHeaders.filter((_, i) => i % 2 === 0);
      expect(names, path).toContain("Content-Length");
      expect(names, path).not.toContain("content-length");
      expect(Number(res.headers["content-length"]), path).toBe(Buffer.byteLength(res.body));
      expect(res.headers.ratelimit, path).toMatch(/^"index";r=\d+;t=\d+$/);
      expect(res.headers["ratelimit-policy"], path).toMatch(/^"index";q=\d+;w=\d+$/);
      // The edge's headers (the index routes write them with their own, in one plain object), each once.
      expect(res.headers["access-control-allow-origin"], path).toBe("*");
      expect(res.headers["access-control-expose-headers"], path).toBe("*");
      expect(res.headers["x-request-id"], path).toMatch(/.+/);
      const lower = names.map((n) => n.toLowerCase());
      expect(new Set(lower).size, `${path}: ${lower.join(" ")}`).toBe(lower.length);
      if (res.status === 200) {
        expect(res.headers["content-type"], path).toBe("application/json");
        expect(res.headers.etag, path).toMatch(/^W\/"\d+-\d+-[\w-]{16}"$/);
      }
    }
  });
});

describe("a client that hangs up while its index route's statement waits", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  async function metric(series: string): Promise<number> {
    const text = await (await fetch(`${served.api.url}/api/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : 0;
  }

  it("the statement is cancelled within 250 ms of the hang-up, for each route that reads rows", async () => {
    const owner = getAddress(served.index.events[0]!.account);
    const tokenId = served.index.events.find((e) => e.tokenId > 0n)!.tokenId;
    const probe = new pg.Client({ connectionString: served.databaseUrl });
    await probe.connect();
    // The API's statements waiting on the held table (the holder's own session is idle in its transaction).
    const waiting = async () =>
      (
        await probe.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%lock_event%'`,
        )
      ).rows[0].n as number;
    const holder = new pg.Client({ connectionString: served.databaseUrl });
    await holder.connect();
    try {
      await holder.query(`BEGIN; LOCK TABLE ${served.schema}.lock_event IN ACCESS EXCLUSIVE MODE`);
      for (const path of [`/locks/${tokenId}`, `/accounts/${owner}/locks`, `/accounts/${owner}/events?limit=5`]) {
        const before = await metric('api_aborted_work_total{kind="db"}');
        const controller = new AbortController();
        const answered = fetch(url(path), { signal: controller.signal }).then(
          () => "answered",
          () => "aborted",
        );
        const seenBy = performance.now() + 1_500;
        while ((await waiting()) === 0) {
          if (performance.now() > seenBy) throw new Error(`${path}: its statement never waited on the held table`);
          await sleep(10);
        }
        const hungUp = performance.now();
        controller.abort();
        expect(await answered, path).toBe("aborted");
        // The API cancels the statement (destroys its connection, counted) at once; the backend then stops within
        // Postgres's client_connection_check_interval.
        while ((await metric('api_aborted_work_total{kind="db"}')) === before && performance.now() - hungUp < 1_500)
          await sleep(5);
        const cancelled = performance.now() - hungUp;
        while ((await waiting()) > 0 && performance.now() - hungUp < 1_500) await sleep(5);
        const gone = performance.now() - hungUp;
        console.log(
          `${path}: hang-up → statement cancelled ${Math.round(cancelled)} ms, its backend gone ${Math.round(gone)} ms (statement timeout 2000 ms)`,
        );
        expect(await metric('api_aborted_work_total{kind="db"}'), path).toBe(before + 1);
        expect(cancelled, path).toBeLessThan(250);
        expect(await waiting(), path).toBe(0);
        expect(gone, path).toBeLessThan(250 + CLIENT_CONNECTION_CHECK_MS);
      }
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
      await probe.end();
    }
  });
});
