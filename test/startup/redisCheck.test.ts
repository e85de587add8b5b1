/**
 * REDIS_URL at start-up (api/startup/redisCheck.ts), through the API process as operators run it (dist/server/main.js):
 * a Redis that answers and refuses what the URL asks (a database it does not have, a wrong password, no password where
 * one is required) stops the process with one line naming REDIS_URL, its password never shown; an unreachable Redis
 * still gives the documented degraded start. Real Redis servers: the shared one (16 databases, no password) and one
 * of this test's own with a password.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilHandle, freePort, startAnvil } from "../../devnet/anvil";
import { startApiChild } from "../support/apiProcess";
import { API_PROCESS_ARGS, API_PROCESS_ENV } from "../support/build";
import { REPO_ROOT } from "../support/ponder";

const SHARED_REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PASSWORD = "redischeck-PASSWORD-4711";
const WRONG = "redischeck-WRONG-0815";

let anvil: AnvilHandle;
let guarded: ChildProcess;
let guardedPort: number;

beforeAll(async () => {
  anvil = await startAnvil();
  guardedPort = await freePort();
  guarded = spawn(
    "redis-server",
    ["--port", String(guardedPort), "--bind", "127.0.0.1", "--requirepass", PASSWORD, "--save", ""],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  guarded.stdout!.on("data", (chunk) => {
    out += chunk;
  });
  const deadline = Date.now() + 10_000;
  while (!out.includes("Ready to accept connections") && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
});
afterAll(async () => {
  guarded?.kill("SIGKILL");
  await anvil?.stop();
});

const env = (redisUrl: string, port: number) => ({
  NETWORK: "local",
  RPC_URL: anvil.rpcUrl,
  HOST: "127.0.0.1",
  PORT: String(port),
  LOG_LEVEL: "warn",
  REDIS_URL: redisUrl,
  REDIS_KEY_PREFIX: `redischeck:${process.pid}:`,
});

/** The API process with REDIS_URL `redisUrl`, run to its exit (it must stop: bounded at 15 s). */
async function refused(redisUrl: string): Promise<string> {
  const run = spawnSync(process.execPath, API_PROCESS_ARGS, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...API_PROCESS_ENV, ...env(redisUrl, await freePort()) },
    encoding: "utf8",
    timeout: 15_000,
  });
  expect(run.status).toBe(1);
  expect(`${run.stdout}${run.stderr}`).not.toContain(PASSWORD);
  expect(`${run.stdout}${run.stderr}`).not.toContain(WRONG);
  const lines = run.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe("REDIS_URL that Redis refuses: the API process stops, naming it", () => {
  it("a database the server does not have (16 here)", async () => {
    const at = new URL(SHARED_REDIS).host;
    expect(await refused(`redis://${at}/99`)).toBe(
      `invalid configuration: REDIS_URL at redis://${at}/***: Redis refused it (ERR DB index is out of range)`,
    );
  });

  it("a wrong password", async () => {
    expect(await refused(`redis://:${WRONG}@127.0.0.1:${guardedPort}/10`)).toMatch(
      /^invalid configuration: REDIS_URL at redis:\/\/127\.0\.0\.1:\d+\/\*\*\*: Redis refused it \(WRONGPASS /,
    );
  });

  it("no password where the server requires one", async () => {
    expect(await refused(`redis://127.0.0.1:${guardedPort}/10`)).toMatch(
      /^invalid configuration: REDIS_URL at redis:\/\/127\.0\.0\.1:\d+\/\*\*\*: Redis refused it \(NOAUTH /,
    );
  });
});

describe("REDIS_URL that Redis accepts, or an unreachable Redis: the API process serves", () => {
  async function serves(redisUrl: string): Promise<string> {
    const port = await freePort();
    const api = await startApiChild(env(redisUrl, port));
    try {
      const health = await fetch(`${api.base}/health`);
      expect(health.status).toBe(200);
      return api.output();
    } finally {
      api.child.kill("SIGKILL");
      await once(api.child, "exit");
    }
  }

  it("the right password and database: no warning about Redis", async () => {
    const output = await serves(`redis://:${PASSWORD}@127.0.0.1:${guardedPort}/10`);
    expect(output).not.toMatch(/degraded|redis unavailable/i);
    expect(output).not.toContain(PASSWORD);
  });

  it("a Redis that takes the connection and never answers: starts degraded within seconds, not when it answers", async () => {
    // A hung Redis (SIGSTOPped, a silent proxy): the TCP connect succeeds, nothing ever comes back. The check's PING
    // had no bound, and the process did not listen until Redis answered (never, here).
    const held: Socket[] = [];
    const silent = createServer((socket) => {
      held.push(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    try {
      const t0 = performance.now();
      const output = await serves(`redis://127.0.0.1:${port}/10`);
      expect(performance.now() - t0).toBeLessThan(10_000);
      expect(output).toContain("supply cache degraded");
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  }, 30_000);

  it("nothing listening at the URL: starts degraded, as documented (Redis may come up later)", async () => {
    const output = await serves(`redis://127.0.0.1:${await freePort()}/10`);
    expect(output).toContain("supply cache degraded");
  });
});
