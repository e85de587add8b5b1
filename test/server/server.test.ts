/**
 * The server's timeouts fire when documented (docs/operations.md: headers within 10 s), not when Node next looks:
 * Node checks for connections past them every `connectionsCheckingInterval` (30 s by default, which let a slow
 * header's 408 come at 26 s), and SERVER_LIMITS sets that interval. The real server (api/server/server.ts), raw
 * sockets.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, SERVER_LIMITS, startApiServer } from "../../api/server/server";
import { platformApp } from "../support/platformApp";

let api: ApiServer;

beforeAll(async () => {
  api = await startApiServer(platformApp().app, { port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await api?.close(0);
});

/** Sends `bytes` and waits for the server to close: how long after connecting, and what it answered. */
function untilClosed(bytes: string): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let answer = "";
    const socket = connect(api.port, "127.0.0.1", () => {
      if (bytes) socket.write(bytes);
    });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve({ ms: performance.now() - started, answer }));
  });
}

describe("the server's timeouts", () => {
  it("checks for late connections every 500 ms, well inside the 1 s the documented timeouts allow", () => {
    expect(SERVER_LIMITS.connectionsCheckingIntervalMs).toBeLessThanOrEqual(1_000);
    expect((api.server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval).toBe(
      SERVER_LIMITS.connectionsCheckingIntervalMs,
    );
  });

  it("a socket that sends half a header, or nothing, is answered 408 and closed between 10 s and 11 s", async () => {
    const [half, idle] = await Promise.all([
      untilClosed("GET /health HTTP/1.1\r\nhost: x\r\nx-slow:"),
      untilClosed(""),
    ]);
    for (const { ms } of [half, idle]) {
      expect(ms).toBeGreaterThanOrEqual(SERVER_LIMITS.headersTimeoutMs);
      expect(ms).toBeLessThan(SERVER_LIMITS.headersTimeoutMs + 1_000);
    }
    expect(half.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(half.answer).toContain('"REQUEST_TIMEOUT"');
    console.log(`half a header closed at ${Math.round(half.ms)} ms, nothing sent at ${Math.round(idle.ms)} ms`);
  }, 15_000);
});
