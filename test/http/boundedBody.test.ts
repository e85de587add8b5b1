/**
 * A client that starts a POST body and hangs up before the end of it (api/http/boundedBody.ts): not a failure of the
 * service — a debug line, no error-level log and no stack (issue 30). The real server, raw sockets, for both routes that
 * read a body (POST /graphql from Node's stream, POST /api/mcp through the web Request).
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiServer, startApiServer } from "../../api/server/server";
import { type CapturedLogs, platformApp } from "../support/platformApp";

let api: ApiServer;
let logs: CapturedLogs;

beforeAll(async () => {
  const platform = platformApp();
  logs = platform.logs;
  api = await startApiServer(platform.app, { port: 0, hostname: "127.0.0.1" });
});
afterAll(async () => {
  await api?.close(0);
});

/** Sends the head of a POST promising 1,000 bytes and 100 of them, then closes the connection. */
function abandon(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(api.port, "127.0.0.1", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n`,
      );
      socket.write(`{"query":"${"x".repeat(88)}`);
      setTimeout(() => socket.destroy(), 100);
    });
    socket.on("error", reject);
    socket.on("close", () => resolve());
  });
}

describe("an abandoned request body", () => {
  it.each(["/graphql", "/api/mcp"])("POST %s: a debug line, no error log, no stack", async (path) => {
    logs.lines.length = 0;
    await abandon(path);
    const by = performance.now() + 2_000;
    while (!logs.lines.some((l) => l.msg === "request body abandoned") && performance.now() < by)
      await new Promise((r) => setTimeout(r, 20));
    expect(logs.lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain("stack");
    expect(logs.lines.filter((l) => l.msg === "request body abandoned")).toMatchObject([{ level: "debug" }]);
  });
});
