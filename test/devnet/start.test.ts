import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";

// `npm start` as a developer runs it: the whole stack, then SIGTERM, then a second start.
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await fn().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

type Stack = { child: ChildProcess; output: () => string; apiPort: number; anvilPort: number };

async function startStack(): Promise<Stack> {
  const apiPort = await freePort();
  const anvilPort = await freePort();
  let output = "";
  // Its own process group, like a terminal's foreground job, so Ctrl-C can be sent to the group.
  const child = spawn(NPM, ["start"], {
    env: { ...process.env, PORT: String(apiPort), ANVIL_PORT: String(anvilPort), DATABASE_URL: "" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  return { child, output: () => output, apiPort, anvilPort };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once("exit", () => r()));
}

/** True while any process of the group is alive (signal 0 probes without delivering). */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function killGroup(stack: Stack) {
  const pid = stack.child.pid;
  if (pid !== undefined && groupAlive(pid)) process.kill(-pid, "SIGKILL");
  await exited(stack.child);
}

const running: Stack[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await killGroup(s).catch(() => {});
});

describe("npm start (local stack)", () => {
  it("serves the API over a seeded devnet, stops everything on SIGTERM, and starts again", async () => {
    // Round 1 stops it the way Ctrl-C does (SIGINT to the whole foreground group); round 2 with a
    // SIGTERM to npm alone, as a process manager would.
    for (const round of [1, 2]) {
      const stack = await startStack();
      running.push(stack);
      const base = `http://127.0.0.1:${stack.apiPort}`;

      await waitFor("/ready", async () => ((await fetch(`${base}/ready`)).status === 200 ? true : undefined), 120_000);
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect(stack.output()).toContain(`http://127.0.0.1:${stack.apiPort}`);
      expect(stack.output()).toContain(`http://127.0.0.1:${stack.anvilPort}`);

      // The seeded chain is indexed and served: supply figures are exact two-decimal strings.
      const total = await (await fetch(`${base}/api/supply/total`)).json();
      expect(total.result).toMatch(/^[1-9][0-9]*\.[0-9]{2}$/);

      const pid = stack.child.pid!;
      if (round === 1) process.kill(-pid, "SIGINT");
      else stack.child.kill("SIGTERM");
      await exited(stack.child);
      // Nothing it started is left: no process of its group, anvil's and the API's ports closed.
      await waitFor("the process group to exit", async () => (groupAlive(pid) ? undefined : true), 20_000);
      expect(await portOpen(stack.anvilPort)).toBe(false);
      expect(await portOpen(stack.apiPort)).toBe(false);
      expect(stack.output()).toContain("stopping local stack");
    }
  }, 300_000);
});
