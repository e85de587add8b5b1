/**
 * Bounded memory under unread answers (api/http/connectionGuard.ts): clients that pipeline MCP batches
 * and never read the answers, against the API in its own process. The budget is lifted so every answer is
 * the largest there is (10 × tools/list), which is what the guard must bound on its own; the same attack
 * without the guard shows the test can fail.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT_PER_CONNECTION } from "../../api/http/connectionGuard";
import { MCP_MAX_BATCH } from "../../api/mcp/gatekeeper";
import { childEnv, startApiChild } from "../support/apiProcess";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

/** The documented bound: what this attack may add to the process's resident memory. */
const RSS_GROWTH_BOUND_MB = 300;
const SOCKETS = 40;
/** Far past the guard's bound, so the unguarded run grows well beyond what the guarded one may. */
const PIPELINED = 80;

let d: ReadsDevnet;
let dir: string;

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SOCKETS connections, each PIPELINED requests written at once, none of the answers read. */
async function attack(base: string): Promise<Socket[]> {
  const { port } = new URL(base);
  const body = JSON.stringify(
    Array.from({ length: MCP_MAX_BATCH }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })),
  );
  const one =
    `POST /api/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const sockets = await Promise.all(
    Array.from(
      { length: SOCKETS },
      () =>
        new Promise<Socket>((resolve) => {
          const s = connect({ host: "127.0.0.1", port: Number(port) }, () => resolve(s));
          s.on("error", () => {});
        }),
    ),
  );
  for (const s of sockets) {
    s.pause(); // never read
    s.write(one.repeat(PIPELINED));
  }
  return sockets;
}

async function growthUnderAttack(guard: "on" | "off"): Promise<{ growthMb: number; after: number }> {
  const { child, base } = await startApiChild({
    ...childEnv(d, dir),
    CONNECTION_GUARD: guard,
    RATE_LIMIT_MAX: "1000000",
  });
  try {
    // Warm up (the tools list is built, the JIT settles), then the baseline.
    for (let i = 0; i < 20; i++) await fetch(`${base}/api/supply/max`).then((r) => r.text());
    await sleep(300);
    const before = rssMb(child.pid!);
    const sockets = await attack(base);
    let peak = before;
    for (let i = 0; i < 20; i++) {
      await sleep(100);
      peak = Math.max(peak, rssMb(child.pid!));
    }
    for (const s of sockets) s.destroy();
    // The server still answers, promptly.
    const t0 = performance.now();
    expect((await fetch(`${base}/api/supply/max`)).status).toBe(200);
    return { growthMb: peak - before, after: performance.now() - t0 };
  } finally {
    child.kill("SIGTERM");
  }
}

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "guard-"));
});
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("pipelined requests whose answers are never read", () => {
  it(`with the guard, the process grows by less than ${RSS_GROWTH_BOUND_MB} MB and still answers at once`, async () => {
    const r = await growthUnderAttack("on");
    console.log(`guard on: RSS +${r.growthMb.toFixed(0)} MB`);
    expect(r.growthMb).toBeLessThan(RSS_GROWTH_BOUND_MB);
    expect(PIPELINED).toBeGreaterThan(MAX_IN_FLIGHT_PER_CONNECTION);
    expect(r.after).toBeLessThan(1_000);
  });

  it("without it, the same attack grows the process past the bound (the test can fail)", async () => {
    const r = await growthUnderAttack("off");
    console.log(`guard off: RSS +${r.growthMb.toFixed(0)} MB`);
    expect(r.growthMb).toBeGreaterThan(RSS_GROWTH_BOUND_MB);
  });
});
