import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { describe, expect, it } from "vitest";
import { burst, platformApp } from "../support/platformApp";
import { sendRaw } from "../support/rawHttp";

// The in-memory limiter wired by createApp in front of the real v1 router (docs/api.md#errors-rate-limits-deadlines).

const USER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const PATHS = {
  state: `/api/mcp/v1/state/${USER}`,
  preflight: "/api/mcp/v1/preflight",
  quote: `/api/mcp/v1/quote/lock-via-furnace?user=${USER}&claimAmountWei=1&durationSeconds=604800`,
  prepare: "/api/mcp/v1/prepare/collect-all",
} as const;

describe("rate limit (in-memory)", () => {
  it("admits exactly 300 of 1,000 concurrent requests per prefix from one client; the rest are 429 with the headers", async () => {
    const { request } = platformApp();
    const prefixes = Object.keys(PATHS) as (keyof typeof PATHS)[];
    // All four floods at once, interleaved, so the buckets must stay separate under concurrency.
    const results = await Promise.all(prefixes.map((p) => burst(1000, () => request(PATHS[p]))));
    for (const [i, prefix] of prefixes.entries()) {
      const { responses, limited, admitted } = results[i]!;
      expect(admitted, prefix).toBe(300);
      expect(limited).toHaveLength(700);
      // Every admitted response saw a distinct `remaining`: 299 … 0 (the count is exact).
      const remaining = responses
        .filter((r) => r.status !== 429)
        .map((r) => Number(/;r=(\d+);/.exec(r.headers.get("ratelimit") ?? "")?.[1]))
        .sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 300 }, (_, k) => k));
      for (const r of responses) {
        expect(r.headers.get("ratelimit-policy")).toBe(`"${prefix}";q=300;w=60`);
        expect(r.headers.get("ratelimit")).toMatch(new RegExp(`^"${prefix}";r=\\d+;t=(60|5\\d)$`));
        expect(r.headers.get("access-control-allow-origin")).toBe("*");
        expect(r.headers.get("x-request-id")).toBeTruthy();
      }
      const body = await limited[0]!.json();
      expect(body).toEqual({
        ok: false,
        error: "RATE_LIMITED",
        message: expect.stringContaining("retry after"),
        retryAfterSec: expect.any(Number),
      });
      expect(body.retryAfterSec).toBeGreaterThanOrEqual(50);
      expect(body.retryAfterSec).toBeLessThanOrEqual(60);
      expect(limited[0]!.headers.get("retry-after")).toBe(String(body.retryAfterSec));
      expect(limited[0]!.headers.get("ratelimit")).toBe(`"${prefix}";r=0;t=${body.retryAfterSec}`);
      expect(limited[0]!.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("keeps one client's exhaustion away from every other client", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "5" } });
    const flood = await burst(20, () => request(PATHS.preflight, { peer: "198.51.100.1" }));
    expect(flood.admitted).toBe(5);
    const other = await request(PATHS.preflight, { peer: "198.51.100.2" });
    expect(other.status).not.toBe(429);
    expect(other.headers.get("ratelimit")).toBe('"preflight";r=4;t=60');
  });

  it("limits the real handlers' error answers too (a BAD_PARAMS still spends budget and carries the headers)", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "2" } });
    const a = await request("/api/mcp/v1/state/0xnot-an-address");
    expect(a.status).toBe(400);
    expect((await a.json()).error).toBe("BAD_PARAMS");
    expect(a.headers.get("ratelimit")).toBe('"state";r=1;t=60');
    await request("/api/mcp/v1/state/0xnot-an-address");
    const c = await request(PATHS.state);
    expect(c.status).toBe(429);
    // An unknown action under prepare/ is counted too (no free probing), and still answers 429 once spent.
    const { request: r2 } = platformApp({ env: { RATE_LIMIT_MAX: "1" } });
    expect((await r2("/api/mcp/v1/prepare/no-such-action")).status).toBe(404);
    expect((await r2("/api/mcp/v1/prepare/no-such-action")).status).toBe(429);
  });

  it("never limits the supply routes, the metrics or unknown paths", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "3" } });
    for (const path of ["/api/supply/max", "/api/supply/total?format=bare", "/api/metrics", "/nope", "/api/mcp/v1/x"]) {
      const { byStatus, responses } = await burst(50, () => request(path));
      expect(byStatus.get(429) ?? 0, path).toBe(0);
      for (const r of responses) expect(r.headers.get("ratelimit"), path).toBeNull();
    }
  });

  it("does not sell a new budget for a spoofed X-Forwarded-For from an untrusted peer", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "10" } });
    const peer = "198.51.100.20";
    const { admitted } = await burst(200, (i) =>
      request(PATHS.quote, { peer, headers: { "x-forwarded-for": `10.${i >> 8}.${i & 255}.1` } }),
    );
    expect(admitted).toBe(10);
  });

  it("separates the clients behind a trusted proxy, by the right-most untrusted hop", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "10", TRUSTED_PROXIES: "10.0.0.5,192.168.0.0/16" } });
    const proxy = "::ffff:10.0.0.5"; // how a dual-stack socket reports an IPv4 peer
    const via = (xff: string) => request(PATHS.preflight, { peer: proxy, headers: { "x-forwarded-for": xff } });
    const a = await burst(30, () => via("198.51.100.1"));
    expect(a.admitted).toBe(10);
    const b = await burst(30, () => via("198.51.100.2, 192.168.7.7"));
    expect(b.admitted).toBe(10);
    // Prepending a fake hop does not help client A: the right-most untrusted hop is still A.
    const spoof = await burst(30, (i) => via(`6.6.${i}.6, 198.51.100.1`));
    expect(spoof.admitted).toBe(0);
    // The proxy's own requests (no header) are a client of their own.
    expect((await request(PATHS.preflight, { peer: proxy })).status).not.toBe(429);
  });

  it("counts an IPv6 client per /64", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "4" } });
    const { admitted } = await burst(20, (i) =>
      request(PATHS.preflight, { peer: `2001:db8:1:2::${(i + 1).toString(16)}` }),
    );
    expect(admitted).toBe(4);
    expect((await request(PATHS.preflight, { peer: "2001:db8:1:3::1" })).status).not.toBe(429);
  });

  it("puts requests whose peer is unknown into one shared budget", async () => {
    const { app } = platformApp({ env: { RATE_LIMIT_MAX: "3" } });
    const { admitted } = await burst(10, () => app.request(PATHS.preflight));
    expect(admitted).toBe(3);
  });

  it("takes the peer from an injected source when one is given", async () => {
    const { app } = platformApp({
      env: { RATE_LIMIT_MAX: "2" },
      peerAddress: (c) => c.req.header("x-test-peer"),
    });
    const as = (peer: string) => app.request(PATHS.preflight, { headers: { "x-test-peer": peer } });
    expect((await burst(5, () => as("198.51.100.8"))).admitted).toBe(2);
    expect((await as("198.51.100.9")).status).not.toBe(429);
  });

  it("honours RATE_LIMIT_MAX / RATE_LIMIT_WINDOW_SEC and opens a new window after it", async () => {
    const { request } = platformApp({ env: { RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_SEC: "1" } });
    const first = await burst(5, () => request(PATHS.preflight));
    expect(first.admitted).toBe(3);
    expect(first.limited[0]!.headers.get("retry-after")).toBe("1");
    expect(first.limited[0]!.headers.get("ratelimit-policy")).toBe('"preflight";q=3;w=1');
    await new Promise((r) => setTimeout(r, 1_050));
    expect((await burst(5, () => request(PATHS.preflight))).admitted).toBe(3);
  });

  it("reads the socket peer over a real HTTP server (the @hono/node-server adapter Ponder uses)", async () => {
    const { app, logs } = platformApp({ env: { RATE_LIMIT_MAX: "3" } });
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    const { port } = server.address() as AddressInfo;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`http://127.0.0.1:${port}${PATHS.preflight}`, {
          headers: { "x-forwarded-for": `198.51.100.${i}` },
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 429)).toHaveLength(3);
      const requestLines = logs.lines.filter((l) => l.msg === "request");
      expect(requestLines.map((l) => l.clientIp)).toEqual(Array(6).fill("127.0.0.0"));
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("reads X-Forwarded-For from Node's parsed headers behind a trusted proxy, a repeated field joined as Headers joins it", async () => {
    const { app, logs } = platformApp({ env: { RATE_LIMIT_MAX: "2", TRUSTED_PROXIES: "127.0.0.1" } });
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => server.once("listening", r));
    const { port } = server.address() as AddressInfo;
    const get = (xff: string[]) =>
      sendRaw(`http://127.0.0.1:${port}${PATHS.preflight}`, "GET", { "x-forwarded-for": xff }).then((r) => r.status);
    try {
      // Two budgets of 2: one client's three requests, then another's (sent as two header lines: the right-most hop).
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await get(["198.51.100.1"]));
      for (let i = 0; i < 3; i++) statuses.push(await get(["6.6.6.6", "198.51.100.2"]));
      expect(statuses.map((s) => s === 429)).toEqual([false, false, true, false, false, true]);
      const clients = logs.lines.filter((l) => l.msg === "request").map((l) => l.clientIp);
      expect(clients).toEqual([...Array(3).fill("198.51.100.0"), ...Array(3).fill("198.51.100.0")]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
