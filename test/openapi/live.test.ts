import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { createApp } from "../../api/app";
import { buildOpenApiDocument, type OpenApiDocument } from "../../api/openapi/document";
import { DEVNET_STATUS_BITMASK } from "../../devnet/deploy";
import { openApiValidator } from "../support/openApiValidator";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

// Every documented example against a live answer of the devnet stack (anvil + deployDevnet + seedDevnet,
// the app over a real RpcClient): the request each operation's parameter examples describe is sent, the
// live body must match the documented schema, and so must the documented example. Then the error side:
// each failure the stack can be put into answers a status and code the document lists for that route.

type App = ReturnType<typeof createApp>;

let d: ReadsDevnet;
let app: App;
let doc: OpenApiDocument;
let v: ReturnType<typeof openApiValidator>;

beforeAll(async () => {
  d = await startReadsDevnet();
  app = d.app();
  doc = await buildOpenApiDocument();
  v = openApiValidator(doc);
});
afterAll(async () => {
  await d?.stop();
});

const paths = () => Object.keys(doc.paths);
const V1_PATHS = [
  "/api/mcp/v1/state/{address}",
  "/api/mcp/v1/preflight",
  "/api/mcp/v1/quote/lock-via-furnace",
  ...[
    "collect-all",
    "collect-royalties",
    "harvest-rewards",
    "withdraw-lp",
    "lock-via-furnace",
    "stake-lp",
    "unbond-lp",
    "lock",
    "topup",
    "extend",
  ].map((a) => `/api/mcp/v1/prepare/${a}`),
];
const PREPARE_PATHS = V1_PATHS.filter((p) => p.includes("/prepare/"));
const SUPPLY_PATHS = ["/api/supply/total", "/api/supply/circulating", "/api/supply/max"];
/** The operators' webhook routes: served and checked against the document in test/webhooks/served.test.ts. */
const WEBHOOK_PATHS = [
  "/api/index/v1/webhooks",
  "/api/index/v1/webhooks/deliveries",
  "/api/index/v1/webhooks/{id}",
  "/api/index/v1/webhooks/{id}/replay",
];
/**
 * Validated against live answers over a real index in test/index/chain.test.ts, test/index/boards.test.ts and
 * test/index/activity.test.ts (this
 * stack has no index).
 */
const INDEX_PATHS = [
  "/api/index/v1/locks/{tokenId}",
  "/api/index/v1/locks/{tokenId}/events",
  "/api/index/v1/accounts/{address}/events",
  "/api/index/v1/accounts/{address}/locks",
  "/api/index/v1/leaderboards/ve",
  "/api/index/v1/leaderboards/ve/{address}",
  "/api/index/v1/leaderboards/{board}",
  "/api/index/v1/leaderboards/{board}/{address}",
  "/api/index/v1/stats",
  "/api/index/v1/activity",
  "/api/index/v1/activity/{id}",
  "/api/index/v1/accounts/{address}",
];

/** The request the operation's documented parameter examples describe (the examples' own request). */
function exampleUrl(path: string, extra: Record<string, string> = {}): string {
  const op = v.operation(path);
  let url = path;
  const query = new URLSearchParams();
  for (const p of op.parameters) {
    if (p.example === undefined) continue;
    if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(p.example));
    else query.append(p.name, p.example);
  }
  for (const [k, value] of Object.entries(extra)) query.append(k, value);
  const q = query.toString();
  return q ? `${url}?${q}` : url;
}

async function get(a: App, url: string) {
  const res = await a.request(url);
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  return { res, text, body: type.startsWith("application/json") ? JSON.parse(text) : text };
}

/** The answer is one the document lists for `path`: its status, its code at that status, its schema. */
function expectDocumented(path: string, status: number, body: unknown, contentType = "application/json") {
  const responses = v.operation(path).responses;
  expect(Object.keys(responses), `${path} answered ${status}: ${JSON.stringify(body)}`).toContain(String(status));
  const media = v.media(path, status, contentType);
  expect(v.check(media.schema, body), `${path} ${status}: ${JSON.stringify(body)}`).toBeNull();
  if (status !== 200 && contentType === "application/json") {
    expect(Object.keys(media.examples ?? {}), path).toContain((body as { error: string }).error);
  }
}

describe("every documented example validates against a live answer", () => {
  it("covers every documented route", () => {
    // The event stream answers text/event-stream, on the wire in test/index/stream.test.ts.
    expect([...V1_PATHS, ...SUPPLY_PATHS, ...INDEX_PATHS, ...WEBHOOK_PATHS, "/api/index/v1/stream"].sort()).toEqual(
      paths().sort(),
    );
  });

  it.each(V1_PATHS)("%s", async (path) => {
    const { res, body } = await get(app, exampleUrl(path));
    expect(res.status, JSON.stringify(body)).toBe(200);
    const media = v.media(path, 200);
    expect(v.check(media.schema, body)).toBeNull();
    expect(v.examplesOf(media)).toHaveLength(1);
    expect(v.check(media.schema, media.example)).toBeNull();
    // Same shape beyond the schema: the same fields at every level of the envelope.
    const keys = (o: object) => Object.keys(o).sort();
    expect(keys(body)).toEqual(keys(media.example as object));
  });

  it.each(SUPPLY_PATHS)("%s (JSON and bare)", async (path) => {
    const json = await get(app, path);
    expect(json.res.status).toBe(200);
    expectDocumented(path, 200, json.body);
    const media = v.media(path, 200);
    expect(v.check(media.schema, media.example)).toBeNull();
    const bare = await get(app, `${path}?format=bare`);
    expect(bare.res.status).toBe(200);
    expect(bare.res.headers.get("content-type")).toMatch(/^text\/plain/);
    expectDocumented(path, 200, bare.text, "text/plain");
    const text = v.media(path, 200, "text/plain");
    expect(v.check(text.schema, text.example)).toBeNull();
  });

  it("prepare examples without chain reads carry exactly the calldata the live route encodes", async () => {
    // Actions that read nothing encode only the request: example and live calldata must be the same
    // bytes (the addresses the calls go to differ: Base in the document, the devnet here).
    for (const action of [
      "collect-all",
      "collect-royalties",
      "harvest-rewards",
      "withdraw-lp",
      "unbond-lp",
      "extend",
    ]) {
      const path = `/api/mcp/v1/prepare/${action}`;
      const example = v.media(path, 200).example as { transactions: { step: string; data: string }[] };
      const { body } = await get(app, exampleUrl(path));
      const strip = (txs: { step: string; data: string }[]) => txs.map(({ step, data }) => ({ step, data }));
      expect(strip(body.transactions), action).toEqual(strip(example.transactions));
    }
  });
});

describe("every live failure is a documented one", () => {
  it("an unknown parameter: 400 BAD_PARAMS on every v1 route; any format on a supply route is an answer", async () => {
    for (const path of V1_PATHS) {
      const { res, body } = await get(app, exampleUrl(path, { nope: "1" }));
      expect(res.status, path).toBe(400);
      expect(body.detail.param).toBe("nope");
      expectDocumented(path, 400, body);
    }
    // Spec §4.1: without format=bare the JSON shape; a supply route answers as without the parameter (a figure, or
    // the documented 502 where the node fails here).
    for (const path of SUPPLY_PATHS) {
      const plain = await get(app, path);
      const { res, body } = await get(app, `${path}?format=xml`);
      expect([res.status, body], path).toEqual([plain.res.status, plain.body]);
      expectDocumented(path, res.status, body);
    }
  });

  it("a quoter revert and a missing contract", async () => {
    const quote = "/api/mcp/v1/quote/lock-via-furnace";
    const tooSmall = exampleUrl(quote).replace(/claimAmountWei=\d+/, "claimAmountWei=1");
    const reverted = await get(app, tooSmall);
    expect(reverted.res.status).toBe(502);
    expect(reverted.body.detail.reason).toBe("MinLockAmountNotMet");
    expectDocumented(quote, 502, reverted.body);

    const noQuoter = d.configWith((m) => {
      delete m.contracts.FurnaceQuoter;
      return m;
    });
    const bare = d.app({ config: noQuoter });
    for (const path of [quote, "/api/mcp/v1/prepare/lock-via-furnace"]) {
      const { res, body } = await get(bare, exampleUrl(path));
      expect(res.status, path).toBe(503);
      expect(body.error).toBe("CHAIN_UNREADY");
      expectDocumented(path, 503, body);
    }
  });

  it("the RPC down: reads, a cold gate and a warm one, supply", async () => {
    const cold = d.app();
    // One app per route, each with its gate open and cached, so each route meets the outage first itself (after a
    // failure an app backs the node off: api/chain/backoff.ts).
    const warms = new Map(V1_PATHS.map((path) => [path, d.app()]));
    for (const warm of warms.values()) expect((await get(warm, "/api/mcp/v1/preflight")).res.status).toBe(200);
    d.proxy.setFault({ kind: "down" });
    try {
      const seen = new Set<string>();
      for (const path of V1_PATHS) {
        for (const a of [d.app(), warms.get(path)!, cold]) {
          const { res, body } = await get(a, exampleUrl(path));
          seen.add(`${res.status} ${body.error ?? "ok"}`);
          expectDocumented(path, res.status, body);
        }
      }
      // Each failure mode showed up, so the assertions above were about failures, not successes only.
      for (const s of [
        "502 STATE_READ_FAILED",
        "502 PREFLIGHT_READ_FAILED",
        "502 QUOTE_FAILED",
        "200 ok",
        "503 UPSTREAM_UNAVAILABLE",
      ]) {
        expect([...seen]).toContain(s);
      }
      for (const path of ["/api/supply/total", "/api/supply/circulating"]) {
        const json = await get(cold, path);
        expect(json.res.status).toBe(502);
        expectDocumented(path, 502, json.body);
        const bare = await get(cold, `${path}?format=bare`);
        expect(bare.text).toBe("");
        expectDocumented(path, 502, bare.text, "text/plain");
        const header = v.operation(path).responses["502"]?.headers;
        expect(header).toHaveProperty("X-Supply-Error");
        expect(bare.res.headers.get("x-supply-error")).toBe(json.body.error);
      }
    } finally {
      d.proxy.setFault(null);
    }
  });

  it("genesis not finalized: every prepare route answers the documented 503, preflight says so", async () => {
    await d.setStatusBitmask(0x7ffn);
    try {
      const closed = d.app();
      for (const path of PREPARE_PATHS) {
        const { res, body } = await get(closed, exampleUrl(path));
        expect(res.status, path).toBe(503);
        expect(body.error).toBe("GENESIS_NOT_FINALIZED");
        expectDocumented(path, 503, body);
      }
      const { body } = await get(closed, "/api/mcp/v1/preflight");
      expect(body.finalized).toBe(false);
      expectDocumented("/api/mcp/v1/preflight", 200, body);
    } finally {
      await d.setStatusBitmask(DEVNET_STATUS_BITMASK);
    }
  });

  it("over budget: the documented 429 with Retry-After", async () => {
    const limited = d.app({ config: { ...d.config, rateLimit: { max: 1, windowSec: 60 } } });
    for (const path of ["/api/mcp/v1/preflight", "/api/mcp/v1/prepare/withdraw-lp"]) {
      expect((await get(limited, path)).res.status).toBe(200);
      const { res, body } = await get(limited, path);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expectDocumented(path, 429, body);
      expect(Object.keys(v.operation(path).responses["429"]?.headers ?? {})).toContain("Retry-After");
    }
  });
});
