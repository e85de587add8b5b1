/**
 * Bounded memory under unread answers (api/server/connectionGuard.ts), against the API in its own process:
 * - clients that pipeline MCP batches and never read the answers (the budget lifted so every answer is the
 *   largest there is, 10 × tools/list): the process stays under the bound and computes at most the answers a
 *   connection may queue; the same attack without the guard gets every pipelined batch computed, which shows
 *   the test can fail. (Unguarded, these answers once grew the process by 465–841 MB; since they are written
 *   from bytes shared by every answer, api/mcp/gatekeeper.ts, they pin no copy, so the control counts work);
 * - back-pressure: a connection's pipelined requests are computed one at a time, the next only once the
 *   previous answer is sent, and still answered in order when the client reads;
 * - the caps on unsent bytes per address and in total, and the send timeout, with the docs bundle (the
 *   largest answer) as the unread answer.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MCP_MAX_BATCH } from "../../api/mcp/gatekeeper";
import { MAX_QUEUED_PER_CONNECTION } from "../../api/server/connectionGuard";
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

/** MCP requests the app has answered so far (api_http_requests_total for /api/mcp, every status). */
async function mcpAnswered(base: string): Promise<number> {
  return Object.entries(await metrics(base))
    .filter(([k]) => k.startsWith("api_http_requests_total{") && k.includes('route="/api/mcp"'))
    .reduce((n, [, v]) => n + v, 0);
}

async function growthUnderAttack(guard: "on" | "off"): Promise<{ growthMb: number; after: number; computed: number }> {
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
    const answeredBefore = await mcpAnswered(base);
    const sockets = await attack(base);
    // Up to 8 s (the unguarded server takes that long to compute enough answers on a busy machine); a
    // growth past the bound ends the wait.
    let peak = before;
    for (let i = 0; i < 80 && peak - before <= RSS_GROWTH_BOUND_MB; i++) {
      await sleep(100);
      peak = Math.max(peak, rssMb(child.pid!));
    }
    const computed = (await mcpAnswered(base)) - answeredBefore;
    for (const s of sockets) s.destroy();
    // The server still answers, promptly.
    const t0 = performance.now();
    expect((await fetch(`${base}/api/supply/max`)).status).toBe(200);
    return { growthMb: peak - before, after: performance.now() - t0, computed };
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
  it(`with the guard, the process grows by less than ${RSS_GROWTH_BOUND_MB} MB, computes at most what a connection may queue, and still answers at once`, async () => {
    const r = await growthUnderAttack("on");
    console.log(`guard on: RSS +${r.growthMb.toFixed(0)} MB, ${r.computed} answers computed`);
    expect(r.growthMb).toBeLessThan(RSS_GROWTH_BOUND_MB);
    expect(PIPELINED).toBeGreaterThan(MAX_QUEUED_PER_CONNECTION);
    expect(r.computed).toBeLessThanOrEqual(SOCKETS * MAX_QUEUED_PER_CONNECTION);
    expect(r.after).toBeLessThan(1_000);
  });

  it("without it, the same attack gets its pipelined batches computed (the test can fail)", async () => {
    const r = await growthUnderAttack("off");
    console.log(`guard off: RSS +${r.growthMb.toFixed(0)} MB, ${r.computed} answers computed`);
    expect(r.computed).toBeGreaterThan(SOCKETS * MAX_QUEUED_PER_CONNECTION);
  });
});

const MIB = 1024 * 1024;

/** /api/metrics as series → value (the series with its labels, as printed). */
async function metrics(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split("\n"))
    if (line && !line.startsWith("#"))
      out[line.slice(0, line.lastIndexOf(" "))] = Number(line.slice(line.lastIndexOf(" ") + 1));
  return out;
}

const pending = async (base: string) => (await metrics(base)).api_pending_response_bytes ?? 0;
const shed = async (base: string, reason: string) =>
  (await metrics(base))[`api_connections_shed_total{reason="${reason}"}`] ?? 0;
/** Answers of the docs bundle's route so far (whatever path /docs gives it). */
const docsAnswers = async (base: string) =>
  Object.entries(await metrics(base))
    .filter(([k]) => k.startsWith("api_http_requests_total{") && k.includes('route="/docs/'))
    .reduce((n, [, v]) => n + v, 0);

async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A connection from `localAddress` that writes `bytes` and reads nothing until told. */
function unread(base: string, bytes: string, localAddress = "127.0.0.1"): Promise<Socket> {
  const { port } = new URL(base);
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port: Number(port), localAddress }, () => {
      s.pause();
      s.write(bytes);
      resolve(s);
    });
    s.on("error", () => {});
  });
}

/** Reads `n` HTTP answers off `s`: each one's status and body length, in order. */
function readAnswers(s: Socket, n: number): Promise<{ status: number; bytes: number }[]> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const answers: { status: number; bytes: number }[] = [];
    s.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString("latin1");
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        answers.push({ status: Number(head.split(" ")[1]), bytes: length });
        buf = buf.subarray(end + 4 + length);
        if (answers.length === n) return resolve(answers);
      }
    });
    s.once("close", () => reject(new Error(`closed after ${answers.length} answers`)));
    s.resume();
  });
}

describe("back-pressure and the caps on unsent bytes (the docs bundle, unread)", () => {
  let base: string;
  let stop: () => void;
  let get: string;
  let bundleBytes: number;
  beforeAll(async () => {
    const api = await startApiChild({
      ...childEnv(d, dir),
      RATE_LIMIT_MAX: "1000000",
      PENDING_RESPONSE_BYTES_PER_IP: String(6 * MIB),
      PENDING_RESPONSE_BYTES_MAX: String(10 * MIB),
      SEND_TIMEOUT_MS: "3000",
    });
    base = api.base;
    stop = () => api.child.kill("SIGTERM");
    const html = await (await fetch(`${base}/docs`)).text();
    const script = /<script[^>]+src="([^"]+)"/.exec(html)![1]!;
    get = `GET ${script} HTTP/1.1\r\nhost: x\r\n\r\n`;
    bundleBytes = (await (await fetch(`${base}${script}`)).arrayBuffer()).byteLength;
    expect(bundleBytes).toBeGreaterThan(4 * MIB); // larger than what loopback buffers take unread
  }, 60_000);
  afterAll(() => stop?.());
  // Every test starts with nothing held (the send timeout clears what an earlier one left).
  beforeEach(() => until("nothing pending", async () => (await pending(base)) === 0));

  it("pipelined requests are computed one at a time, and answered in order once read", async () => {
    const before = await docsAnswers(base);
    const s = await unread(base, get.repeat(3));
    await until("the first answer waits", async () => (await pending(base)) > MIB);
    await sleep(500);
    // Only the first was computed: the others wait for it to be sent.
    expect(await docsAnswers(base)).toBe(before + 1);
    const answers = await readAnswers(s, 3);
    expect(answers).toEqual(Array.from({ length: 3 }, () => ({ status: 200, bytes: bundleBytes })));
    expect(await docsAnswers(base)).toBe(before + 3);
    s.destroy();
  });

  it("more requests pipelined than a connection may queue close it, counted once", async () => {
    const before = await shed(base, "pipelined");
    const s = await unread(base, get.repeat(MAX_QUEUED_PER_CONNECTION + 4));
    await until("closed", async () => s.readableEnded || s.destroyed || (await shed(base, "pipelined")) > before);
    expect(await shed(base, "pipelined")).toBe(before + 1);
    s.destroy();
  });

  it("per address: past PENDING_RESPONSE_BYTES_PER_IP its connections close; another address is served", async () => {
    const before = await shed(base, "pending_ip");
    const sockets = await Promise.all(Array.from({ length: 6 }, () => unread(base, get, "127.0.0.21")));
    await until("five shed", async () => (await shed(base, "pending_ip")) === before + 5);
    expect(await pending(base)).toBeLessThanOrEqual(6 * MIB);
    const other = await unread(base, get, "127.0.0.22");
    expect(await readAnswers(other, 1)).toEqual([{ status: 200, bytes: bundleBytes }]);
    for (const s of [...sockets, other]) s.destroy();
  });

  it("in total: past PENDING_RESPONSE_BYTES_MAX the connection whose answer passes it closes", async () => {
    const before = await shed(base, "pending_total");
    const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => unread(base, get, `127.0.0.${31 + i}`)));
    await until("four shed", async () => (await shed(base, "pending_total")) === before + 4);
    expect(await pending(base)).toBeLessThanOrEqual(10 * MIB);
    for (const s of sockets) s.destroy();
  });

  it("an answer that makes no progress for SEND_TIMEOUT_MS closes its connection and frees its bytes", async () => {
    const before = await shed(base, "send_timeout");
    const t0 = performance.now();
    const s = await unread(base, get);
    await until("it waits", async () => (await pending(base)) > MIB);
    await until("timed out", async () => (await shed(base, "send_timeout")) === before + 1);
    // 3 s after its last progress (the answer stalls as soon as it is written), within a second, not twice that
    // (Node's socket timer, used until red team rtlive F7: ~6 s); the rest is the polling's.
    const elapsed = performance.now() - t0;
    console.log(`unread docs bundle shed ${Math.round(elapsed)} ms after its request (SEND_TIMEOUT_MS 3000)`);
    expect(elapsed).toBeGreaterThan(2_900);
    expect(elapsed).toBeLessThan(4_500);
    expect(await pending(base)).toBe(0);
    s.destroy();
  });
});
