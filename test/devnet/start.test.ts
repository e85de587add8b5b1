import { type ChildProcess, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ABIS, devnetClients, sendTx } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { httpContract } from "../support/httpContract";
import { REPO_ROOT } from "../support/ponder";
import { WebhookReceiver } from "../support/webhookReceiver";

// `npm start` as a developer runs it: the HTTP contract (the same suite the production API process passes),
// a second run beside it from the same checkout, and Ctrl-C / SIGTERM leaving nothing behind.
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
    // HOST empty: the default 127.0.0.1, whatever the environment running the tests says.
    env: { ...process.env, PORT: String(apiPort), ANVIL_PORT: String(anvilPort), HOST: "", DATABASE_URL: "" },
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
afterAll(async () => {
  for (const s of running.splice(0)) await killGroup(s).catch(() => {});
});

const baseOf = (stack: Stack) => `http://127.0.0.1:${stack.apiPort}`;

/** Starts a stack and polls /ready until 200; every answer before that must be the documented 503, within 1 s. */
async function startReady(): Promise<Stack> {
  const stack = await startStack();
  running.push(stack);
  const unready: { ms: number; status: number; body: string }[] = [];
  await waitFor(
    "/ready",
    async () => {
      const t0 = performance.now();
      const res = await fetch(`${baseOf(stack)}/ready`);
      if (res.status === 200) return true;
      unready.push({ ms: performance.now() - t0, status: res.status, body: await res.text() });
      return undefined;
    },
    120_000,
  );
  for (const answer of unready) {
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({ ok: false, status: "unready", reason: "index missing" });
    expect(answer.ms).toBeLessThan(1_000);
  }
  return stack;
}

/** Stops `stack` with `how` and checks nothing it started is left, and that it ended without an error trace. */
async function stopAndCheck(stack: Stack, how: "ctrl-c" | "sigterm") {
  const pid = stack.child.pid!;
  // Ctrl-C: SIGINT to the whole foreground group, as a terminal sends it; SIGTERM to npm alone, as a
  // process manager would.
  if (how === "ctrl-c") process.kill(-pid, "SIGINT");
  else stack.child.kill("SIGTERM");
  await exited(stack.child);
  await waitFor("the process group to exit", async () => (groupAlive(pid) ? undefined : true), 20_000);
  expect(await portOpen(stack.anvilPort)).toBe(false);
  expect(await portOpen(stack.apiPort)).toBe(false);
  expect(stack.output()).toContain("stopping local stack");
  // Its run folder (PGlite, the manifest) is gone; the tracked manifest was never touched.
  expect(existsSync(path.dirname(manifestOf(stack)))).toBe(false);
  expect(tracked()).toEqual(trackedBefore);
  expect(stack.output()).not.toMatch(/RuntimeError|Aborted\(\)|Failed to shutdown|ERROR/);
}

/** The manifest a run wrote for its devnet, as it printed it (`deployed   <file>`). */
function manifestOf(stack: Stack): string {
  const file = /^deployed\s+(\S+)$/m.exec(stack.output())?.[1];
  if (!file) throw new Error(`npm start printed no manifest:\n${stack.output()}`);
  return file;
}

/** The committed devnet manifest, as it was before any run: npm start must leave it alone (no `-dirty` build). */
const TRACKED_MANIFEST = path.join(REPO_ROOT, "deployments", "local.json");
const tracked = () => ({ text: readFileSync(TRACKED_MANIFEST, "utf8"), mtimeMs: statSync(TRACKED_MANIFEST).mtimeMs });
const trackedBefore = tracked();

// One stack (A) serves the contract; a second (B) starts and stops beside it, from the same checkout, and A
// keeps serving; then A stops the way Ctrl-C stops it.
let a: Stack;
beforeAll(async () => {
  a = await startReady();
}, 150_000);

describe("npm start (local stack): its files", () => {
  it("writes its devnet's manifest into its own run folder (untracked, ignored), not the tracked deployments/local.json", () => {
    const file = manifestOf(a);
    expect(path.relative(REPO_ROOT, file)).toMatch(/^\.ponder\/local\/run-\d+\/local\.json$/);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ chainId: 31337 });
    expect(tracked()).toEqual(trackedBefore);
  });
});

describe("npm start (local stack): the HTTP contract on PORT", () => {
  httpContract(() => baseOf(a));

  it("the seeded chain's clock is the wall clock (as on Base), so an index answer's indexLagSeconds and stale are real", async () => {
    const { publicClient } = devnetClients(`http://127.0.0.1:${a.anvilPort}`);
    const head = await publicClient.getBlock({ blockTag: "latest" });
    const now = Math.floor(Date.now() / 1000);
    // Behind the wall clock by the time since the last block at most (never ahead: then the lag read 0 whatever it was).
    expect(Number(head.timestamp)).toBeLessThanOrEqual(now + 1);
    expect(Number(head.timestamp)).toBeGreaterThan(now - 180);
    // Once the index has the chain's head (`/ready` may come before its newest blocks), it is not stale.
    type Stats = { indexLagSeconds: number; stale: boolean; blockNumber: string; blockTimestamp: string };
    const body = await waitFor(
      "the index at the chain's head",
      async () => {
        const stats = (await (await fetch(`${baseOf(a)}/api/index/v1/stats`)).json()) as Stats;
        return BigInt(stats.blockNumber) >= head.number ? stats : undefined;
      },
      60_000,
    );
    expect(body.stale, JSON.stringify(body)).toBe(false);
    const lag = Math.floor(Date.now() / 1000) - Number(body.blockTimestamp);
    expect(body.indexLagSeconds).toBeLessThanOrEqual(lag + 1);
    expect(body.indexLagSeconds).toBeGreaterThanOrEqual(Math.max(0, lag - 5));
  });

  it("prints the API and RPC URLs", () => {
    expect(a.output()).toContain(`http://127.0.0.1:${a.apiPort}`);
    expect(a.output()).toContain(`http://127.0.0.1:${a.anvilPort}`);
  });

  it("webhooks: the printed operator token registers a loopback receiver, and a lock on the devnet arrives signed", async () => {
    expect(a.output()).toContain("Authorization: Bearer local-operator-token");
    const receiver = new WebhookReceiver();
    await receiver.up();
    try {
      const res = await fetch(`${baseOf(a)}/api/index/v1/webhooks`, {
        method: "POST",
        headers: { authorization: "Bearer local-operator-token", "content-type": "application/json" },
        body: JSON.stringify({ url: receiver.url, topics: ["stats"] }),
      });
      expect(res.status).toBe(201);
      const { webhook } = (await res.json()) as { webhook: { secret: string } };
      // The manifest `npm start` wrote for this run's deployment.
      const manifest = JSON.parse(readFileSync(manifestOf(a), "utf8"));
      const clients = devnetClients(`http://127.0.0.1:${a.anvilPort}`);
      await sendTx(clients, DEVNET_ACCOUNTS.bob.privateKey, {
        address: manifest.contracts.Furnace.address,
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [2_000n * 10n ** 18n, 0n, 30n * 86_400n, false, 1n],
      });
      const got = await receiver
        .until((acked) => acked[0], 60_000)
        .catch(async (error: Error) => {
          const deliveries = await fetch(`${baseOf(a)}/api/index/v1/webhooks/deliveries`, {
            headers: { authorization: "Bearer local-operator-token" },
          });
          throw new Error(`${error.message}; the outbox: ${await deliveries.text()}`);
        });
      const key = Buffer.from(webhook.secret.slice("whsec_".length), "base64");
      const mac = createHmac("sha256", key).update(`${got.id}.${got.timestamp}.${got.body}`).digest("base64");
      expect(got.signature).toBe(`v1,${mac}`);
      expect(JSON.parse(got.body).type).toBe("index.stats");
    } finally {
      await receiver.down();
    }
  }, 90_000);
});

describe("npm start (local stack): two runs from one checkout, and stopping", () => {
  it("a second run starts, serves and stops (SIGTERM) beside the first, which keeps serving", async () => {
    const b = await startReady();
    const total = await (await fetch(`${baseOf(b)}/api/supply/total`)).json();
    expect(total.result).toMatch(/^[1-9][0-9]*\.[0-9]{2}$/);
    await stopAndCheck(b, "sigterm");
    const ready = await fetch(`${baseOf(a)}/ready`);
    expect([ready.status, await ready.json()]).toEqual([200, { ok: true, status: "ready" }]);
    const state = await (await fetch(`${baseOf(a)}/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`)).json();
    expect(state.source).toBe("subgraph+rpc");
  }, 180_000);

  it("Ctrl-C stops everything it started, without an error trace", async () => {
    await stopAndCheck(a, "ctrl-c");
  }, 60_000);
});
