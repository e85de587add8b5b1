/**
 * Headroom for new clients (api/server/connectionLimit.ts) on the API process as operators run it, with a
 * scaled-down total cap: addresses holding idle connections and reconnecting whenever one closes keep the total
 * full, yet a fresh address's /health is answered in under 1 s every time — once the connections pass
 * CONNECTION_PRESSURE_PERCENT of MAX_CONNECTIONS, each address is held to its fair share and the heaviest address's
 * oldest idle connection is closed for a newcomer. Without it (100 %), the same flood refuses the fresh address.
 * bench/abuse-connections-pressure.ts runs it at 20,000 sockets from 400 addresses.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, startApiChild } from "../support/apiProcess";
import { getFrom } from "../support/rawHttp";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

let d: ReadsDevnet;
let dir: string;
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "connpressure-"));
}, 120_000);
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

type Held = { held: number; opened: number; refused: number; unanswered: number; reset: number };

/** ADDRESSES × PER_ADDRESS idle connections, reconnecting, for `ms` (test/support/reconnectingIdle.ts). */
function reconnecting(base: string, addresses: number, perAddress: number, ms: number): { now(): Held | undefined } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(import.meta.dirname, "../support/reconnectingIdle.ts")],
    {
      env: {
        ...process.env,
        PORT: new URL(base).port,
        ADDRESSES: String(addresses),
        PER_ADDRESS: String(perAddress),
        DURATION_MS: String(ms),
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  children.push(child);
  let latest: Held | undefined;
  let partial = "";
  child.stdout!.on("data", (c) => {
    const lines = (partial + c).split("\n");
    partial = lines.pop()!;
    if (lines.length > 0) latest = JSON.parse(lines.at(-1)!);
  });
  return { now: () => latest };
}

/** A GET of /health on a new connection from `localAddress`: its status (or error) and time. */
function fresh(base: string, localAddress: string): Promise<{ status: number | string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(`${base}/health`, { localAddress, agent: false, timeout: 3_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, ms: performance.now() - t0 }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? e.message, ms: performance.now() - t0 }));
    req.end();
  });
}

async function metric(base: string, name: string): Promise<number> {
  const { body } = await getFrom(`${base}/api/metrics`, "127.0.0.2");
  const line = body.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** 8 addresses × 40 reconnecting idle connections against MAX_CONNECTIONS=200; 12 fresh /health, 250 ms apart. */
async function underFlood(env: Record<string, string>) {
  const api = await startApiChild({ ...childEnv(d, dir), MAX_CONNECTIONS: "200", ...env });
  children.push(api.child);
  const flood = reconnecting(api.base, 8, 40, 9_000);
  // Until the flood holds the total (its 320 against 200, reconnecting).
  for (let i = 0; i < 60 && (flood.now()?.held ?? 0) < 150; i++) await sleep(100);
  const asked: { status: number | string; ms: number }[] = [];
  for (let i = 0; i < 12; i++) {
    asked.push(await fresh(api.base, `127.0.0.${100 + i}`));
    await sleep(250);
  }
  const held = flood.now()!;
  const shed = await metric(api.base, 'api_connections_shed_total{reason="pressure"}');
  api.child.kill("SIGKILL");
  return { asked, held, shed };
}

describe("idle connections from many addresses, reconnecting", () => {
  it("a fresh address's /health is answered 200 in < 1 s every time; the heaviest idle ones were closed", async () => {
    const { asked, held, shed } = await underFlood({});
    console.log(
      `pressure at 80 %: fresh ${JSON.stringify(asked.map((a) => [a.status, Math.round(a.ms)]))}; flood ${JSON.stringify(held)}; shed ${shed}`,
    );
    expect(held.held).toBeGreaterThanOrEqual(120); // the flood did hold most of the total
    for (const a of asked) {
      expect(a.status).toBe(200);
      expect(a.ms).toBeLessThan(1_000);
    }
    expect(shed).toBeGreaterThanOrEqual(asked.length);
    // The flood's refusals are the 429, none reset.
    expect(held.refused).toBeGreaterThan(0);
    expect(held.reset).toBe(0);
  }, 60_000);

  it("without the headroom (CONNECTION_PRESSURE_PERCENT=100) the same flood refuses the fresh address", async () => {
    const { asked } = await underFlood({ CONNECTION_PRESSURE_PERCENT: "100" });
    console.log(`pressure off: fresh ${JSON.stringify(asked.map((a) => [a.status, Math.round(a.ms)]))}`);
    expect(asked.filter((a) => a.status !== 200).length).toBeGreaterThan(0);
  }, 60_000);
});
