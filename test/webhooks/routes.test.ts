/**
 * The query of the operators' webhook routes (api/webhooks/routes.ts) through app.request(), over a stand-in store:
 * every route judges its query as every other route does (api/http/params.ts parseQuery with the route's declared
 * query), after the operator's token and before the store. An unknown, repeated or malformed parameter is 400
 * BAD_PARAMS naming it, in the envelope the OpenAPI document states for that route; `GET /webhooks?status=dead` had
 * listed every webhook, a typo or a `minBlock` ignored (red team rtlive F6). What the routes do with a real outbox is
 * test/webhooks/served.test.ts's business.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { PARAM_PATTERNS } from "../../api/http/params";
import { silentLogger } from "../../api/observability/logger";
import { buildOpenApiDocument } from "../../api/openapi/document";
import type { Webhooks } from "../../api/webhooks/service";
import { DELIVERY_STATUSES } from "../../api/webhooks/store";
import { openApiValidator } from "../support/openApiValidator";

const TOKEN = "operator-token-0123456789";
const BASE = "/api/index/v1";

/** A store that answers every read empty and records what the deliveries' list was asked. */
function standIn() {
  const asked: unknown[] = [];
  const touched: string[] = [];
  const hooks = {
    settings: { allowPrivate: "loopback", maxSubscriptions: 100 },
    ready: async () => {},
    wake: () => {},
    attach: () => {},
    store: {
      list: async () => {
        touched.push("list");
        return [];
      },
      deliveries: async (q: unknown) => {
        asked.push(q);
        return [];
      },
      remove: async () => {
        touched.push("remove");
        return false;
      },
      exists: async () => {
        touched.push("exists");
        return false;
      },
      startFeedAt: async () => {},
      create: async () => {
        touched.push("create");
        return null;
      },
    },
  };
  return { webhooks: hooks as unknown as Webhooks, asked, touched };
}

const app = (webhooks: Webhooks | null) =>
  createApp({
    config: loadConfig({ NETWORK: "base", OPERATOR_TOKEN: TOKEN }),
    rpc: null,
    logger: silentLogger,
    ...(webhooks ? { webhooks } : {}),
  });

async function call(a: ReturnType<typeof app>, method: string, path: string, token: string | null = TOKEN) {
  const res = await a.request(`${BASE}${path}`, {
    method,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(method === "POST" && !path.includes("/replay")
      ? { body: JSON.stringify({ url: "http://127.0.0.1:9/x", topics: ["stats"] }) }
      : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("the webhook routes' query", () => {
  it("every route refuses a parameter it does not take: 400 BAD_PARAMS naming it, the store untouched", async () => {
    const { webhooks, touched, asked } = standIn();
    const a = app(webhooks);
    const doc = await buildOpenApiDocument();
    const { check } = openApiValidator(doc);
    for (const [method, path, template, query, param, accepted] of [
      ["GET", "/webhooks", "/webhooks", "status=dead", "status", []],
      ["GET", "/webhooks", "/webhooks", "foo=1", "foo", []],
      ["GET", "/webhooks", "/webhooks", "limit=abc", "limit", []],
      ["GET", "/webhooks", "/webhooks", "minBlock=1&waitMs=100", "minBlock", []],
      ["POST", "/webhooks", "/webhooks", "foo=1", "foo", []],
      ["DELETE", "/webhooks/wh_x", "/webhooks/{id}", "foo=1", "foo", []],
      ["POST", "/webhooks/wh_x/replay", "/webhooks/{id}/replay", "foo=1", "foo", []],
      ["GET", "/webhooks/deliveries", "/webhooks/deliveries", "minBlock=1", "minBlock", ["status", "webhook", "limit"]],
    ] as const) {
      const res = await call(a, method, `${path}?${query}`);
      const where = `${method} ${path}?${query}`;
      expect(res.status, where).toBe(400);
      expect(res.json, where).toMatchObject({
        ok: false,
        error: "BAD_PARAMS",
        message: `Unknown parameter ${param}.`,
        detail: { param, accepted },
      });
      // The answer the OpenAPI document states for that route and status.
      const item = doc.paths[`${BASE}${template}`] as Record<string, { responses: Record<string, unknown> }>;
      const documented = item[method.toLowerCase()]?.responses["400"] as
        | { content: { "application/json": { schema: unknown } } }
        | undefined;
      expect(documented, `${where} documents 400`).toBeDefined();
      expect(check(documented!.content["application/json"].schema, res.json), where).toBeNull();
    }
    expect(touched).toEqual([]);
    expect(asked).toEqual([]);
  });

  it("the deliveries' list judges its three parameters strictly, and gets what they say", async () => {
    const { webhooks, asked } = standIn();
    const a = app(webhooks);
    for (const [query, param] of [
      ["status=lost", "status"],
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["limit=0100", "limit"],
      ["limit=1&limit=2", "limit"],
      ["webhook=nope", "webhook"],
    ] as const) {
      const res = await call(a, "GET", `/webhooks/deliveries?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json, query).toMatchObject({ error: "BAD_PARAMS", detail: { param } });
    }
    expect(asked).toEqual([]);
    for (const query of ["", "limit=500", "status=dead&webhook=wh_3J9xk2ZqX8s0b1mH4tVwRg"]) {
      expect((await call(a, "GET", `/webhooks/deliveries?${query}`)).status, query).toBe(200);
    }
    expect(asked).toEqual([
      { limit: 100 },
      { limit: 500 },
      { limit: 100, status: "dead", webhook: "wh_3J9xk2ZqX8s0b1mH4tVwRg" },
    ]);
    // The documented states are the store's.
    for (const status of DELIVERY_STATUSES) expect(new RegExp(PARAM_PATTERNS.deliveryStatus).test(status)).toBe(true);
  });

  it("the token is checked first (401), the query before the store (400 before 503)", async () => {
    expect((await call(app(standIn().webhooks), "GET", "/webhooks?foo=1", null)).status).toBe(401);
    const unconfigured = app(null);
    expect((await call(unconfigured, "GET", "/webhooks?foo=1")).status).toBe(400);
    expect((await call(unconfigured, "GET", "/webhooks")).status).toBe(503);
  });
});
