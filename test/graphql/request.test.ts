/**
 * The transport checks of /graphql (api/graphql/request.ts): the envelope for whatever is not a GraphQL
 * request, before GraphQL or the index is touched. On an app without an index, so a request that passes them
 * is visible as 503 INDEX_UNAVAILABLE.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { createLogger } from "../../api/observability/logger";

const app = createApp({ config: loadConfig({ NETWORK: "base" }), rpc: null, logger: createLogger({ level: "error" }) });

async function get(search: string) {
  const res = await app.request(`/graphql${search}`, { headers: { accept: "text/html" } });
  return [res.status, await res.json()] as const;
}

async function post(body: string, contentType = "application/json") {
  const res = await app.request("/graphql", { method: "POST", headers: { "content-type": contentType }, body });
  return [res.status, await res.json()] as const;
}

const passes = [503, expect.objectContaining({ ok: false, error: "INDEX_UNAVAILABLE" })];

describe("GET /graphql", () => {
  it("query, variables, operationName, extensions pass", async () => {
    expect(await get("?query=%7B__typename%7D")).toEqual(passes);
    const vars = encodeURIComponent('{"n":1}');
    expect(await get(`?query=%7B__typename%7D&variables=${vars}&operationName=Q&extensions=%7B%7D`)).toEqual(passes);
  });

  it.each([
    ["", "query", "query is required: the GraphQL document, as a string."],
    ["?query=%20", "query", "query is required: the GraphQL document, as a string."],
    ["?query=a&query=b", "query", "Parameter query is given more than once."],
    ["?query=a&variables=notjson", "variables", "variables must be a JSON object."],
    ["?query=a&variables=%5B1%5D", "variables", "variables must be a JSON object."],
    ["?query=a&extensions=1", "extensions", "extensions must be a JSON object."],
    ["?query=a&foo=1", "foo", "Unknown parameter foo."],
  ])("%s → BAD_PARAMS naming %s (a browser included: no 406, no 500)", async (search, param, message) => {
    const [status, body] = await get(search);
    expect([status, body.error, body.message, body.detail.param]).toEqual([400, "BAD_PARAMS", message, param]);
  });
});

describe("POST /graphql", () => {
  it("one JSON object with the GraphQL members passes; null stands for absent", async () => {
    expect(await post('{"query":"{ __typename }","variables":null,"operationName":null}')).toEqual(passes);
  });

  it.each([
    ['{"variables":{}}', "query"],
    ['{"query":1}', "query"],
    ['{"query":"{a}","variables":"x"}', "variables"],
    ['{"query":"{a}","operationName":3}', "operationName"],
    ['{"query":"{a}","id":"persisted"}', "id"],
  ])("%s → BAD_PARAMS naming %s", async (body, param) => {
    const [status, answer] = await post(body);
    expect([status, answer.error, answer.detail.param]).toEqual([400, "BAD_PARAMS", param]);
  });

  it("not JSON, not one object, another media type, over 64 KiB: envelopes", async () => {
    expect((await post("{nope"))[1]).toMatchObject({
      error: "BAD_REQUEST",
      message: "The request body is not valid JSON.",
    });
    expect((await post("[]"))[0]).toBe(400);
    expect((await post('"x"'))[1].error).toBe("BAD_REQUEST");
    expect(await post("{}", "application/graphql")).toEqual([
      415,
      expect.objectContaining({ error: "UNSUPPORTED_MEDIA_TYPE" }),
    ]);
    expect((await post(JSON.stringify({ query: "x".repeat(65_537) })))[0]).toBe(413);
  });

  it("CORS on every envelope", async () => {
    const res = await app.request("/graphql", { method: "POST", headers: { "content-type": "text/plain" }, body: "" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});
