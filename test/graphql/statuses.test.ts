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
import { generateSyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

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
      expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at |stack|node_modules|"http"/);
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
