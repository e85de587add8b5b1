import { describe, expect, it } from "vitest";
import { platformApp } from "../support/platformApp";

// Envelopes everywhere (design.md): 405 / 404 / 500 / 429 in the error envelope with CORS *, OPTIONS
// preflights 204, and an x-request-id on every response.

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Any path class a client can hit: v1 (limited and not), supply, metrics, unknown. */
const PATHS = [
  `/api/mcp/v1/state/${USER}`,
  "/api/mcp/v1/preflight",
  "/api/mcp/v1/quote/lock-via-furnace",
  "/api/mcp/v1/prepare/collect-all",
  "/api/mcp/v1/openapi.json",
  "/api/supply/total",
  "/api/supply/circulating",
  "/api/supply/max?format=bare",
  "/api/metrics",
  "/",
  "/no/such/path",
];

function expectCors(res: Response) {
  expect(res.headers.get("access-control-allow-origin")).toBe("*");
}

describe("error envelopes", () => {
  it.each(["POST", "PUT", "PATCH", "DELETE"])(
    "%s on every path → 405 METHOD_NOT_ALLOWED envelope with CORS",
    async (method) => {
      const { request } = platformApp();
      for (const path of PATHS) {
        const res = await request(path, { method, body: method === "DELETE" ? undefined : "{}" });
        expect(res.status, `${method} ${path}`).toBe(405);
        expectCors(res);
        expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
        expect(res.headers.get("x-request-id")).toMatch(UUID);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(res.headers.get("ratelimit")).toBeNull(); // refused before any budget is spent
        expect(await res.json()).toEqual({
          ok: false,
          error: "METHOD_NOT_ALLOWED",
          message: `Method ${method} is not allowed; use GET or HEAD.`,
          detail: { allowed: ["GET", "HEAD", "OPTIONS"] },
        });
      }
    },
  );

  it.each([
    "/no/such/path",
    "/api",
    "/api/mcp/v1",
    "/api/mcp/v1/no-such-route",
    "/api/mcp/v2/state/x",
    "/api/supply/nope",
    "/api/mcp/v1/prepare/no-such-action",
  ])("GET %s → 404 NOT_FOUND envelope with CORS", async (path) => {
    const { request } = platformApp();
    const res = await request(path);
    expect(res.status).toBe(404);
    expectCors(res);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-request-id")).toMatch(UUID);
    expect(await res.json()).toMatchObject({ ok: false, error: "NOT_FOUND", message: expect.any(String) });
  });

  it("an unexpected failure → 500 INTERNAL_ERROR with no internals in the body; the cause goes to the log, scrubbed", async () => {
    const { app, request, logs } = platformApp();
    const secret = "https://base-mainnet.example.com/v2/TOPSECRETKEY";
    app.get("/api/test/boom", () => {
      throw new TypeError(`cannot read balances via ${secret} for ${USER}`);
    });
    app.get("/api/test/boom-async", async () => {
      await Promise.resolve();
      throw Object.assign(new Error("pg: relation lock does not exist"), { code: "42P01" });
    });
    app.get("/api/test/throw-string", () => {
      throw "a string, not an Error";
    });
    for (const path of ["/api/test/boom", "/api/test/boom-async", "/api/test/throw-string"]) {
      const res = await request(path, { headers: { "x-request-id": "trace-500" } });
      expect(res.status, path).toBe(500);
      expectCors(res);
      expect(res.headers.get("x-request-id")).toBe("trace-500");
      expect(res.headers.get("cache-control")).toBe("no-store");
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ ok: false, error: "INTERNAL_ERROR", message: "Internal error." });
      for (const leak of ["TOPSECRETKEY", "balances", "TypeError", "pg:", "relation", "string", " at ", ".ts"]) {
        expect(text).not.toContain(leak);
      }
    }
    const errors = logs.lines.filter((l) => l.level === "error");
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({ msg: "unhandled error", requestId: "trace-500", error: { name: "TypeError" } });
    const raw = logs.raw.join("\n");
    expect(raw).toContain("https://base-mainnet.example.com/***");
    expect(raw).not.toContain("TOPSECRETKEY");
    expect(raw).not.toContain(USER);
    const requests = logs.lines.filter((l) => l.msg === "request");
    expect(requests.map((l) => [l.status, l.error])).toEqual(Array(3).fill([500, "INTERNAL_ERROR"]));
  });

  it("OPTIONS preflights answer 204 with the CORS headers on every path, and spend no budget", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "2" } });
    for (const path of PATHS) {
      for (let i = 0; i < 3; i++) {
        const res = await request(path, {
          method: "OPTIONS",
          headers: { origin: "https://chat.example", "access-control-request-method": "GET" },
        });
        expect(res.status, path).toBe(204);
        expect(await res.text()).toBe("");
        expectCors(res);
        expect(res.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
        // `*` covers every header but Authorization, which the Fetch standard requires named.
        expect(res.headers.get("access-control-allow-headers")).toBe("*, authorization");
        expect(res.headers.get("access-control-max-age")).toBe("86400");
        expect(res.headers.get("x-request-id")).toMatch(UUID);
      }
    }
    // The budget of 2 is still whole after nine preflights of a limited path.
    expect((await request("/api/mcp/v1/preflight")).headers.get("ratelimit")).toMatch(/^"preflight";r=1;/);
  });
});

describe("x-request-id", () => {
  const VALID = ["abc", "trace-1234_ABCD.ef:99", "a".repeat(128), "550e8400-e29b-41d4-a716-446655440000"];
  const INVALID = ["", " ", "has space", "a".repeat(129), "semi;colon", 'quote"d', "tab\there", "ünïcode", "<script>"];

  /** Every kind of response the app can give: 200, 204, 400, 404, 405, 429, 500, plain text. */
  async function everyKind(headers: Record<string, string>) {
    const { app, request } = platformApp({ env: { RATE_LIMIT_MAX: "1" } });
    app.get("/api/test/boom", () => {
      throw new Error("x");
    });
    return [
      await request("/api/supply/max", { headers }),
      await request("/api/supply/max?format=bare", { headers }),
      await request("/api/mcp/v1/state/0xbad", { headers }),
      await request("/api/mcp/v1/state/0xbad", { headers }), // 429 now
      await request("/nope", { headers }),
      await request("/api/supply/max", { method: "POST", headers }),
      await request("/api/supply/max", { method: "OPTIONS", headers }),
      await request("/api/test/boom", { headers }),
      await request("/api/metrics", { headers }),
    ];
  }

  it("covers 200, 204, 400, 404, 405, 429 and 500", async () => {
    const statuses = (await everyKind({})).map((r) => r.status);
    expect(statuses).toEqual([200, 200, 400, 429, 404, 405, 204, 500, 200]);
  });

  it.each(VALID)("echoes a valid incoming id (%s) on every response", async (id) => {
    for (const res of await everyKind({ "x-request-id": id })) expect(res.headers.get("x-request-id")).toBe(id);
  });

  it.each(INVALID)("replaces an invalid incoming id (%j) with a fresh UUID", async (id) => {
    let headers: Record<string, string> = { "x-request-id": id };
    try {
      new Headers(headers);
    } catch {
      headers = {}; // not even a legal header value; nothing to echo
    }
    const ids = (await everyKind(headers)).map((r) => r.headers.get("x-request-id"));
    for (const got of ids) expect(got).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
