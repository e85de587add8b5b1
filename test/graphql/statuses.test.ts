/**
 * Every refusal of /graphql answers the status, media type and code docs/api.md "GraphQL (/graphql)" gives it (its
 * Statuses table), to a client that accepts application/json and to one that accepts the GraphQL-over-HTTP spec's
 * application/graphql-response+json: a malformed request 400 to both, a well-formed one refused before execution 200
 * / 400, a field's failure 200 to both. Through the app, over a synthetic index (PGlite). A COMPILE_QUEUE_FULL, an
 * EXECUTION_TIMEOUT and a RESPONSE_TOO_LARGE are test/graphql/documentCache.test.ts's and served.test.ts's.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { GRAPHQL_LIMITS } from "../../api/graphql/limits";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { generateSyntheticIndex, syntheticOwner, writeSyntheticIndex } from "../support/syntheticIndex";

let app: ReturnType<typeof createApp>;
let head: bigint;

beforeAll(async () => {
  const index = generateSyntheticIndex({ events: 200, owners: 10, seed: 5, startBlock: 46_183_959n });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "synthetic", index);
  head = index.head.block;
  app = createApp({
    config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: "synthetic" }) },
    logger: silentLogger,
  });
}, 60_000);

/** An EIP-55 address with one letter's case flipped. */
const BAD_CHECKSUM = "0x70997970C51812dc3A010C7d01b50e0d17dc79c8";
const JSON_TYPE = "application/json; charset=utf-8";
const SPEC_TYPE = "application/graphql-response+json; charset=utf-8";
const q = (query: string) => JSON.stringify({ query });
const GET = (query: string, extra = "") => `?query=${encodeURIComponent(query)}${extra}`;
const pages = (n: number) =>
  Array.from(
    { length: n },
    (_, i) => `p${i}: lockEvents(where: { tokenId: "${i + 1}" }, limit: 1000) { items { kind } }`,
  );

/** [what, method, body (POST) or query string (GET), status to application/json, to graphql-response+json, code]. */
type Row = [string, "GET" | "POST", string, number, number, string];
const ROWS: Row[] = [
  // Not a well-formed GraphQL-over-HTTP request: 400 to both.
  ["a body that is not JSON", "POST", "NONSENSE", 400, 400, "BAD_REQUEST"],
  ["a JSON null body", "POST", "null", 400, 400, "BAD_REQUEST"],
  ["a batch", "POST", JSON.stringify([{ query: "{ _meta { block } }" }]), 400, 400, "BAD_REQUEST"],
  ["no query", "POST", "{}", 400, 400, "BAD_REQUEST"],
  [
    "a persisted-query hash alone",
    "POST",
    JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: "ab".repeat(32) } } }),
    400,
    400,
    "BAD_REQUEST",
  ],
  ["a GET without query", "GET", "", 400, 400, "BAD_REQUEST"],
  ["query a number", "POST", '{"query":5}', 400, 400, "BAD_REQUEST"],
  [
    "operationName a number",
    "POST",
    JSON.stringify({ query: "query A { _meta { block } }", operationName: 5 }),
    400,
    400,
    "BAD_REQUEST",
  ],
  [
    "variables an array",
    "POST",
    JSON.stringify({ query: "{ _meta { block } }", variables: [7] }),
    400,
    400,
    "BAD_REQUEST",
  ],
  [
    "extensions a number",
    "POST",
    JSON.stringify({ query: "{ _meta { block } }", extensions: 5 }),
    400,
    400,
    "BAD_REQUEST",
  ],
  ["a GET's variables not JSON", "GET", GET("{ _meta { block } }", "&variables=%7Bbad"), 400, 400, "BAD_REQUEST"],
  ["a GET's variables a number", "GET", GET("{ _meta { block } }", "&variables=5"), 400, 400, "BAD_REQUEST"],
  // Well-formed, refused before execution: 200 / 400.
  ["a syntax error", "POST", q("{ lock("), 200, 400, "GRAPHQL_PARSE_FAILED"],
  ["a GET's syntax error", "GET", GET("{ lock("), 200, 400, "GRAPHQL_PARSE_FAILED"],
  ["1001 tokens", "POST", q(`{ _meta { ${"block ".repeat(997)} } }`), 200, 400, "TOKEN_LIMIT_EXCEEDED"],
  ["an unknown field", "POST", q("{ nope }"), 200, 400, "GRAPHQL_VALIDATION_FAILED"],
  [
    "depth 9",
    "POST",
    q(`{ __type(name: "Lock") { fields { type { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } }`),
    200,
    400,
    "DEPTH_LIMIT_EXCEEDED",
  ],
  [
    "31 aliases",
    "POST",
    q(`{ ${Array.from({ length: 31 }, (_, i) => `a${i}: _meta { block }`).join(" ")} }`),
    200,
    400,
    "ALIAS_LIMIT_EXCEEDED",
  ],
  ["a bad BigInt literal", "POST", q(`{ lock(tokenId: "-1") { tokenId } }`), 200, 400, "BAD_USER_INPUT"],
  ["a mutation", "POST", q("mutation { x }"), 200, 400, "BAD_REQUEST"],
  ["a subscription", "POST", q("subscription { x }"), 200, 400, "BAD_REQUEST"],
  [
    "two operations, no operationName",
    "POST",
    q("query A { _meta { block } } query B { _meta { block } }"),
    200,
    400,
    "OPERATION_RESOLUTION_FAILURE",
  ],
  [
    "an operationName naming none",
    "POST",
    JSON.stringify({ query: "query A { _meta { block } }", operationName: "B" }),
    200,
    400,
    "OPERATION_RESOLUTION_FAILURE",
  ],
  [
    "a GET's operationName naming none",
    "GET",
    GET("query A { _meta { block } }", "&operationName=B"),
    200,
    400,
    "OPERATION_RESOLUTION_FAILURE",
  ],
  [
    "a variable of the wrong type",
    "POST",
    JSON.stringify({
      query: "query ($a: String!) { locks(where: { owner: $a }) { items { tokenId } } }",
      variables: { a: 5 },
    }),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a required variable missing",
    "POST",
    q("query ($a: String!) { locks(where: { owner: $a }) { items { tokenId } } }"),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "limit 1001",
    "POST",
    q(`{ lockEvents(where: { tokenId: "1" }, limit: 1001) { items { kind } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  ["2001 rows", "POST", q(`{ ${pages(2).join(" ")} lock(tokenId: "3") { tokenId } }`), 200, 400, "ROW_LIMIT_EXCEEDED"],
  [
    "a bad cursor",
    "POST",
    q(`{ lockEvents(where: { tokenId: "1" }, after: "bm9wZQ") { items { kind } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "two blocks",
    "POST",
    q(`{ _meta(block: "46183960") { block } lock(tokenId: "1", block: "46183961") { tokenId } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "lockEvents in ascending order (served newest first only)",
    "POST",
    q(`{ lockEvents(where: { tokenId: "1" }, orderDirection: asc) { items { kind } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "an exact block below a number_gte",
    "POST",
    q(`{ _meta(block: { number_gte: "46183961" }) { block } lock(tokenId: "1", block: "46183960") { tokenId } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  // The arguments the resolvers would refuse, judged before execution too (a field error was a 200 to every client).
  [
    "lockEvents naming both a lock and an account",
    "POST",
    q(
      `{ lockEvents(where: { tokenId: "1", account: "0x0000000000000000000000000000000000000001" }) { items { kind } } }`,
    ),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  ["lockEvents naming neither", "POST", q(`{ lockEvents(where: {}) { items { kind } } }`), 200, 400, "BAD_USER_INPUT"],
  ["an unknown board", "POST", q(`{ leaderboard(board: "pool") { accounts } }`), 200, 400, "BAD_USER_INPUT"],
  [
    "a board's unknown window",
    "POST",
    q(
      `{ rank(board: "takeovers", address: "0x0000000000000000000000000000000000000001", window: "1y") { row { rank } } }`,
    ),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a window on the ve board",
    "POST",
    q(`{ leaderboard(board: "ve", window: "7d") { accounts } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  // Addresses and activity kinds, judged before any read too (they were field errors: 200 to every client).
  [
    "a malformed owner",
    "POST",
    q(`{ locks(where: { owner: "0x12" }) { items { tokenId } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "an owner with a bad EIP-55 checksum",
    "POST",
    q(`{ locks(where: { owner: "${BAD_CHECKSUM}" }) { items { tokenId } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a malformed lockEvents account",
    "POST",
    q(`{ lockEvents(where: { account: "nope" }) { items { kind } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a malformed rank address",
    "POST",
    q(`{ rank(board: "ve", address: "0x1") { row { rank } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a profile address with a bad checksum",
    "POST",
    q(`{ profile(address: "${BAD_CHECKSUM}") { address } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  [
    "a malformed activity account",
    "POST",
    q(`{ activity(account: "0x1") { items { id } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  ["activity naming no kind", "POST", q(`{ activity(kinds: []) { items { id } } }`), 200, 400, "BAD_USER_INPUT"],
  [
    "activity naming an unknown kind",
    "POST",
    q(`{ activity(kinds: ["nope"]) { items { id } } }`),
    200,
    400,
    "BAD_USER_INPUT",
  ],
  // A mutation over GET: 405 to both, with GraphQL's errors and `Allow: POST` (RFC 9110 §15.5.6: every 405 names them).
  ["a mutation over GET", "GET", GET("mutation { x }"), 405, 405, "BAD_REQUEST"],
];

async function ask(method: "GET" | "POST", body: string, accept?: string) {
  const headers: Record<string, string> = accept ? { accept } : {};
  const res =
    method === "GET"
      ? await app.request(`/graphql${body}`, { headers })
      : await app.request("/graphql", { method, headers: { ...headers, "content-type": "application/json" }, body });
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    allow: res.headers.get("allow"),
    body: JSON.parse(text) as Record<string, any>,
  };
}

/** A new document may find the compile permits taken on a busy machine (COMPILE_QUEUE_FULL, 503): asked again. */
async function settled(method: "GET" | "POST", body: string, accept?: string) {
  for (let tries = 0; ; tries++) {
    const answer = await ask(method, body, accept);
    if (answer.status !== 503 || tries === 40) return answer;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("refusals: status, media type and code as docs/api.md's Statuses table gives them", () => {
  it.each(ROWS)("%s", async (_, method, body, legacy, strict, code) => {
    for (const [accept, status, type] of [
      [undefined, legacy, JSON_TYPE],
      ["application/json", legacy, JSON_TYPE],
      ["*/*", legacy, JSON_TYPE],
      ["application/graphql-response+json", strict, SPEC_TYPE],
      ["application/graphql-response+json, application/json;q=0.9", strict, SPEC_TYPE],
    ] as const) {
      const answer = await settled(method, body, accept);
      const codes = ((answer.body.errors ?? []) as { extensions: { code: string } }[]).map((e) => e.extensions.code);
      expect({ accept, status: answer.status, type: answer.type, allow: answer.allow, codes }).toEqual({
        accept,
        status,
        type,
        allow: status === 405 ? "POST" : null,
        codes: [code],
      });
      // Refused before execution: no `data` at all (GraphQL over HTTP: then a 4xx to a graphql-response+json client).
      expect(answer.body, accept).not.toHaveProperty("data");
      expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at |stack|node_modules|"http"|originalError/);
    }
  });

  it("a field's failure while executing is 200 with `data` to both", async () => {
    for (const accept of [undefined, "application/graphql-response+json"]) {
      const answer = await settled("POST", q(`{ _meta(block: "${head + 1000n}") { block } }`), accept);
      expect([answer.status, answer.body.data, answer.body.errors[0].extensions.code]).toEqual([
        200,
        null,
        "BAD_USER_INPUT",
      ]);
    }
  });

  it("before GraphQL: the API's envelope, whatever the client accepts", async () => {
    const strict = { accept: "application/graphql-response+json" };
    const big = await app.request("/graphql", {
      method: "POST",
      headers: { ...strict, "content-type": "application/json" },
      body: q(`{ _meta { block } }${" ".repeat(GRAPHQL_LIMITS.bodyBytes)}`),
    });
    const text = await app.request("/graphql", {
      method: "POST",
      headers: { ...strict, "content-type": "text/plain" },
      body: "{}",
    });
    const put = await app.request("/graphql", { method: "PUT", headers: strict });
    const answers = [big, text, put];
    const seen = await Promise.all(answers.map(async (r) => [r.status, ((await r.json()) as { error: string }).error]));
    expect(seen).toEqual([
      [413, "PAYLOAD_TOO_LARGE"],
      [415, "UNSUPPORTED_MEDIA_TYPE"],
      [405, "METHOD_NOT_ALLOWED"],
    ]);
    // A browser opening a query link (text/html only): 406, empty.
    const html = await app.request(`/graphql${GET("{ _meta { block } }")}`, { headers: { accept: "text/html" } });
    expect([html.status, await html.text()]).toEqual([406, ""]);
  });
});

describe("judged before any read: a cursor of the other orderDirection", () => {
  it("a `locks` cursor handed out ascending, sent with orderDirection: desc (and back): 200 / 400", async () => {
    const page = (owner: string, dir: string, after?: string) =>
      q(
        `{ locks(where: { owner: "${owner}" }, orderDirection: ${dir}, limit: 1${after ? `, after: "${after}"` : ""}) { pageInfo { hasNextPage endCursor } } }`,
      );
    let cursors: { asc: string; desc: string } | undefined;
    for (let i = 0; i < 10 && cursors === undefined; i++) {
      const owner = syntheticOwner(i);
      const asc = await settled("POST", page(owner, "asc"));
      const desc = await settled("POST", page(owner, "desc"));
      const info = (a: typeof asc) => a.body.data.locks.pageInfo as { hasNextPage: boolean; endCursor: string };
      if (info(asc).hasNextPage) cursors = { asc: info(asc).endCursor, desc: info(desc).endCursor };
      if (cursors === undefined) continue;
      for (const [dir, after] of [
        ["desc", cursors.asc],
        ["asc", cursors.desc],
      ] as const) {
        for (const [accept, status] of [
          ["application/json", 200],
          ["application/graphql-response+json", 400],
        ] as const) {
          const answer = await settled("POST", page(owner, dir, after), accept);
          expect({
            dir,
            accept,
            status: answer.status,
            data: "data" in answer.body,
            error: answer.body.errors?.[0],
          }).toEqual({
            dir,
            accept,
            status,
            data: false,
            error: expect.objectContaining({ extensions: { code: "BAD_USER_INPUT", param: "after" } }),
          });
        }
      }
    }
    expect(cursors, "an owner with two locks").toBeDefined();
  });
});

describe("Accept: the answer's media type by RFC 9110's q-values, 406 before anything runs", () => {
  const refused = q("{ nope }"); // a validation error: 200 as application/json, 400 as graphql-response+json
  it.each([
    ["application/graphql-response+json;q=0, application/json", 200, JSON_TYPE],
    ["application/json;q=0, application/graphql-response+json", 400, SPEC_TYPE],
    ["application/graphql-response+json;q=0.5, application/json;q=0.9", 200, JSON_TYPE],
    ["application/json;q=0.5, application/graphql-response+json", 400, SPEC_TYPE],
    ["application/graphql-response+json, application/json;q=0.9", 400, SPEC_TYPE],
    ["application/json, application/graphql-response+json", 200, JSON_TYPE],
    ["*/*;q=0.8, application/graphql-response+json", 400, SPEC_TYPE],
    ["application/json;q=0, */*", 400, SPEC_TYPE],
    ["text/event-stream, application/json", 200, JSON_TYPE],
    ["multipart/mixed;q=1, application/graphql-response+json;q=0.1", 400, SPEC_TYPE],
    ["", 200, JSON_TYPE],
  ] as const)("%s: %i %s", async (accept, status, type) => {
    const answer = await ask("POST", refused, accept || undefined);
    expect([answer.status, answer.type, answer.body.errors[0].extensions.code]).toEqual([
      status,
      type,
      "GRAPHQL_VALIDATION_FAILED",
    ]);
  });

  it.each([
    "text/event-stream",
    "multipart/mixed",
    "multipart/mixed; deferSpec=20220824, text/event-stream",
    "text/html",
    "application/graphql-response+json;q=0",
    "application/json;q=0, application/graphql-response+json;q=0",
    "*/*;q=0",
    "application/json; charset=latin1",
  ])("%s: 406, empty (no stream), POST and GET", async (accept) => {
    const post = await app.request("/graphql", {
      method: "POST",
      headers: { accept, "content-type": "application/json" },
      body: q("{ _meta { block } }"),
    });
    const get = await app.request(`/graphql${GET("{ _meta { block } }")}`, { headers: { accept } });
    for (const res of [post, get]) {
      expect([res.status, res.headers.get("content-type"), await res.text()]).toEqual([406, null, ""]);
    }
  });

  it("the 406 comes before the query runs: a `number_gte` wait of 2 s is not waited", async () => {
    const started = performance.now();
    const res = await app.request("/graphql", {
      method: "POST",
      headers: { accept: "text/html", "content-type": "application/json" },
      body: q(`{ _meta(block: { number_gte: "${head + 1n}", waitMs: 2000 }) { block } }`),
    });
    expect(res.status).toBe(406);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
