/**
 * "At least block N" through the processes operators run (issue 32 item 1; issue 31 item 5): `ponder start` on
 * Postgres indexing a seeded devnet (anvil) with its views schema, and the API process (dist/server/main.js) reading
 * it. anvil mines only when told (a transaction, or evm_mine here), so "one block ahead" is exactly one block the
 * chain does not have yet, until the test mines it.
 * - REST: `minBlock` at or below the index's head answers at a block ≥ N; one block ahead with `waitMs` answers once
 *   the block is mined and indexed (not at the end of the wait); without `waitMs` 409 INDEX_BEHIND with the index's
 *   head, `retryAfterSec` and Retry-After; far beyond the chain's head 400; `block` below `minBlock` 400;
 * - every answer carries `indexLagSeconds` and `stale`, and its ETag names the block alone (a 304 stays right);
 * - GraphQL `block: { number_gte }` on `_meta` and a root field, the same rules;
 * - the state route (one eth_call at a block) never below N: it waits for the node;
 * - an MCP read tool through a real MCP client (Streamable HTTP), with minBlock and waitMs as arguments.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIN_BLOCK_AHEAD } from "../../api/read/atLeast";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type SeededChain, startSeededChain } from "../support/indexChain";
import { headBlock } from "../support/lockChain";
import { createTestDatabase, type TestDatabase } from "../support/ponder";
import { sendRaw } from "../support/rawHttp";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const ENV = { REDIS_URL: "", LOG_LEVEL: "warn", RATE_LIMIT_MAX: "1000000" };
const BASE = "/api/index/v1";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let chain: SeededChain;
let database: TestDatabase;
const children: ServiceChild[] = [];
let api: ServiceChild;
let chainId: number;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(path: string): Promise<{ status: number; body: Json; headers: Headers; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${api.url}${path}`);
  return {
    status: res.status,
    body: (await res.json()) as Json,
    headers: res.headers,
    ms: performance.now() - started,
  };
}

async function gql(query: string): Promise<Json> {
  const res = await fetch(`${api.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as Json;
}

async function mine(): Promise<bigint> {
  await fetch(chain.devnet.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_mine", params: [] }),
  });
  return headBlock(chain.devnet);
}

/** Until the index answers at the chain's head (its data, not /ready). */
async function indexedHead(timeoutMs = 60_000): Promise<bigint> {
  const head = await headBlock(chain.devnet);
  const by = performance.now() + timeoutMs;
  for (;;) {
    const r = await get(`${BASE}/stats`);
    if (r.status === 200 && BigInt(r.body.blockNumber) >= head) return BigInt(r.body.blockNumber);
    if (performance.now() > by) throw new Error(`the index never reached block ${head}: ${JSON.stringify(r.body)}`);
    await sleep(100);
  }
}

beforeAll(async () => {
  chain = await startSeededChain();
  chainId = chain.devnet.deployment.manifest.chainId;
  database = await createTestDatabase(PG_URL);
  const common = {
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    databaseUrl: (database.forPonder("asset_v1") as { url: string }).url,
    schema: "asset_v1",
    viewsSchema: "asset",
  };
  children.push(await spawnService({ ...common, command: "start", env: { ...ENV, INDEXER_POLLING_MS: "200" } }));
  api = await spawnService({ ...common, command: "api", env: ENV });
  children.push(api);
  await api.waitFor200("/health", 30_000);
  await indexedHead(120_000);
}, 180_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await database?.drop();
  await chain?.stop();
});

const owner = getAddress(DEVNET_ACCOUNTS.alice.address);

describe("minBlock on the index routes (the API process over ponder start)", () => {
  it("at or below the index's head: answered at a block ≥ minBlock, with indexLagSeconds and stale", async () => {
    const head = await indexedHead();
    for (const [path, min] of [
      [`${BASE}/stats?minBlock=${head}`, head],
      [`${BASE}/stats?minBlock=${head - 3n}`, head - 3n],
      [`${BASE}/leaderboards/ve?minBlock=${head}&limit=5`, head],
      [`${BASE}/accounts/${owner}/locks?minBlock=${head}`, head],
      [`${BASE}/accounts/${owner}/events?minBlock=${head}&limit=5`, head],
      [`${BASE}/locks/1?minBlock=${head}&block=${head}`, head],
    ] as const) {
      const r = await get(path);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(200);
      expect(BigInt(r.body.blockNumber), path).toBeGreaterThanOrEqual(min);
      expect(Number.isInteger(r.body.indexLagSeconds) && r.body.indexLagSeconds >= 0, path).toBe(true);
      expect(typeof r.body.stale, path).toBe("boolean");
    }
  });

  it("the ETag names the block and the body, not the lag: the head's answer revalidates to 304 while the lag is computed fresh", async () => {
    const first = await sendRaw(`${api.url}${BASE}/stats`);
    const etag = first.headers.etag as string;
    // The chain, the block and a digest (of the Ponder build id `ponder start` wrote in _ponder_meta, and the body).
    expect(etag).toMatch(new RegExp(`^W/"${chainId}-\\d+-[\\w-]{16}"$`));
    await sleep(1_100);
    const again = await sendRaw(`${api.url}${BASE}/stats`, "GET", { "if-none-match": etag });
    expect(again.status).toBe(304);
    const body = JSON.parse((await sendRaw(`${api.url}${BASE}/stats`)).body);
    expect(etag.startsWith(`W/"${chainId}-${body.blockNumber}-`)).toBe(true);
  });

  it("one block ahead, no waitMs: 409 INDEX_BEHIND with the index's head, retryAfterSec and Retry-After", async () => {
    const head = await indexedHead();
    const r = await get(`${BASE}/stats?minBlock=${head + 1n}`);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      ok: false,
      error: "INDEX_BEHIND",
      retryAfterSec: 2,
      detail: { minBlock: String(head + 1n), head: String(head), of: "index" },
    });
    expect(r.headers.get("retry-after")).toBe("2");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("one block ahead with waitMs: answered once the block is mined and indexed, not at the end of the wait", async () => {
    const head = await indexedHead();
    const pending = get(`${BASE}/accounts/${owner}/locks?minBlock=${head + 1n}&waitMs=9000`);
    await sleep(400);
    const mined = await mine();
    expect(mined).toBe(head + 1n);
    const r = await pending;
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(BigInt(r.body.blockNumber)).toBeGreaterThanOrEqual(head + 1n);
    console.log(`minBlock = head + 1, waitMs 9000: answered after ${Math.round(r.ms)} ms (mined at ~400 ms)`);
    expect(r.ms).toBeLessThan(7_000);
  });

  it("the wait runs out: 409 after about waitMs, with the head the index is at", async () => {
    const head = await indexedHead();
    const r = await get(`${BASE}/leaderboards/ve?minBlock=${head + 2n}&waitMs=600`);
    expect(r.status).toBe(409);
    expect(r.body.detail).toMatchObject({ head: String(head), waitedMs: 600 });
    expect(r.body.retryAfterSec).toBe(4);
    expect(r.ms).toBeGreaterThanOrEqual(550);
  });

  it("beyond the chain's head by more than 5 blocks: 400 naming the chain's head; bad combinations: 400", async () => {
    const head = await headBlock(chain.devnet);
    const far = await get(`${BASE}/stats?minBlock=${head + MIN_BLOCK_AHEAD + 1n}&waitMs=5000`);
    expect(far.status).toBe(400);
    expect(far.body.detail).toMatchObject({ param: "minBlock", chainHead: String(head), maxAhead: 5 });
    expect(far.ms).toBeLessThan(2_000);
    for (const [path, param] of [
      [`${BASE}/stats?minBlock=${head}&block=${head - 1n}`, "block"],
      [`${BASE}/stats?waitMs=100`, "waitMs"],
      [`${BASE}/stats?minBlock=${head}&waitMs=10001`, "waitMs"],
      [`${BASE}/stats?minBlock=-1`, "minBlock"],
      [`${BASE}/stats?minBlock=${head}&minBlock=${head}`, "minBlock"],
    ] as const) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body, path).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param } });
    }
  });
});

/** The sum of a metric's series whose line matches `filter` (all of them without one). */
async function metricSum(name: string, filter: RegExp = /./): Promise<number> {
  const text = await (await fetch(`${api.url}/api/metrics`)).text();
  return text
    .split("\n")
    .filter((l) => l.startsWith(name) && filter.test(l))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

describe("waiting costs no database work per waiter, and a hang-up ends the wait", () => {
  it("20 requests waiting 1.5 s: no statement of their own (the head's news says they wait), the watermark's polls as without them", async () => {
    const head = await indexedHead();
    const statements = () => metricSum("api_index_db_query_duration_seconds_count", /statement="index_(?!mark)/);
    const marks = () => metricSum("api_index_db_query_duration_seconds_count", /statement="index_mark"/);
    const timeouts = () => metricSum("api_min_block_waits_total", /of="index",outcome="timeout"/);
    // A head committed meanwhile is computed ahead of its readers (the stats were read at the head above): a probe
    // and a computation per answer, once for the process, not per waiter.
    const ahead = () => metricSum("api_index_computed_ahead_total");
    const [s0, m0, t0, a0] = [await statements(), await marks(), await timeouts(), await ahead()];
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => get(`${BASE}/stats?minBlock=${head + 1n}&waitMs=1500`)),
    );
    const elapsed = performance.now() - started;
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(409));
    const [s1, m1, t1, a1] = [await statements(), await marks(), await timeouts(), await ahead()];
    console.log(
      `20 waiters for ${Math.round(elapsed)} ms: ${s1 - s0} index statements, ${m1 - m0} watermark polls (every 250 ms)`,
    );
    expect(t1 - t0).toBe(20);
    // The index's head as news has it (the read above) is below minBlock: each waits before reading anything, and a
    // wait that runs out reads nothing either (each read before its wait, once: 20 statements on 6b19d00). Only the
    // process's own, whoever waits: the compute-ahead's (a probe of the head and a
    // computation per answer) and the index signal's reads of the head — one a second while its LISTEN connection is
    // not up yet (api/read/indexSignal.ts backs off reconnecting while Ponder's views schema comes up) and one on
    // each connect (a trace of the probes' callers showed 2 + 1 of them in 1.5 s; the bound once left them out and
    // CI failed on 21 ≤ 20). A cost per waiter would be 20 or more.
    expect(s1 - s0).toBeLessThanOrEqual(2 * (a1 - a0) + Math.ceil(elapsed / 1_000) + 2);
    // The watermark polls every 250 ms whoever waits: about elapsed / 250, not 20 times that.
    expect(m1 - m0).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 3);
  });

  it("a client that hangs up while its request waits: the wait ends at once (counted cancelled)", async () => {
    const head = await indexedHead();
    const cancelled = () => metricSum("api_min_block_waits_total", /of="index",outcome="cancelled"/);
    const before = await cancelled();
    const controller = new AbortController();
    const answered = fetch(`${api.url}${BASE}/stats?minBlock=${head + 1n}&waitMs=9000`, {
      signal: controller.signal,
    }).catch(() => "aborted");
    await sleep(300);
    const hungUp = performance.now();
    controller.abort();
    expect(await answered).toBe("aborted");
    while ((await cancelled()) === before && performance.now() - hungUp < 3_000) await sleep(20);
    const ms = performance.now() - hungUp;
    console.log(`hang-up → wait cancelled in ${Math.round(ms)} ms (waitMs 9000)`);
    expect(await cancelled()).toBe(before + 1);
    expect(ms).toBeLessThan(1_000);
  });
});

describe("GraphQL block: { number_gte }", () => {
  it("_meta and a root field at ≥ N; waits with waitMs; INDEX_BEHIND without; BAD_USER_INPUT far beyond", async () => {
    const head = await indexedHead();
    const at = await gql(
      `{ _meta(block: { number_gte: "${head}" }) { block head indexLagSeconds stale } locks(where: { owner: "${owner}" }, block: { number_gte: ${head} }) { items { tokenId } } }`,
    );
    expect(at.errors).toBeUndefined();
    expect(BigInt(at.data._meta.block)).toBeGreaterThanOrEqual(head);
    expect(at.data._meta.indexLagSeconds).toBeGreaterThanOrEqual(0);
    expect(at.data._meta.stale).toBe(false);

    const behind = await gql(`{ _meta(block: { number_gte: "${head + 1n}" }) { block } }`);
    expect(behind.errors?.[0]?.extensions).toMatchObject({
      code: "INDEX_BEHIND",
      head: String(head),
      minBlock: String(head + 1n),
      retryAfterSec: 2,
    });

    const far = await gql(`{ _meta(block: { number_gte: "${head + 50n}", waitMs: 3000 }) { block } }`);
    expect(far.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "minBlock" });

    const bad = await gql(`{ _meta(block: { number_gte: "${head}", waitMs: 20000 }) { block } }`);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: "BAD_USER_INPUT", param: "block" });

    const waiting = gql(
      `{ _meta(block: { number_gte: "${head + 1n}", waitMs: 8000 }) { block head } lock(tokenId: "1", block: { number_gte: ${head + 1n} }) { tokenId } }`,
    );
    await sleep(400);
    await mine();
    const waited = await waiting;
    expect(waited.errors, JSON.stringify(waited.errors)).toBeUndefined();
    expect(BigInt(waited.data._meta.block)).toBeGreaterThanOrEqual(head + 1n);
  });
});

describe("a wait longer than the request's own deadline", () => {
  it("GraphQL's 2 s execution limit is extended by waitMs: mined at 2.8 s, answered, not EXECUTION_TIMEOUT", async () => {
    const head = await indexedHead();
    const shared = () => metricSum("api_graphql_answers_total", /made="shared"/);
    const before = await shared();
    const started = performance.now();
    // Two identical requests: the second shares the first's execution, and waits as long as it does.
    const query = `{ _meta(block: { number_gte: "${head + 1n}", waitMs: 6000 }) { block } }`;
    const waiting = [gql(query), sleep(50).then(() => gql(query))];
    await sleep(2_800);
    await mine();
    const waited = await Promise.all(waiting);
    const ms = performance.now() - started;
    for (const w of waited) {
      expect(w.errors, JSON.stringify(w.errors)).toBeUndefined();
      expect(BigInt(w.data._meta.block)).toBe(head + 1n);
    }
    expect(ms).toBeGreaterThan(2_800);
    expect(await shared()).toBe(before + 1);
  });
});

describe("the state route never answers below minBlock", () => {
  it("waits for the node with waitMs; 409 of the node without; 400 far beyond", async () => {
    const head = await headBlock(chain.devnet);
    const now = await get(`/api/mcp/v1/state/${owner}?minBlock=${head}`);
    expect(now.status, JSON.stringify(now.body)).toBe(200);
    expect(BigInt(now.body.blockNumber)).toBeGreaterThanOrEqual(head);

    const behind = await get(`/api/mcp/v1/state/${owner}?minBlock=${head + 1n}`);
    expect(behind.status).toBe(409);
    expect(behind.body).toMatchObject({ error: "INDEX_BEHIND", detail: { of: "node", head: String(head) } });
    expect(behind.headers.get("retry-after")).toBe("2");

    const far = await get(`/api/mcp/v1/state/${owner}?minBlock=${head + 6n}&waitMs=1000`);
    expect(far.status).toBe(400);
    expect(far.body.detail).toMatchObject({ param: "minBlock", chainHead: String(head) });

    const pending = get(`/api/mcp/v1/state/${owner}?minBlock=${head + 1n}&waitMs=8000`);
    await sleep(400);
    await mine();
    const waited = await pending;
    expect(waited.status, JSON.stringify(waited.body)).toBe(200);
    expect(BigInt(waited.body.blockNumber)).toBeGreaterThanOrEqual(head + 1n);
    expect(waited.ms).toBeLessThan(6_000);
  });
});

describe("an MCP read tool through a real MCP client", () => {
  it("get_lock_stats with minBlock and waitMs answers at ≥ minBlock once the block is mined; INDEX_BEHIND as an error", async () => {
    const client = new Client({ name: "min-block-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp`)));
    try {
      const tools = await client.listTools();
      const stats = tools.tools.find((t) => t.name === "get_lock_stats");
      expect(Object.keys(stats?.inputSchema.properties ?? {})).toEqual(["block", "minBlock", "waitMs"]);
      const state = tools.tools.find((t) => t.name === "get_state");
      expect(Object.keys(state?.inputSchema.properties ?? {})).toEqual(["address", "minBlock", "waitMs"]);

      const head = await indexedHead();
      const behind = await client.callTool({ name: "get_lock_stats", arguments: { minBlock: String(head + 1n) } });
      expect(behind.isError).toBe(true);
      expect(JSON.stringify(behind.content)).toContain("INDEX_BEHIND");

      const pending = client.callTool({
        name: "get_lock_stats",
        arguments: { minBlock: String(head + 1n), waitMs: 8000 },
      });
      await sleep(400);
      await mine();
      const answered = await pending;
      expect(answered.isError, JSON.stringify(answered.content)).toBeFalsy();
      const body = answered.structuredContent as Json;
      expect(BigInt(body.blockNumber)).toBeGreaterThanOrEqual(head + 1n);
      expect(body.indexLagSeconds).toBeGreaterThanOrEqual(0);
    } finally {
      await client.close();
    }
  });
});
