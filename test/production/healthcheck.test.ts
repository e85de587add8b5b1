import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/ponder";

// The image's HEALTHCHECK (scripts/healthcheck.mjs) reads HEALTHCHECK_PORT, else PORT, else 42069, and like the
// configuration takes an empty value as unset: `HEALTHCHECK_PORT=` from an env file asked port 80 and failed.

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(req.url === "/ready" ? 200 : 404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The script's exit status (spawned asynchronously: the server answering it runs in this process). */
const check = (env: Record<string, string>, args: string[] = []) => {
  const { HEALTHCHECK_PORT: _h, PORT: _p, ...rest } = process.env;
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "scripts", "healthcheck.mjs"), ...args], {
    env: { ...rest, ...env },
    stdio: "ignore",
  });
  return new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
};

describe("scripts/healthcheck.mjs", () => {
  it("asks HEALTHCHECK_PORT, else PORT; an empty or blank value counts as unset", async () => {
    expect(await check({ HEALTHCHECK_PORT: String(port) })).toBe(0);
    expect(await check({ PORT: String(port) })).toBe(0);
    expect(await check({ HEALTHCHECK_PORT: "", PORT: String(port) })).toBe(0);
    expect(await check({ HEALTHCHECK_PORT: " ", PORT: ` ${port} ` })).toBe(0);
  });

  it("is unhealthy when nothing answers 200 there", async () => {
    const other = createServer((_req, res) => res.writeHead(503).end());
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    const otherPort = (other.address() as AddressInfo).port;
    expect(await check({ HEALTHCHECK_PORT: String(otherPort), PORT: String(port) })).toBe(1);
    await new Promise<void>((r) => other.close(() => r()));
  });

  it("`/health` (compose's indexer): healthy while /ready is 503, as Ponder's is for the whole backfill", async () => {
    const backfilling = createServer((req, res) => res.writeHead(req.url === "/health" ? 200 : 503).end());
    await new Promise<void>((r) => backfilling.listen(0, "127.0.0.1", r));
    const at = { HEALTHCHECK_PORT: String((backfilling.address() as AddressInfo).port) };
    try {
      expect(await check(at)).toBe(1);
      expect(await check(at, ["/health"])).toBe(0);
      expect(await check(at, ["/status"])).toBe(2);
    } finally {
      await new Promise<void>((r) => backfilling.close(() => r()));
    }
  });
});
