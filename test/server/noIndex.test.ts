/**
 * The API process (dist/server/main.js, `npm run serve:api`) on NETWORK=local without DATABASE_URL: a deployment the
 * spec allows (§2.3: the state's locks "hydrated from the subgraph when configured, otherwise an empty array"), serving
 * the supply, state, quote, prepare and MCP with no index. Its /ready is 200 — nothing it was configured with is
 * missing — and says `index: "unconfigured"`, as its start-up warning does, so an operator reading either learns why
 * every index route and GraphQL answer 503 INDEX_UNAVAILABLE "unconfigured". Before: /ready answered
 * `{"ok":true,"status":"ready"}`, the same body as a replica over its index (red team rtops F3).
 */
import { describe, expect, it } from "vitest";
import { indexlessApiPerFile } from "../support/indexlessApi";

const served = indexlessApiPerFile({ LOG_LEVEL: "warn" });

describe("the API process without DATABASE_URL", () => {
  it("/ready is 200 saying the index is unconfigured; the index routes and GraphQL 503 'unconfigured'", async () => {
    const api = served();
    const ready = await fetch(`${api.url}/ready`);
    expect([ready.status, await ready.json(), ready.headers.get("cache-control")]).toEqual([
      200,
      { ok: true, status: "ready", index: "unconfigured" },
      "no-store",
    ]);

    const stats = await fetch(`${api.url}/api/index/v1/stats`);
    expect([stats.status, await stats.json()]).toMatchObject([
      503,
      { ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "unconfigured" } },
    ]);
    const graphql = await fetch(`${api.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ _meta { block } }" }),
    });
    expect(JSON.stringify(await graphql.json())).toContain("unconfigured");

    // What needs no index is served.
    expect((await fetch(`${api.url}/api/supply/total`)).status).toBe(200);

    // The start-up warning names what the process will not serve.
    const warning = api
      .log()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string })
      .find((l) => l.msg.startsWith("no index database configured"));
    expect(warning).toMatchObject({ level: "warn" });
    expect(warning?.msg).toContain("503 INDEX_UNAVAILABLE");
  });
});
