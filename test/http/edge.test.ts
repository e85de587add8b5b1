import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { platformApp } from "../support/platformApp";
import { sendRaw } from "../support/rawHttp";

// The same guarantees as envelopes.test.ts, but over a socket served by @hono/node-server (what Ponder
// serves with): there the edge reads x-request-id from the IncomingMessage's parsed headers and the
// supply routes write their headers as a plain object, two paths app.request() never takes.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let base: string;
let close: () => Promise<void>;
let logs: ReturnType<typeof platformApp>["logs"];
let metrics: ReturnType<typeof platformApp>["metrics"];

beforeAll(async () => {
  const p = platformApp();
  logs = p.logs;
  metrics = p.metrics;
  await new Promise<void>((ready) => {
    const server = serve({ fetch: p.app.fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
      base = `http://127.0.0.1:${info.port}`;
      close = () =>
        new Promise<void>((done) => {
          (server as unknown as { closeAllConnections(): void }).closeAllConnections();
          server.close(() => done());
        });
      ready();
    });
  });
});
afterAll(() => close?.());

const send = (path: string, method = "GET", headers: Record<string, string | string[]> = {}) =>
  sendRaw(`${base}${path}`, method, headers);

/** Supply hit (200), supply failure (502, no RPC), bare form, HEAD, 400, 404, 405, 204, metrics. */
const KINDS: [string, string, number][] = [
  ["GET", "/api/supply/max", 200],
  ["GET", "/api/supply/max?format=bare", 200],
  ["HEAD", "/api/supply/max", 200],
  ["GET", "/api/supply/circulating", 502],
  ["GET", "/api/supply/total?format=bare", 502],
  ["GET", "/api/supply/max?format=xml", 200],
  ["GET", "/api/mcp/v1/state/0xbad", 400],
  ["GET", "/no/such/path", 404],
  ["DELETE", "/api/supply/max", 405],
  ["OPTIONS", "/api/supply/circulating", 204],
  ["GET", "/api/metrics", 200],
];

describe("edge headers over @hono/node-server", () => {
  it("every kind of response carries CORS * and a fresh request id", async () => {
    const ids = new Set<string>();
    for (const [method, path, status] of KINDS) {
      const res = await send(path, method);
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers["access-control-allow-origin"], path).toBe("*");
      expect(res.headers["access-control-expose-headers"], path).toBe("*");
      expect(res.headers["x-request-id"], path).toMatch(UUID);
      ids.add(res.headers["x-request-id"] as string);
    }
    expect(ids.size).toBe(KINDS.length);
  });

  it("echoes a valid incoming id, replaces an invalid or repeated one", async () => {
    for (const [method, path] of KINDS) {
      expect((await send(path, method, { "x-request-id": "agg-42.a:b_c" })).headers["x-request-id"]).toBe(
        "agg-42.a:b_c",
      );
      expect((await send(path, method, { "x-request-id": "has space" })).headers["x-request-id"]).toMatch(UUID);
      // Sent twice, the header reads "a, b" (as WHATWG Headers would join it): not a plain id.
      expect((await send(path, method, { "x-request-id": ["a", "b"] })).headers["x-request-id"]).toMatch(UUID);
    }
  });

  it("a supply hit keeps its own headers, and is counted and logged (at debug) with its id", async () => {
    const before = metrics.httpRequests.get({ method: "GET", route: "/api/supply/max", status: "200" });
    const res = await send("/api/supply/max", "GET", { "x-request-id": "hit-1" });
    expect(res.body).toBe('{"result":null}');
    expect(res.headers["content-type"]).toBe("application/json; charset=UTF-8");
    expect(res.headers["cache-control"]).toBe("public, max-age=86400");
    expect(metrics.httpRequests.get({ method: "GET", route: "/api/supply/max", status: "200" })).toBe(before + 1);
    expect(logs.lines.find((l) => l.msg === "request" && l.requestId === "hit-1")).toMatchObject({
      level: "debug",
      route: "/api/supply/max",
      status: 200,
    });
    const failed = await send("/api/supply/circulating", "GET", { "x-request-id": "miss-1" });
    expect(failed.headers["x-supply-error"]).toBe("SUPPLY_NO_RPC_URL");
    expect(logs.lines.find((l) => l.msg === "request" && l.requestId === "miss-1")).toMatchObject({
      level: "info",
      status: 502,
    });
  });
});
