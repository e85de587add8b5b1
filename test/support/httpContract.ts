/**
 * The HTTP contract every process that serves the API must keep, checked over real sockets: registered
 * (with vitest's `it`) inside a describe of the caller, against `target()` once its beforeAll has started it.
 * Run against the production API process (test/server/main.test.ts) and the local stack `npm start` launches
 * (test/devnet/start.test.ts), so the two cannot drift apart.
 */
import { expect, it } from "vitest";
import { packageVersion } from "../../api/sourceStamp.mjs";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { REPO_ROOT } from "./ponder";
import { rawExchange } from "./rawHttp";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

/** Node-level rejects: requests Node's parser refuses before any route runs. */
export const NODE_REJECTS = [
  [
    "a URL over 16 KiB",
    431,
    "HEADERS_TOO_LARGE",
    `GET /api/supply/total?x=${"a".repeat(17_000)} HTTP/1.1\r\nhost: x\r\n\r\n`,
  ],
  [
    "a header flood",
    431,
    "HEADERS_TOO_LARGE",
    `GET / HTTP/1.1\r\nhost: x\r\n${"x-pad: aaaaaaaaaaaaaaaaaaaa\r\n".repeat(800)}\r\n`,
  ],
  ["a bad request line", 400, "BAD_REQUEST", "GARBAGE\r\n\r\n"],
  ["an unknown method", 400, "BAD_REQUEST", "FROB / HTTP/1.1\r\nhost: x\r\n\r\n"],
  [
    "Content-Length with Transfer-Encoding (smuggling)",
    400,
    "BAD_REQUEST",
    "POST /api/mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
  ],
  ["HTTP/1.1 without Host", 400, "BAD_REQUEST", "GET /health HTTP/1.1\r\n\r\n"],
  ["a bad Host", 400, "BAD_REQUEST", "GET /health HTTP/1.1\r\nhost: a b\r\n\r\n"],
  ["two Hosts", 400, "BAD_REQUEST", "GET /health HTTP/1.1\r\nhost: x\r\nhost: y\r\n\r\n"],
  ["the asterisk target", 400, "BAD_REQUEST", "OPTIONS * HTTP/1.1\r\nhost: x\r\n\r\n"],
  ["Expect: foo", 417, "EXPECTATION_FAILED", "GET /health HTTP/1.1\r\nhost: x\r\nexpect: foo\r\n\r\n"],
  ["CONNECT", 405, "METHOD_NOT_ALLOWED", "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n"],
] as const;

export function httpContract(target: () => string): void {
  it("probes: /health and /ready answer the documented bodies, uncached", async () => {
    const health = await fetch(`${target()}/health`);
    // The release: package.json's version (test/buildInfo.test.ts holds the other places that say it).
    expect([health.status, await health.json()]).toEqual([
      200,
      { ok: true, status: "up", version: packageVersion(REPO_ROOT) },
    ]);
    const ready = await fetch(`${target()}/ready`);
    expect([ready.status, await ready.json(), ready.headers.get("cache-control")]).toEqual([
      200,
      { ok: true, status: "ready" },
      "no-store",
    ]);
  });

  it("answers state from the index", async () => {
    const state = await (await fetch(`${target()}/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`)).json();
    expect(state.source).toBe("subgraph+rpc");
    expect(state.indexedBlock).toMatch(/^[0-9]+$/);
    expect(state.user.veLocks.length).toBeGreaterThan(0);
  });

  it("404 and 405 in the envelope, with CORS and the request id echoed (an invalid one replaced)", async () => {
    const notFound = await fetch(`${target()}/no/such`, { headers: { "x-request-id": "served-1" } });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("access-control-allow-origin")).toBe("*");
    expect(notFound.headers.get("x-request-id")).toBe("served-1");
    expect(await notFound.json()).toMatchObject({ ok: false, error: "NOT_FOUND" });

    const replaced = await fetch(`${target()}/api/supply/max`, { headers: { "x-request-id": "has space" } });
    expect(replaced.headers.get("x-request-id")).toMatch(UUID);

    const post = await fetch(`${target()}/api/supply/total`, { method: "POST" });
    expect([post.status, (await post.json()).error, post.headers.get("allow")]).toEqual([
      405,
      "METHOD_NOT_ALLOWED",
      "GET, HEAD, OPTIONS",
    ]);
    expect(post.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("Ponder's own endpoints are not served here (/status, /metrics are 404 envelopes); /graphql is ours", async () => {
    for (const path of ["/status", "/metrics"]) {
      const res = await fetch(`${target()}${path}`);
      expect([path, res.status, (await res.json()).error]).toEqual([path, 404, "NOT_FOUND"]);
    }
    const gql = await fetch(`${target()}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
    expect([gql.status, await gql.json()]).toEqual([200, { data: { __typename: "Query" } }]);
    expect(gql.headers.get("access-control-allow-origin")).toBe("*");
    expect(gql.headers.get("ratelimit-policy")).toMatch(/^"graphql";/);
    // A field with non-null types, run by the compiled executor (two copies of graphql-js in one process refuse it):
    // its data, or the index's absence said as such, never an internal error.
    const meta = await fetch(`${target()}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ _meta { chainId block } }" }),
    });
    const answer = (await meta.json()) as {
      data?: { _meta: { chainId: number; block: string } } | null;
      errors?: { extensions: { code: string } }[];
    };
    expect(meta.status).toBe(200);
    if (answer.errors) expect(answer.errors.map((e) => e.extensions.code)).toEqual(["INDEX_UNAVAILABLE"]);
    else expect(answer.data?._meta.block).toMatch(/^[0-9]+$/);
    const big = await fetch(`${target()}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ __typename }${" ".repeat(70_000)}` }),
    });
    expect([big.status, (await big.json()).error]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
  });

  it("a CORS preflight answers 204 with exactly the documented methods", async () => {
    const headers = { origin: "https://assistant.example", "access-control-request-method": "GET" };
    const preflight = await fetch(`${target()}/api/mcp/v1/preflight`, { method: "OPTIONS", headers });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("x-request-id")).toMatch(UUID);
    const mcp = await fetch(`${target()}/api/mcp`, { method: "OPTIONS", headers });
    expect(mcp.status).toBe(204);
    expect(mcp.headers.get("access-control-allow-methods")).toMatch(/POST/);
  });

  it("rate-limit headers on a limited prefix, none on supply", async () => {
    const limited = await fetch(`${target()}/api/mcp/v1/preflight`);
    expect(limited.headers.get("ratelimit-policy")).toBe('"preflight";q=300;w=60');
    expect(limited.headers.get("ratelimit")).toMatch(/^"preflight";r=[0-9]+;t=[0-9]+$/);
    const supply = await fetch(`${target()}/api/supply/max`);
    expect(supply.headers.get("ratelimit-policy")).toBeNull();
  });

  it("supply: exact bytes and headers, JSON and bare", async () => {
    const json = await fetch(`${target()}/api/supply/total`);
    expect(json.status).toBe(200);
    expect(json.headers.get("cache-control")).toBe("public, max-age=300");
    expect(await json.text()).toMatch(/^\{"result":"(0|[1-9][0-9]*)\.[0-9]{2}"\}$/);
    const bare = await fetch(`${target()}/api/supply/total?format=bare`);
    expect(bare.status).toBe(200);
    expect(bare.headers.get("content-type")).toBe("text/plain; charset=UTF-8");
    expect(bare.headers.get("cache-control")).toBe("public, max-age=300");
    expect(await bare.text()).toMatch(/^(0|[1-9][0-9]*)\.[0-9]{2}$/);
    const max = await fetch(`${target()}/api/supply/max?format=bare`);
    expect([await max.text(), max.headers.get("cache-control")]).toEqual(["null", "public, max-age=86400"]);
    // Spec §4.1: without format=bare, the JSON shape — a typo of it included.
    const typo = await fetch(`${target()}/api/supply/total?format=BARE`);
    expect(typo.status).toBe(200);
    expect((await typo.json()).result).toMatch(/^(0|[1-9][0-9]*)\.[0-9]{2}$/);
  });

  it("MCP tools/list, /docs served offline, metrics with duration histograms", async () => {
    const mcp = await fetch(`${target()}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(200);
    expect((await mcp.json()).result.tools.length).toBeGreaterThan(10);

    const docs = await fetch(`${target()}/docs`);
    const page = await docs.text();
    const script = page.match(/<script src="(\/docs\/assets\/scalar\.[\w-]+\.js)">/)?.[1];
    expect([docs.status, typeof script]).toEqual([200, "string"]);
    expect(docs.headers.get("content-security-policy")).toContain("script-src 'self';");
    expect(page).not.toMatch(/https?:\/\/(cdn\.|unpkg|jsdelivr)/);
    // A browser asks for br: the bundle travels compressed (fetch decodes it).
    const ui = await fetch(`${target()}${script}`, { headers: { "accept-encoding": "br, gzip" } });
    expect([ui.status, ui.headers.get("content-encoding"), ui.headers.get("cache-control")]).toEqual([
      200,
      "br",
      "public, max-age=31536000, immutable",
    ]);
    expect((await ui.text()).length).toBeGreaterThan(1_000_000);
    const metrics = await (await fetch(`${target()}/api/metrics`)).text();
    expect(metrics).toContain("api_http_request_duration_seconds_bucket");
    // prom-client's process metrics and the listener's open connections, read in this process.
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]\d*$/m);
    expect(metrics).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
    expect(metrics).toMatch(/^api_http_open_connections\{listener="api"\} [1-9]\d*$/m);
  });

  it.each(NODE_REJECTS)(
    "%s → %i %s in the envelope, with CORS and a request id",
    async (_name, status, code, bytes) => {
      const answer = await rawExchange(target(), bytes);
      expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect(answer.toLowerCase()).toContain("access-control-allow-origin: *");
      expect(answer.toLowerCase()).toMatch(/x-request-id: [0-9a-f-]{36}/);
      expect(envelopeOf(answer)).toMatchObject({ ok: false, error: code });
      // The server still serves.
      expect((await fetch(`${target()}/health`)).status).toBe(200);
    },
  );
}
