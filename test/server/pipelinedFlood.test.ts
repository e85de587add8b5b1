/**
 * Pipelined floods of the cached supply figure (red team "supply F4"), against the API process as operators run it
 * (dist/server/main.js over a devnet): clients that write thousands of `GET /api/supply/total` on a keep-alive
 * connection in one go and never read. Node parses the whole read it got (64 kB, ~1,500 of these requests) and hands
 * each to the app even after the connection guard has closed the connection; 50 such clients held the event loop for
 * seconds (another client's p99 3.7 s). Now the guard ends the parse where it closes the connection
 * (api/server/connectionGuard.ts), so such a client costs what a connection may queue, not a read's worth.
 * Asserted: N never-reading clients (1 and 50, each reconnecting as soon as it is closed) leave another client's
 * `/api/supply/total` p99 ≤ 50 ms and `/health` answered, the API process's RSS and descriptors bounded; and a client
 * that pipelines 16 requests and reads them gets every answer, in order. The flood runs in a process of its own
 * (test/support/pipelinedFlood.ts, at nice 19), so its CPU is not the measured client's.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardConnections, MAX_QUEUED_PER_CONNECTION } from "../../api/server/connectionGuard";
import { childEnv, runFloodScript, startApiChild } from "../support/apiProcess";
import { type ReadsDevnet, startReadsDevnet } from "../support/readsDevnet";

/** Requests each flooding client writes at once: ~200 kB, three full reads of the server's. */
const PIPELINED = 5_000;
const P99_BOUND_MS = 50;
/** What a well-behaved client may pipeline (and read): a modest depth. */
const READER_PIPELINED = 16;
/** What the flood may add to the process's resident memory. */
const RSS_GROWTH_BOUND_MB = 100;
const ATTACK_MS = 4_000;
const GET = (path: string, id = "") =>
  `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${id ? `x-request-id: ${id}\r\n` : ""}\r\n`;

let d: ReadsDevnet;
let dir: string;
let base: string;
let port: number;
let pid: number;
let stop: () => void;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const descriptors = () => readdirSync(`/proc/${pid}/fd`).length;

/** Connections closed for pipelining past MAX_QUEUED_PER_CONNECTION (api_connections_shed_total). */
async function pipelinedShed(): Promise<number> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  return Number(/^api_connections_shed_total\{reason="pipelined"\} (\d+)/m.exec(text)?.[1] ?? 0);
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Sequential GETs of `path` until `until()`: latency percentiles, and how many were not a 200. */
async function poll(path: string, until: () => boolean): Promise<{ n: number; p50: number; p99: number; bad: number }> {
  const samples: number[] = [];
  let bad = 0;
  while (!until()) {
    const t0 = performance.now();
    const res = await fetch(`${base}${path}`);
    await res.text();
    samples.push(performance.now() - t0);
    if (res.status !== 200) bad++;
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { n: samples.length, p50: at(0.5), p99: at(0.99), bad };
}

/** Reads `n` HTTP answers off `s`: each one's status and x-request-id, in order. */
function readAnswers(s: Socket, n: number): Promise<{ status: number; id: string | undefined }[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const answers: { status: number; id: string | undefined }[] = [];
    s.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString("latin1");
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        answers.push({ status: Number(head.split(" ")[1]), id: /x-request-id: (\S+)/i.exec(head)?.[1] });
        buf = buf.subarray(end + 4 + length);
        if (answers.length === n) return resolve(answers);
      }
    });
    s.once("close", () => reject(new Error(`closed after ${answers.length} answers`)));
  });
}

beforeAll(async () => {
  d = await startReadsDevnet();
  dir = mkdtempSync(path.join(tmpdir(), "pipelined-"));
  const api = await startApiChild({ ...childEnv(d, dir), RATE_LIMIT_MAX: "1000000" });
  base = api.base;
  port = Number(new URL(base).port);
  pid = api.child.pid!;
  stop = () => api.child.kill("SIGTERM");
  // The figure cached and the hot path warm.
  for (let i = 0; i < 200; i++) expect((await fetch(`${base}/api/supply/total`)).status).toBe(200);
}, 120_000);
afterAll(async () => {
  stop?.();
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a connection closed for pipelining", () => {
  it(`has at most ${MAX_QUEUED_PER_CONNECTION} + 1 of its requests handed on, not its whole read`, async () => {
    const server = createServer((_req, res) => res.end("ok"));
    guardConnections(server, { pendingBytes: { perConnection: 2 ** 30, perIp: 2 ** 30, total: 2 ** 30 } });
    // Every request Node's parser hands on, let through by the guard or not.
    let parsed = 0;
    server.prependListener("request", () => parsed++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const s = connect({ host: "127.0.0.1", port: (server.address() as AddressInfo).port });
    s.on("error", () => {});
    await new Promise((r) => s.once("connect", r));
    s.pause();
    s.write(GET("/api/supply/total").repeat(PIPELINED));
    await until("its requests parsed", () => parsed > 0);
    await sleep(200);
    console.log(`${PIPELINED} pipelined on one connection: ${parsed} handed on by Node's parser`);
    // Unended, Node hands on every request of its 64 kB read: ~1,400 of these.
    expect(parsed).toBeLessThanOrEqual(MAX_QUEUED_PER_CONNECTION + 1);
    s.destroy();
    await new Promise((r) => server.close(r));
  });
});

describe("a client that pipelines and reads", () => {
  it(`gets all of ${READER_PIPELINED} pipelined requests answered, in order`, async () => {
    const s = connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    await new Promise((r) => s.once("connect", r));
    const ids = Array.from({ length: READER_PIPELINED }, (_, i) => `pipelined-${i}`);
    const answers = readAnswers(s, ids.length);
    s.write(ids.map((id, i) => GET(i % 2 ? "/api/supply/total" : "/health", id)).join(""));
    expect(await answers).toEqual(ids.map((id) => ({ status: 200, id })));
    s.destroy();
  });
});

describe.each([1, 50])(`%i never-reading clients pipelining ${PIPELINED} requests each`, (clients) => {
  it(`leave another client's /api/supply/total p99 ≤ ${P99_BOUND_MS} ms, /health answered, RSS and descriptors bounded`, async () => {
    await sleep(500);
    const idleUntil = performance.now() + 1_000;
    const idle = await poll("/api/supply/total", () => performance.now() > idleUntil);
    const rssBefore = rssMb();
    const fdsBefore = descriptors();
    const shedBefore = await pipelinedShed();
    let peakRss = rssBefore;
    let peakFds = fdsBefore;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb());
      peakFds = Math.max(peakFds, descriptors());
    }, 50);
    let flooding = true;
    const flood = runFloodScript<{ connections: number }>(
      path.join(import.meta.dirname, "../support/pipelinedFlood.ts"),
      {
        PORT: String(port),
        CLIENTS: String(clients),
        PIPELINED: String(PIPELINED),
        DURATION_MS: String(ATTACK_MS),
      },
    ).finally(() => {
      flooding = false;
    });
    // From its first closed connection (the flood process starts in about a second) while it lasts.
    await until("the flood begins", async () => (await pipelinedShed()) > shedBefore);
    const over = () => !flooding;
    const [supply, health] = await Promise.all([poll("/api/supply/total", over), poll("/health", over)]);
    const { connections } = await flood;
    clearInterval(sampler);
    // The flood's connections are gone: the process's descriptors come back.
    let fdsAfter = descriptors();
    for (let i = 0; i < 40 && fdsAfter > fdsBefore + 2; i++) {
      await sleep(50);
      fdsAfter = descriptors();
    }
    const shedAfter = await pipelinedShed();
    console.log(
      `${clients} never-reading clients (${connections} connections, ${shedAfter - shedBefore} shed): supply idle n=${idle.n} ` +
        `p50 ${idle.p50.toFixed(1)} ms p99 ${idle.p99.toFixed(1)} ms, under the flood n=${supply.n} ` +
        `p50 ${supply.p50.toFixed(1)} ms p99 ${supply.p99.toFixed(1)} ms; /health n=${health.n} ` +
        `p99 ${health.p99.toFixed(1)} ms; RSS ${rssBefore.toFixed(0)} → peak ${peakRss.toFixed(0)} MB; ` +
        `descriptors ${fdsBefore} → peak ${peakFds} → ${fdsAfter}`,
    );
    expect(supply.bad + health.bad).toBe(0);
    expect(health.n).toBeGreaterThan(10);
    expect(supply.p99).toBeLessThanOrEqual(P99_BOUND_MS);
    expect(peakRss - rssBefore).toBeLessThan(RSS_GROWTH_BOUND_MB);
    // Each client holds one connection at a time (the pollers two more, the closing ones a few).
    expect(peakFds - fdsBefore).toBeLessThanOrEqual(2 * clients + 10);
    expect(fdsAfter).toBeLessThanOrEqual(fdsBefore + 2);
  }, 30_000);
});
