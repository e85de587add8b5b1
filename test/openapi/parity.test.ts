import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { PARAM_PATTERNS } from "../../api/http/params";
import { ACTION_NAMES } from "../../api/mcp/v1/prepare";
import { createLogger } from "../../api/observability/logger";
import { docsPage } from "../../api/openapi/docsPage";
import { buildOpenApiDocument, type OpenApiDocument } from "../../api/openapi/document";
import { ADDRESS_PATTERN, BOOL_PATTERN, CURSOR_PATTERN, UINT256_PATTERN } from "../../api/route/jsonSchema";
import { INFRASTRUCTURE_ROUTES, OPERATIONS } from "../../api/routes";
import { packageVersion } from "../../api/sourceStamp.mjs";
import { type DocOperation, openApiValidator } from "../support/openApiValidator";
import { REPO_ROOT } from "../support/ponder";

// Spec §9: the routes documented in the plugin spec equal the routes served. The served side is read
// from the app itself (Hono's route table), never from the catalogue the document is built from.

const app = createApp({ config: loadConfig({ NETWORK: "base" }), rpc: null, logger: createLogger({ level: "error" }) });
let doc: OpenApiDocument;

beforeAll(async () => {
  const res = await app.request("/api/mcp/v1/openapi.json");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
  doc = await res.json();
});

/** `:name` → `{name}`: Hono's parameters in OpenAPI's form. */
const normalise = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

/** The served routes: Hono's table without use() middleware (method ALL on a path ending in *). */
function servedRoutes() {
  return app.routes
    .filter((r) => !(r.method === "ALL" && r.path.endsWith("*")))
    .map((r) => ({ method: r.method, path: normalise(r.path) }));
}

const segments = (p: string) => p.split("/");
/** A served template covers a documented path when every segment is equal or a template parameter. */
function covers(template: string, path: string): boolean {
  const t = segments(template);
  const p = segments(path);
  return t.length === p.length && t.every((s, i) => s === p[i] || /^\{[^}]+\}$/.test(s));
}

describe("documented routes equal served routes", () => {
  it("serves every infrastructure route the document leaves out, and documents none of them", () => {
    const served = servedRoutes();
    for (const r of INFRASTRUCTURE_ROUTES) {
      expect(served, `${r.method} ${r.path}`).toContainEqual({ method: r.method, path: r.path });
      expect(doc.paths[r.path]).toBeUndefined();
    }
  });

  it("every served API route is documented, and every documented route is served by exactly one route", () => {
    const infrastructure = new Set(INFRASTRUCTURE_ROUTES.map((r) => `${r.method} ${r.path}`));
    const served = servedRoutes().filter((r) => !infrastructure.has(`${r.method} ${r.path}`));
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })),
    );
    expect(documented.length).toBe(34);
    // Where two templates cover a path, the one with more literal segments serves it and must be the only one that
    // specific. (The ve board's paths are served by /leaderboards/{board} and /leaderboards/{board}/{address}, whose
    // handler answers "ve" with the ve board's own: api/index/router.ts, test/http/routing.test.ts.)
    const literal = (p: string) => segments(p).filter((s) => !/^\{[^}]+\}$/.test(s)).length;
    for (const d of documented) {
      const by = served.filter((s) => s.method === d.method && covers(s.path, d.path));
      const best = Math.max(...by.map((s) => literal(s.path)));
      expect(
        by.filter((s) => literal(s.path) === best),
        `${d.method} ${d.path}`,
      ).toHaveLength(1);
    }
    for (const s of served) {
      expect(
        documented.some((d) => d.method === s.method && covers(s.path, d.path)),
        `${s.method} ${s.path} is served but not documented`,
      ).toBe(true);
    }
    // Exact for every route whose parameters are documented as parameters.
    const exact = served.filter((s) => documented.some((d) => d.path === s.path));
    expect(exact.map((s) => s.path).sort()).toEqual(
      [
        "/api/supply/total",
        "/api/supply/circulating",
        "/api/supply/max",
        "/api/mcp/v1/state/{address}",
        "/api/mcp/v1/preflight",
        "/api/mcp/v1/quote/lock-via-furnace",
        "/api/index/v1/locks/{tokenId}",
        "/api/index/v1/locks/{tokenId}/events",
        "/api/index/v1/accounts/{address}/events",
        "/api/index/v1/accounts/{address}/locks",
        "/api/index/v1/leaderboards/{board}",
        "/api/index/v1/leaderboards/{board}/{address}",
        "/api/index/v1/stats",
        "/api/index/v1/activity",
        "/api/index/v1/activity/{id}",
        "/api/index/v1/webhooks",
        "/api/index/v1/webhooks",
        "/api/index/v1/webhooks/deliveries",
        "/api/index/v1/webhooks/{id}",
        "/api/index/v1/webhooks/{id}/replay",
        "/api/index/v1/accounts/{address}",
        "/api/index/v1/stream",
      ].sort(),
    );
  });

  it("each operation names as servedBy the Hono pattern that serves it", () => {
    const patterns = new Set(app.routes.filter((r) => r.method === "GET" || r.method === "POST").map((r) => r.path));
    for (const op of OPERATIONS) expect(patterns.has(op.servedBy), `${op.path}: ${op.servedBy}`).toBe(true);
  });

  it("/prepare/{action} serves exactly the documented actions: each answers, an undocumented one is 404", async () => {
    const documentedActions = Object.keys(doc.paths)
      .filter((p) => p.startsWith("/api/mcp/v1/prepare/"))
      .map((p) => p.slice("/api/mcp/v1/prepare/".length));
    expect(documentedActions.sort()).toEqual([...ACTION_NAMES].sort());
    for (const action of documentedActions) {
      // No RPC here: the gate fails closed (502), which is the route answering, not a 404.
      const res = await app.request(`/api/mcp/v1/prepare/${action}`);
      expect(res.status, action).toBe(502);
      expect((await res.json()).error).toBe("PREFLIGHT_READ_FAILED");
    }
    for (const other of ["claim", "claim-all", "collect", "prepare", "withdraw"]) {
      const res = await app.request(`/api/mcp/v1/prepare/${other}`);
      expect(res.status, other).toBe(404);
      expect((await res.json()).error).toBe("NOT_FOUND");
    }
  });
});

describe("the document", () => {
  /** The public reads (GETs); the operators' webhook routes (POST, GET, DELETE behind a token) are checked apart. */
  const ops = () =>
    Object.entries(doc.paths)
      .filter(([path]) => !path.startsWith("/api/index/v1/webhooks"))
      .map(([path, item]) => [path, item.get as unknown as DocOperation] as const);
  const allOperations = () =>
    Object.values(doc.paths).flatMap((item) => Object.values(item) as unknown as DocOperation[]);

  it("is OpenAPI 3.1 with unique operation ids", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe(packageVersion(REPO_ROOT)); // the release, as /health says (test/buildInfo.test.ts)
    const ids = allOperations().map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("documents the index operations' conditional GET: 304 beside the 200, both with ETag and Cache-Control", () => {
    // The event stream has no ETag: each event names its block (api/index/stream.ts).
    const index = ops().filter(([path]) => path.startsWith("/api/index/v1/") && !path.endsWith("/stream"));
    expect(index.length).toBeGreaterThanOrEqual(7);
    for (const [path, op] of index) {
      const responses = (op as unknown as { responses: Record<string, { headers?: Record<string, unknown> }> })
        .responses;
      for (const status of ["200", "304"])
        expect(Object.keys(responses[status]?.headers ?? {}), `${path} ${status}`).toEqual(
          expect.arrayContaining(["ETag", "Cache-Control"]),
        );
    }
    const others = ops().filter(([path]) => !path.startsWith("/api/index/v1/"));
    for (const [path, op] of others)
      expect((op as unknown as { responses: object }).responses, path).not.toHaveProperty("304");
  });

  it("documents every parameter with its strict form: patterns for address, uint256, bool and cursor", () => {
    const patterns = new Set<string>();
    for (const [path, op] of ops()) {
      for (const p of op.parameters) {
        // The stream's topics repeat (?lock=1&lock=2): arrays of the same strict strings.
        const schema = (p.schema.type === "array" && path.endsWith("/stream") ? p.schema.items : p.schema) as {
          type?: unknown;
        };
        expect(schema.type, `${path} ${p.name}`).toBe("string");
        if (p.in === "path") {
          expect(path).toContain(`{${p.name}}`);
          expect(p.required).toBe(true);
        }
        if (typeof p.schema.pattern === "string") patterns.add(p.schema.pattern);
      }
      for (const name of path.match(/\{([^}]+)\}/g) ?? []) {
        expect(op.parameters.map((p) => `{${p.name}}`)).toContain(name);
      }
    }
    expect([...patterns].sort()).toEqual(
      [
        ADDRESS_PATTERN,
        BOOL_PATTERN,
        UINT256_PATTERN,
        CURSOR_PATTERN,
        PARAM_PATTERNS.board,
        PARAM_PATTERNS.window,
        PARAM_PATTERNS.kinds,
        PARAM_PATTERNS.eventId,
      ].sort(),
    );
    const quote = ops().find(([p]) => p === "/api/mcp/v1/quote/lock-via-furnace")![1];
    expect(quote.parameters.map((p) => [p.name, p.required, p.schema.pattern])).toEqual([
      ["user", true, ADDRESS_PATTERN],
      // one of the two amounts: tokens, or ETH the Furnace swaps (quoteEnterWithEth)
      ["claimAmountWei", false, UINT256_PATTERN],
      ["targetTokenId", false, UINT256_PATTERN],
      ["durationSeconds", false, UINT256_PATTERN],
      ["createAutoMax", false, BOOL_PATTERN],
      ["slippageBps", false, UINT256_PATTERN],
      ["ethAmountWei", false, UINT256_PATTERN],
    ]);
  });

  it("gives each prepare action the user-facing verb of spec §4.3", () => {
    // The spec's table, restated here so the test does not read the verbs from the code it checks.
    const SPEC_VERBS: Record<string, string> = {
      "collect-all": "Collect",
      "collect-royalties": "Collect",
      "harvest-rewards": "Harvest",
      "withdraw-lp": "Withdraw",
      "lock-via-furnace": "Lock via Furnace",
      "stake-lp": "Stake",
      "unbond-lp": "Unbond",
      lock: "Lock",
      topup: "Top up",
      extend: "Extend",
    };
    for (const [action, verb] of Object.entries(SPEC_VERBS)) {
      const op = doc.paths[`/api/mcp/v1/prepare/${action}`]?.get as unknown as DocOperation;
      expect(op["x-user-facing-verb"], action).toBe(verb);
      expect(op.summary.startsWith(verb), action).toBe(true);
      expect(op.description).toContain(`"${verb}"`);
    }
  });

  it("never uses claim as a verb in any summary or description", () => {
    const prose: string[] = [String(doc.info.description)];
    const walk = (node: unknown, key = "") => {
      if (typeof node === "string" && (key === "description" || key === "summary")) prose.push(node);
      else if (Array.isArray(node)) for (const n of node) walk(n);
      else if (node && typeof node === "object") for (const [k, v] of Object.entries(node)) walk(v, k);
    };
    walk(doc);
    expect(prose.length).toBeGreaterThan(100);
    // Code spans (`claim*`) and identifiers (claimAmountWei, claimAll) are on-chain names, not narration;
    // the rule itself quotes the word.
    const narration = (s: string) => s.replace(/`[^`]*`/g, "").replace(/never use "claim" as a verb/gi, "");
    const offending = prose.filter((s) => /\bclaim(s|ed|ing)?\b/i.test(narration(s)));
    expect(offending).toEqual([]);
  });

  it("lists, for every route, the error codes it can answer, each with a valid example", () => {
    const v = openApiValidator(doc);
    const codesOf = (path: string) =>
      Object.entries(v.operation(path).responses)
        .filter(([status]) => status !== "200")
        .flatMap(([, r]) => Object.keys(r.content?.["application/json"]?.examples ?? {}));
    expect(codesOf("/api/mcp/v1/prepare/lock-via-furnace").sort()).toEqual(
      [
        "BAD_PARAMS",
        "CHAIN_UNREADY",
        "GENESIS_NOT_FINALIZED",
        "INTERNAL_ERROR",
        "LOCK_LIMIT_REACHED",
        "PREFLIGHT_READ_FAILED",
        "QUOTE_FAILED",
        "RATE_LIMITED",
        "SIMULATION_REVERTED",
        "SIMULATION_UNAVAILABLE",
        "STATE_READ_FAILED",
        "UPSTREAM_UNAVAILABLE",
      ].sort(),
    );
    expect(codesOf("/api/mcp/v1/state/{address}").sort()).toEqual(
      [
        "BAD_PARAMS",
        "CHAIN_UNREADY",
        "INDEX_BEHIND",
        "INTERNAL_ERROR",
        "RATE_LIMITED",
        "STATE_READ_FAILED",
        "UPSTREAM_UNAVAILABLE",
      ].sort(),
    );
    // Every index operation takes minBlock and waitMs (api/index/query.ts AT_PARAMS), so each documents its 409 with
    // Retry-After: a route added without them fails here.
    // (The stream is not an answer at a block: it follows the head from Last-Event-ID.)
    const indexOps = ops().filter(([path]) => path.startsWith("/api/index/v1/") && path !== "/api/index/v1/stream");
    expect(indexOps.length).toBeGreaterThan(0);
    for (const [path, op] of indexOps) {
      expect(codesOf(path), path).toContain("INDEX_BEHIND");
      expect(Object.keys(op.responses["409"]?.headers ?? {}), path).toContain("Retry-After");
      const names = (op.parameters ?? []).map((p: { name: string }) => p.name);
      expect(names, path).toEqual(expect.arrayContaining(["block", "minBlock", "waitMs"]));
    }
    // Supply is never rate-limited (spec §8) and has its own codes; max reads nothing and has none (any format is an
    // answer: spec §4.1).
    expect(codesOf("/api/supply/max")).toEqual([]);
    expect(codesOf("/api/supply/circulating")).toContain("SUPPLY_INCONSISTENT");
    for (const [path, op] of ops()) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          const examples = v.examplesOf(media);
          expect(examples.length, `${path} ${status} ${type}`).toBeGreaterThan(0);
          for (const example of examples) expect(v.check(media.schema, example), `${path} ${status}`).toBeNull();
        }
      }
    }
  });

  it("is served byte-identical to what the generator builds", async () => {
    expect(JSON.stringify(doc)).toBe(JSON.stringify(await buildOpenApiDocument()));
  });
});

describe("/docs", () => {
  it("serves an HTML reference over the document, listing every route, with nothing from a third party", async () => {
    const res = await app.request("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('"/api/mcp/v1/openapi.json"');
    expect(html).toMatch(/<script src="\/docs\/assets\/scalar\.[\w-]{16}\.js"><\/script>/);
    expect(html).toMatch(/<script src="\/docs\/assets\/docs-init\.[\w-]{16}\.js" data-spec-url="[^"]+"><\/script>/);
    // No script, stylesheet, font or image from another origin: the page works offline.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.headers.get("content-security-policy")).toMatch(/^default-src 'self'; script-src 'self';/);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) expect(html).toContain(`${method.toUpperCase()} ${path}`);
    }
    expect(html).toContain("Lock via Furnace");
  });

  it("serves the reference UI from the pinned npm package, at the hashed path the page names", async () => {
    const html = await (await app.request("/docs")).text();
    const src = html.match(/<script src="(\/docs\/assets\/scalar\.[^"]+)">/)![1]!;
    const res = await app.request(src);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/javascript/);
    const js = await res.text();
    expect(js.length).toBeGreaterThan(1_000_000);
    expect(js).toContain("createApiReference");
  });

  it("escapes text as HTML: the title and a verb with a space are not percent-encoded, markup is inert", () => {
    const page = docsPage(
      {
        ...doc,
        info: { ...doc.info, title: 'Asset API <b>&</b> "v1"' },
        paths: { "/x": { get: { summary: "s", "x-user-facing-verb": "Lock via Furnace <i>", "x-mcp-tool": "t" } } },
      } as unknown as OpenApiDocument,
      "/spec.json",
      null,
    );
    expect(page).toContain("<title>Asset API &lt;b&gt;&amp;&lt;/b&gt; &quot;v1&quot;</title>");
    expect(page).toContain("<td>Lock via Furnace &lt;i&gt;</td>");
    expect(page).not.toContain("%20");
  });
});
