/**
 * MCP requests take turns (api/http/turnstile.ts), against the API process as operators run it: when 200
 * addresses each send an MCP batch (10 × tools/list, 580 kB to build) at the same moment as another client
 * sends a GET, the GET is answered before most of the batches (only those started in the event-loop turns
 * before it arrived come first). Without the turnstile (the same server unguarded) Node computes every
 * batch that is ready first, so the GET comes after nearly all of them: the test can fail. An ordering, not
 * a latency, so a busy machine does not decide it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, startApiChild } from "../support/apiProcess";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

const CLIENTS = 200;

let d: ReadsDevnet;
let dir: string;

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "turns-"));
}, 120_000);
afterAll(async () => {
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const open = (port: number, localAddress: string) =>
  new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port, localAddress }, () => resolve(s));
    s.once("error", reject);
  });

/** How many of the MCP answers had begun to arrive when the GET's answer did. */
async function answersBeforeTheGet(guard: "on" | "off"): Promise<number> {
  const { child, base } = await startApiChild({
    ...childEnv(d, dir),
    CONNECTION_GUARD: guard,
    RATE_LIMIT_MAX: "1000000",
  });
  try {
    const port = Number(new URL(base).port);
    const body = JSON.stringify(
      Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/list" })),
    );
    const mcp =
      `POST /api/mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
      `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    // Warm: the tools list is built once.
    await fetch(`${base}/api/mcp`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    }).then((r) => r.arrayBuffer());
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => open(port, `127.0.${3 + Math.floor(i / 250)}.${1 + (i % 250)}`)),
    );
    const other = await open(port, "127.0.0.2");
    const arrivals: number[] = [];
    for (const s of clients)
      s.once("data", () => {
        arrivals.push(performance.now());
        s.destroy(); // the first bytes are enough
      });
    const answered = new Promise<number>((resolve) => other.once("data", () => resolve(performance.now())));
    for (const s of clients) s.write(mcp);
    other.write("GET /health HTTP/1.1\r\nhost: x\r\n\r\n");
    const at = await answered;
    other.destroy();
    await new Promise((r) => setTimeout(r, 200));
    return arrivals.filter((t) => t < at).length;
  } finally {
    child.kill("SIGTERM");
  }
}

describe("MCP batches from many addresses and another client's GET, at the same moment", () => {
  it("with the turnstile, the GET is answered before most of the batches", async () => {
    const before = await answersBeforeTheGet("on");
    console.log(`turnstile on: ${before} of ${CLIENTS} MCP answers before the GET's`);
    // Batches whose bytes arrived before the GET's are fairly served first, and on a loaded machine the 200 writes
    // spread over time: seen 6, 65 and 118 first. Without the turnstile all 200 come first, every time.
    expect(before).toBeLessThan(CLIENTS * 0.9);
  }, 60_000);

  it("without it, most batches are computed first (the test can fail)", async () => {
    const before = await answersBeforeTheGet("off");
    console.log(`turnstile off: ${before} of ${CLIENTS} MCP answers before the GET's`);
    expect(before).toBeGreaterThan(CLIENTS / 2);
  }, 60_000);
});
