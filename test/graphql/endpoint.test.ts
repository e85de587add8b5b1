/**
 * /graphql in the production topology: the seeded devnet, ONE indexer (`ponder start --schema gq_v1
 * --views-schema gq`) on a fresh Postgres database, and the app reading the views schema through the API
 * process's own index database (api/server/indexDatabase.ts: GraphQL's pool), requests through app.request.
 * Answers are checked against the seed's own record of the chain and the index's tables read with plain SQL;
 * every limit is driven past its bound and must refuse with its code, never a 5xx or a hang.
 */
import { getIntrospectionQuery } from "graphql";
import { Hono } from "hono";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphqlEndpoint } from "../../api/graphql/endpoint";
import { GRAPHQL_LIMITS, type GraphqlLimits } from "../../api/graphql/limits";
import { graphqlIndexOnPool } from "../../api/graphql/source";
import { createLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createRateLimiter } from "../../api/ratelimit/createRateLimiter";
import { type IndexDatabase, openIndexDatabase } from "../../api/server/indexDatabase";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { createTestDatabase, type IndexDb, openIndexDb, type TestDatabase, writeManifest } from "../support/ponder";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const capped = DEVNET_ACCOUNTS.capped.address;
const LOCK_FIELDS = "tokenId owner amount lockEnd autoMax burned createdBlock";
const GRAPHQL_RESPONSE = "application/graphql-response+json";

let d: ReadsDevnet;
let database: TestDatabase;
let databaseUrl: string;
let indexer: ServiceChild;
let index: IndexDatabase;
let sql: IndexDb;
let app: ReturnType<ReadsDevnet["app"]>;

// biome-ignore lint/suspicious/noExplicitAny: tests assert on the parsed JSON shape themselves
type Answer = { status: number; body: any; headers: Headers; text: string };
type Requester = { request: (path: string, init?: RequestInit) => Response | Promise<Response> };

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), headers: res.headers, text };
}

/** A POST as current GraphQL clients send it: they accept application/graphql-response+json. */
function post(body: unknown, over: { app?: Requester; headers?: Record<string, string> } = {}): Promise<Answer> {
  return Promise.resolve(
    (over.app ?? app).request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", accept: GRAPHQL_RESPONSE, ...over.headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  ).then(answerOf);
}

const query = (q: string, variables?: Record<string, unknown>, on?: Requester) =>
  post({ query: q, variables }, { app: on });

/** The GraphQL errors' codes and messages, for one-line assertions. */
const errorsOf = (a: Answer) =>
  (a.body.errors as { message: string; extensions?: { code?: string } }[]).map((e) => [e.extensions?.code, e.message]);

/** The endpoint alone with tightened limits (the app mounts it with GRAPHQL_LIMITS). */
function endpointWith(limits: Partial<GraphqlLimits>, graphql = index.graphql): Requester {
  const logger = createLogger({ level: "error" });
  const metrics = createMetrics();
  const config = { ...d.config, rateLimit: { max: 1_000, windowSec: 60 } };
  const rateLimit = {
    limiter: createRateLimiter({ config, logger, metrics }),
    policy: config.rateLimit,
    clientIp: () => "192.0.2.1",
    metrics,
  };
  return new Hono().all("/graphql", graphqlEndpoint({ index: graphql, rateLimit, logger, limits }));
}

/**
 * Holds an ACCESS EXCLUSIVE lock on the indexer's `lock` table while `during` runs: every read of it (the views
 * schema's `lock` is a view of it) waits — a query slower than any limit, made by Postgres itself.
 */
async function withLockTableHeld<T>(during: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query('LOCK TABLE "gq_v1"."lock" IN ACCESS EXCLUSIVE MODE');
    return await during();
  } finally {
    await holder.query("ROLLBACK");
    await holder.end();
  }
}

beforeAll(async () => {
  d = await startReadsDevnet();
  // Past Ponder's finality depth (30 blocks on chains it has no figure for), so /ready means all indexed.
  await d.chain.testClient.mine({ blocks: 32 });
  database = await createTestDatabase(PG_URL);
  databaseUrl = (database.forPonder("gq_v1") as { url: string }).url;
  indexer = await spawnService({
    command: "start",
    rpcUrl: d.anvil.rpcUrl,
    manifestFile: writeManifest(d.deployment.manifest),
    databaseUrl,
    schema: "gq_v1",
    viewsSchema: "gq",
  });
  await indexer.waitFor200("/ready", 120_000);
  index = openIndexDatabase({ url: databaseUrl, schema: "gq" });
  const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
  for (let i = 0; i < 300 && ((await index.store.indexMark()).indexedBlock ?? 0n) < head; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect((await index.store.indexMark()).indexedBlock).toBe(head);
  sql = await openIndexDb({ kind: "postgres", url: databaseUrl, schema: "gq" });
  app = d.app({ graphql: index.graphql, locks: index.store });
}, 240_000);

afterAll(async () => {
  await sql?.close();
  await index?.close();
  await indexer?.stop();
  await database?.drop();
  await d?.stop();
});

describe("reads: Ponder's schema of the lock tables", () => {
  it("an owner's locks in cursor pages: each page continues the last, none overlap, together exactly the chain's 32", async () => {
    const pageQuery = `query Page($owner: String!, $after: String) {
      locks(where: { owner: $owner, burned: false }, orderBy: "tokenId", orderDirection: "desc", limit: 10, after: $after) {
        items { ${LOCK_FIELDS} } pageInfo { hasNextPage endCursor } totalCount
      }
    }`;
    const pages: string[][] = [];
    let after: string | null = null;
    for (;;) {
      const a = await query(pageQuery, { owner: capped, after });
      expect([a.status, a.body.errors]).toEqual([200, undefined]);
      const page = a.body.data.locks;
      expect(page.totalCount).toBe(32);
      pages.push(page.items.map((l: { tokenId: string }) => l.tokenId));
      for (const l of page.items) expect(l).toMatchObject({ owner: capped.toLowerCase(), burned: false });
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages.map((p) => p.length)).toEqual([10, 10, 10, 2]);
    const all = pages.flat();
    expect(new Set(all).size).toBe(32);
    // Descending token id across page boundaries: page 2 starts right after page 1's last row.
    const expected = [...d.seed.tokenIds.capped].sort((a, b) => (a < b ? 1 : -1)).map(String);
    expect(all).toEqual(expected);
  });

  it("ordering by a non-unique column pages stably (Ponder adds the primary key to the order)", async () => {
    const q = `query Page($after: String) {
      locks(where: { owner: "${capped}" }, orderBy: "lockEnd", orderDirection: "asc", limit: 7, after: $after) {
        items { tokenId lockEnd } pageInfo { hasNextPage endCursor }
      }
    }`;
    const seen: { tokenId: string; lockEnd: string }[] = [];
    let after: string | null = null;
    do {
      const a = await query(q, { after });
      seen.push(...a.body.data.locks.items);
      after = a.body.data.locks.pageInfo.hasNextPage ? a.body.data.locks.pageInfo.endCursor : null;
    } while (after);
    const rows = await sql.query<{ token_id: string; lock_end: string }>(
      `SELECT token_id::text, lock_end::text FROM ${sql.table("lock")} WHERE owner = $1 ORDER BY lock_end, token_id`,
      [capped.toLowerCase()],
    );
    expect(seen).toEqual(rows.map((r) => ({ tokenId: r.token_id, lockEnd: r.lock_end })));
  });

  it("a lock's events by tokenId, oldest first, equal the index's rows; a lock by its id; an unknown id is null", async () => {
    const id = d.seed.tokenIds.alicePlain;
    const a = await query(`{
      lockEvents(where: { tokenId: "${id}" }, orderBy: "blockNumber", orderDirection: "asc") {
        items { kind tokenId account amount lockEnd blockNumber logIndex txHash } totalCount
      }
      lock(tokenId: "${id}") { tokenId owner amount }
      missing: lock(tokenId: "999999") { tokenId }
    }`);
    expect(a.body.errors).toBeUndefined();
    const rows = await sql.query<{ kind: string; block_number: string; log_index: number; tx_hash: string }>(
      `SELECT kind, block_number::text, log_index, tx_hash FROM ${sql.table("lock_event")}
       WHERE token_id = $1 ORDER BY block_number, id`,
      [String(id)],
    );
    expect(rows.length).toBeGreaterThan(2); // created, topped up, extended
    expect(a.body.data.lockEvents.totalCount).toBe(rows.length);
    expect(
      a.body.data.lockEvents.items.map((e: { kind: string; blockNumber: string; logIndex: number; txHash: string }) => [
        e.kind,
        e.blockNumber,
        e.logIndex,
        e.txHash,
      ]),
    ).toEqual(rows.map((r) => [r.kind, r.block_number, r.log_index, r.tx_hash]));
    expect(a.body.data.lockEvents.items[0].kind).toBe(rows[0]!.kind);
    expect(a.body.data.lock).toMatchObject({ tokenId: String(id), owner: DEVNET_ACCOUNTS.alice.address.toLowerCase() });
    expect(a.body.data.missing).toBeNull();
  });

  it("_meta: the indexed block is the index's checkpoint (and the chain's head here)", async () => {
    const a = await query("{ _meta { status } }");
    const status = a.body.data._meta.status;
    expect(Object.keys(status)).toHaveLength(1);
    const chain = Object.values(status)[0] as { id: number; block: { number: number; timestamp: number } };
    expect(chain.id).toBe(d.deployment.chainId);
    const mark = await index.store.indexMark();
    expect(BigInt(chain.block.number)).toBe(mark.indexedBlock);
    const head = await d.chain.publicClient.getBlock({ blockTag: "latest" });
    expect([BigInt(chain.block.number), BigInt(chain.block.timestamp)]).toEqual([head.number, head.timestamp]);
  });

  it("GET with ?query= answers the same as POST; CORS and the request id on the answer", async () => {
    const q = `{ locks(where: { owner: "${capped}" }, limit: 3) { items { tokenId } } }`;
    const viaGet = await answerOf(await app.request(`/graphql?query=${encodeURIComponent(q)}`));
    const viaPost = await query(q);
    expect(viaGet.status).toBe(200);
    expect(viaGet.body).toEqual(viaPost.body);
    expect(viaGet.body.data.locks.items).toHaveLength(3);
    expect(viaGet.headers.get("access-control-allow-origin")).toBe("*");
    expect(viaGet.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(viaGet.headers.get("content-type")).toMatch(/^application\/(graphql-response\+)?json/);
    expect(viaGet.headers.get("cache-control")).toBe("no-store");
  });

  it("the standard introspection query is answered (public data), well within the answer limit", async () => {
    const a = await query(getIntrospectionQuery());
    expect(a.status).toBe(200);
    const types = a.body.data.__schema.types.map((t: { name: string }) => t.name);
    expect(types).toEqual(
      expect.arrayContaining(["lock", "lockPage", "lockEvent", "lockEventPage", "PageInfo", "Meta"]),
    );
    expect(a.body.data.__schema.mutationType).toBeNull();
    expect(Buffer.byteLength(a.text)).toBeLessThan(GRAPHQL_LIMITS.maxResponseBytes / 2);
  });
});

describe("what GraphQL refuses, in GraphQL's format with a code", () => {
  it("mutations and subscriptions are refused before anything runs", async () => {
    for (const [kind, op] of [
      ["mutation", 'mutation { lock(tokenId: "1") { tokenId } }'],
      ["subscription", "subscription { _meta { status } }"],
    ]) {
      const a = await query(op!);
      expect([a.status, a.body.data]).toEqual([400, undefined]);
      expect(errorsOf(a)[0]).toEqual([
        "OPERATION_NOT_SUPPORTED",
        `Only queries are served; this ${kind} is refused (the index is read-only and pushes nothing).`,
      ]);
    }
    // Over GET, yoga refuses it first, by the GraphQL-over-HTTP rule (no mutation over GET).
    const viaGet = await answerOf(await app.request(`/graphql?query=${encodeURIComponent("mutation { x }")}`));
    expect([viaGet.status, viaGet.headers.get("allow"), ...errorsOf(viaGet)]).toEqual([
      405,
      "POST",
      ["BAD_REQUEST", "Can only perform a mutation operation from a POST request."],
    ]);
  });

  it("the legacy media type: a client that takes only application/json gets a refusal with 200, as yoga answers it", async () => {
    for (const q of ["{ nope }", "{ locks(limit: 1001) { totalCount } }"]) {
      const modern = await query(q);
      const legacy = await post({ query: q }, { headers: { accept: "application/json" } });
      expect([modern.status, legacy.status]).toEqual([400, 200]);
      expect(legacy.body).toEqual(modern.body);
      expect(legacy.headers.get("content-type")).toMatch(/^application\/json/);
      expect(modern.headers.get("content-type")).toMatch(/^application\/graphql-response\+json/);
    }
  });

  it("depth: data fields beyond 8 (here through __type, which counts), introspection beyond 15", async () => {
    const nine = `{ __type(name: "lock") { fields { type { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } }`;
    const a = await query(nine);
    expect([a.status, ...errorsOf(a)]).toEqual([400, ["MAX_DEPTH", "Query depth limit of 8 exceeded, found 9."]]);
    const nest = (n: number): string => (n === 0 ? "name" : `ofType { ${nest(n - 1)} }`);
    const sixteen = `{ __schema { types { fields { type { ${nest(11)} } } } } }`;
    const b = await query(sixteen);
    expect([b.status, ...errorsOf(b)]).toEqual([400, ["MAX_DEPTH", "Query depth limit of 15 exceeded, found 16."]]);
  });

  it("aliases: 31 refused, 30 served", async () => {
    const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: _meta { status }`).join(" ")} }`;
    const a = await query(aliased(31));
    expect([a.status, ...errorsOf(a)]).toEqual([400, ["MAX_ALIASES", "Aliases limit of 30 exceeded, found 31."]]);
    expect((await query(aliased(30))).status).toBe(200);
  });

  it("tokens: a document over 1,000 tokens is refused before it is parsed further", async () => {
    const long = `{ ${Array.from({ length: 1_100 }, () => "__typename").join(" ")} _meta { status } }`;
    const a = await query(long);
    expect([a.status, ...errorsOf(a)]).toEqual([400, ["MAX_TOKENS", "Token limit of 1000 exceeded."]]);
  });

  it("a list's limit over 1,000 (inline or in a variable), a negative one, an offset over 10,000", async () => {
    const inline = await query("{ locks(limit: 1001) { items { tokenId } } }");
    expect([inline.status, ...errorsOf(inline)]).toEqual([
      400,
      ["BAD_PAGE", "locks: limit must be between 0 and 1000; got 1001."],
    ]);
    const variable = await query("query($n: Int) { page: lockEvents(limit: $n) { items { id } } }", { n: 5000 });
    expect(errorsOf(variable)).toEqual([["BAD_PAGE", "page: limit must be between 0 and 1000; got 5000."]]);
    const negative = await query("{ locks(limit: -1) { items { tokenId } } }");
    expect(errorsOf(negative)[0]![0]).toBe("BAD_PAGE");
    const offset = await query("{ locks(offset: 10001) { items { tokenId } } }");
    expect(errorsOf(offset)[0]).toEqual([
      "BAD_PAGE",
      "locks: offset must be between 0 and 10000; got 10001. Page with the after cursor instead.",
    ]);
  });

  it("rows: lists asking for more than 2,000 rows together (default 50 each counted)", async () => {
    const fine = await query("{ a: locks(limit: 1000) { totalCount } b: lockEvents(limit: 1000) { totalCount } }");
    expect([fine.status, fine.body.errors]).toEqual([200, undefined]);
    const over = await query(
      "{ a: locks(limit: 1000) { totalCount } b: lockEvents(limit: 1000) { totalCount } c: locks { totalCount } }",
    );
    expect(over.status).toBe(400);
    expect(errorsOf(over)).toEqual([
      [
        "MAX_ROWS",
        "The lists of this request ask for more than 2000 rows together (the sum of their limits, 50 when none is given); ask for fewer or page with the after cursor.",
      ],
    ]);
    expect(over.body.data).toBeUndefined();
    // Through fragments too: the same field spread twice counts twice.
    const spread = await query(
      "{ ...F x: lockEvents(limit: 1000) { totalCount } } fragment F on Query { y: lockEvents(limit: 1000) { totalCount } z: locks(limit: 1) { totalCount } }",
    );
    expect(errorsOf(spread)[0]![0]).toBe("MAX_ROWS");
  });

  it("arguments Ponder refuses, a forged cursor, a malformed BigInt: the client's error in words, no internals", async () => {
    const order = await query(`{ locks(orderBy: "nope") { items { tokenId } } }`);
    expect([order.status, ...errorsOf(order)]).toEqual([
      200,
      ["BAD_USER_INPUT", 'Unknown column "nope" used in orderBy argument'],
    ]);
    const both = await query(`{ locks(after: "x", before: "y") { items { tokenId } } }`);
    expect(errorsOf(both)).toEqual([["BAD_USER_INPUT", "Cannot specify both before and after cursors."]]);
    for (const cursor of ["not-a-cursor", Buffer.from('{"json":{"tokenId":"abc"}}').toString("base64")]) {
      const forged = await query(`{ locks(after: "${cursor}") { items { tokenId } } }`);
      expect(forged.status).toBe(200);
      expect(errorsOf(forged)[0]![0]).toBe("BAD_USER_INPUT");
      expect(forged.text).not.toMatch(/select|from "|gq\.|pg|node_modules|at /i);
    }
    const bigint = await query(`{ locks(where: { tokenId: "1.5" }) { items { tokenId } } }`);
    expect(bigint.status).toBe(400);
    expect(bigint.text).not.toMatch(/node_modules|at [A-Za-z]+ \(/);
  });

  it("an answer over the size limit is replaced by RESPONSE_TOO_LARGE", async () => {
    const small = endpointWith({ maxResponseBytes: 2_000 });
    const a = await query(`{ locks(limit: 100) { items { ${LOCK_FIELDS} } } }`, undefined, small);
    expect([a.status, ...errorsOf(a)]).toEqual([
      200,
      ["RESPONSE_TOO_LARGE", "The answer exceeds 2000 bytes; ask for fewer rows or fields."],
    ]);
    expect(a.body.data).toBeNull();
    const fits = await query("{ _meta { status } }", undefined, small);
    expect(fits.body.data._meta.status).toBeDefined();
  });
});

describe("time", () => {
  it("the request's deadline answers QUERY_TIMEOUT on time, and gives the connection up (more timeouts than the pool has connections, then a normal query)", async () => {
    const fast = endpointWith({ timeoutMs: 300 });
    await withLockTableHeld(async () => {
      for (let i = 0; i < 6; i++) {
        const t0 = performance.now();
        const a = await query(`{ locks(limit: 1) { items { tokenId } } }`, undefined, fast);
        const ms = performance.now() - t0;
        expect([a.status, ...errorsOf(a)]).toEqual([
          200,
          ["QUERY_TIMEOUT", "The request took longer than 300 ms; narrow its filters or ask for fewer rows."],
        ]);
        expect(ms).toBeGreaterThanOrEqual(290);
        expect(ms).toBeLessThan(1_000);
      }
    });
    const t0 = performance.now();
    const after = await query(`{ locks(limit: 1) { items { tokenId } } }`, undefined, fast);
    expect(after.body.data.locks.items).toHaveLength(1);
    expect(performance.now() - t0).toBeLessThan(300);
  });

  it("Postgres's statement timeout inside a request is QUERY_TIMEOUT too, not an internal error", async () => {
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: 1,
      statement_timeout: 200,
      options: "-c search_path=gq",
    });
    try {
      const patient = endpointWith({ timeoutMs: 5_000 }, graphqlIndexOnPool(pool));
      const a = await withLockTableHeld(() => query(`{ locks(limit: 1) { items { tokenId } } }`, undefined, patient));
      expect(a.status).toBe(200);
      expect(errorsOf(a)).toEqual([
        ["QUERY_TIMEOUT", "The request took longer than 5000 ms; narrow its filters or ask for fewer rows."],
      ]);
      expect(a.body.data).toBeNull();
    } finally {
      await pool.end();
    }
  });

  it("the app's own limit is 2 s: a query held longer answers QUERY_TIMEOUT within 2.5 s", async () => {
    const t0 = performance.now();
    const a = await withLockTableHeld(() => query(`{ locks(limit: 1) { items { tokenId } } }`));
    expect(errorsOf(a)[0]![0]).toBe("QUERY_TIMEOUT");
    expect(performance.now() - t0).toBeLessThan(2_500);
  });
});

describe("transport: the service's envelope", () => {
  it("a body over 64 KiB: 413 PAYLOAD_TOO_LARGE", async () => {
    const a = await post({ query: `{ _meta { status } }`, variables: { pad: "x".repeat(70_000) } });
    expect([a.status, a.body]).toEqual([
      413,
      {
        ok: false,
        error: "PAYLOAD_TOO_LARGE",
        message: "The request body exceeds 65536 bytes.",
        detail: { maxBytes: 65536 },
      },
    ]);
    expect(a.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("not JSON, not one object, not application/json: 400 / 400 / 415", async () => {
    const bad = await post("{ query: nope");
    expect([bad.status, bad.body.error, bad.body.message]).toEqual([
      400,
      "BAD_REQUEST",
      "The request body is not valid JSON.",
    ]);
    const batch = await post([{ query: "{ _meta { status } }" }]);
    expect([batch.status, batch.body.error]).toEqual([400, "BAD_REQUEST"]);
    const text = await post("{ _meta { status } }", { headers: { "content-type": "text/plain" } });
    expect([text.status, text.body.error]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
  });

  it("other methods: 405 naming GET, POST, OPTIONS; a preflight allows POST with content-type", async () => {
    const put = await answerOf(await app.request("/graphql", { method: "PUT", body: "{}" }));
    expect([put.status, put.body.error, put.headers.get("allow")]).toEqual([
      405,
      "METHOD_NOT_ALLOWED",
      "GET, POST, OPTIONS",
    ]);
    const preflight = await app.request("/graphql", {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).toBe("*");
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("its own rate-limit budget `graphql`: RateLimit headers, then 429 RATE_LIMITED with Retry-After", async () => {
    const limited = d.app({ graphql: index.graphql, config: { ...d.config, rateLimit: { max: 3, windowSec: 60 } } });
    for (let i = 0; i < 3; i++) {
      const ok = await query("{ _meta { status } }", undefined, limited);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("ratelimit-policy")).toBe('"graphql";q=3;w=60');
      expect(ok.headers.get("ratelimit")).toMatch(new RegExp(`^"graphql";r=${2 - i};t=[0-9]+$`));
    }
    const refused = await query("{ _meta { status } }", undefined, limited);
    expect([refused.status, refused.body.error]).toEqual([429, "RATE_LIMITED"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Its own budget: the v1 prefixes still have theirs.
    expect((await limited.request("/api/mcp/v1/preflight")).headers.get("ratelimit")).toMatch(/^"preflight";r=2;/);
  });

  it("a process without an index: 503 INDEX_UNAVAILABLE", async () => {
    const none = d.app();
    const a = await query("{ _meta { status } }", undefined, none);
    expect([a.status, a.body.error]).toEqual([503, "INDEX_UNAVAILABLE"]);
  });
});
