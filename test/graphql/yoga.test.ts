/**
 * The GraphQL engine's failures (api/graphql/yoga.ts) answer with the code docs/api.md gives them. A variable of the
 * wrong type is refused by graphql-jit with no `extensions.code` of its own: it is the client's input, so
 * `BAD_USER_INPUT` — not `INTERNAL_ERROR` with its stack in the error log. Through the app, a synthetic index.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { generateSyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";

const lines: Record<string, unknown>[] = [];
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  const index = generateSyntheticIndex({ events: 200, owners: 10, seed: 3, startBlock: 46_183_959n });
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), "synthetic", index);
  app = createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: "synthetic" }) },
    logger: createLogger({ level: "debug", write: (line) => lines.push(JSON.parse(line)) }),
  });
}, 60_000);

async function post(query: string, variables: Record<string, unknown>) {
  const res = await app.request("/graphql", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/graphql-response+json" },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
}

type ErrorsBody = { errors: { extensions: { code: string } }[] };

/**
 * Each case is a new document: on a busy machine (other test files beside this one) the compile gate may be resting
 * after the last one's compile and refuse it, 503 COMPILE_QUEUE_FULL with Retry-After (docs/api.md's limits), as
 * test/graphql/endpoint.test.ts meets it. Then, as a well-behaved client, it waits what it was told and asks again, a
 * few times at most; any other answer, a refusal of another kind included, is the case's.
 */
async function gql(query: string, variables: Record<string, unknown>) {
  for (let attempt = 1; ; attempt++) {
    const answer = await post(query, variables);
    const codes =
      answer.status === 503 ? (JSON.parse(answer.text) as ErrorsBody).errors.map((e) => e.extensions.code) : [];
    const refused = codes.length === 1 && codes[0] === "COMPILE_QUEUE_FULL";
    if (!refused || attempt === 8) return answer;
    await new Promise((r) => setTimeout(r, 1000 * Math.max(1, Number(answer.retryAfter))));
  }
}

describe("variables of the wrong type", () => {
  it.each([
    ["a number for String!", "query ($a: String!) { locks(where: { owner: $a }) { items { tokenId } } }", { a: 123 }],
    [
      "a string for Int",
      "query ($n: Int) { _meta { block } lockEvents(where: { tokenId: 1 }, limit: $n) { items { kind } } }",
      { n: "ten" },
    ],
    [
      "null for a required one",
      "query ($a: String!) { locks(where: { owner: $a }) { items { tokenId } } }",
      { a: null },
    ],
  ])("%s: BAD_USER_INPUT, no stack, no error-level log", async (_, query, variables) => {
    lines.length = 0;
    const { status, text } = await gql(query, variables);
    const body = JSON.parse(text) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(body.errors.map((e) => e.extensions.code)).toEqual(["BAD_USER_INPUT"]);
    expect(body.errors[0]!.message).toMatch(/Variable "\$[an]"/);
    expect(body.data ?? null).toBeNull();
    expect(status).toBe(400);
    expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
    expect(lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain("stack");
  });
});
