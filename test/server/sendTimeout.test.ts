/**
 * The send timeout (SEND_TIMEOUT_MS, api/server/sendTimeout.ts) over HTTP, as the API process serves the app
 * (api/server/server.ts with its guard, over a synthetic index in PGlite): an answer whose written bytes make no
 * progress for SEND_TIMEOUT_MS is closed within a second of it (docs/api.md, docs/operations.md). Node's own socket
 * timer (`server.timeout`, which this used) closed a stalled stream after twice the time: its first expiry is
 * suppressed whenever the write in flight went out in part, which a stalled write always has (measured 4.0–4.3 s
 * for 2 s). A client that reads slowly but steadily is not closed, nor an idle keep-alive connection.
 */
import { connect, type Socket } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import { type ApiServer, startApiServer } from "../../api/server/server";
import { readSse } from "../support/sseReader";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";

const BASE = "/api/index/v1";
const SCHEMA = "synthetic";
const START = 46_183_959n;
const SEND_TIMEOUT_MS = 2_000;
const SHED = 'api_connections_shed_total{reason="send_timeout"}';

let index: SyntheticIndex;
let client: PGlite;
let api: ApiServer;
let url: string;
let head: bigint;
let query: string;
const told = toldSignal();
let follower: () => void = () => {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${url}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** A raw connection to the server, and the server's side of it (the guard's registry), once accepted. */
async function rawConnection(): Promise<{ client: Socket; server: Socket }> {
  const known = new Set(api.guard!.connections.keys());
  const socket = connect(api.port, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  for (;;) {
    const server = [...api.guard!.connections.keys()].find((s) => !known.has(s) && s.remotePort === socket.localPort);
    if (server) return { client: socket, server };
    await sleep(5);
  }
}

/** The stream's request with its whole catch-up (MiBs of replay, past what the loopback's buffers take). */
const streamRequest = () => `GET ${BASE}/stream?${query}&lastEventId=${START - 1n} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`;

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 250, owners: 40, seed: 11, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  const config = loadConfig({
    NETWORK: "base",
    SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
    STREAM_REPLAY_BLOCKS: "100000",
    STREAM_MAX_PER_IP: "100",
  });
  const metrics = createMetrics();
  const app = createApp({
    config,
    rpc: null,
    metrics,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal: told.signal },
    logger: silentLogger,
  });
  api = await startApiServer(app, { port: 0, hostname: "127.0.0.1", connections: config.connections, metrics });
  url = `http://127.0.0.1:${api.port}`;
  head = index.events.at(-1)!.blockNumber;
  await commitTold(told, (text, params) => client.query(text, params), SCHEMA, index, head);
  const owners = [...new Set(index.events.flatMap((e) => (e.owner ? [e.owner.toLowerCase()] : [])))].slice(0, 29);
  query = ["activity", "board=ve", "stats", ...owners.map((o) => `account=${o}`)].join("&");
  // A stream that reads follows the topics, so the hub has every replayed answer at hand: a catch-up is written at once.
  const controller = new AbortController();
  const res = await fetch(`${url}${BASE}/stream?${query}&lastEventId=${START - 1n}`, { signal: controller.signal });
  // 7 MB of replay: past what the loopback's buffers take from a client that never reads (about 4 MB).
  await readSse(res).until((e) => e.id === String(head), 120_000);
  follower = () => controller.abort();
}, 180_000);

afterAll(async () => {
  follower();
  await api?.close(100);
  await client?.close();
});

describe("the send timeout", () => {
  it("a stream never read is closed within a second after SEND_TIMEOUT_MS without progress, not twice that", async () => {
    const before = await metric(SHED);
    const { client: socket, server } = await rawConnection();
    socket.pause(); // never read: what the kernel's buffers take is all this client takes
    socket.write(streamRequest());
    // Its last progress: the last moment the kernel took any of its bytes, seen from the server's side.
    // Seen by sampling every 10 ms: the progress happened after the sample before the one that saw it (`since`) and by
    // that one (`by`). Under a loaded machine a sample can come seconds late, so each bound uses its own side.
    let taken = -1;
    let sampledAt = performance.now();
    let progress = { since: sampledAt, by: sampledAt };
    let closedAt: number | undefined;
    server.once("close", () => {
      closedAt = performance.now();
    });
    while (closedAt === undefined && performance.now() - progress.by < 4 * SEND_TIMEOUT_MS) {
      // Destroyed and not yet closed: its handle is gone, so its queue reads 0 — the close, not progress.
      if (server.destroyed) {
        await sleep(10);
        continue;
      }
      const sent = server.bytesWritten - server.writableLength;
      const queued = (server as Socket & { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0;
      const now = performance.now();
      if (sent - queued !== taken) {
        taken = sent - queued;
        progress = { since: sampledAt, by: now };
      }
      sampledAt = now;
      await sleep(10);
    }
    expect(closedAt, "closed").toBeDefined();
    expect(closedAt! - progress.since, "stalled at most this long when closed").toBeGreaterThanOrEqual(
      SEND_TIMEOUT_MS - 20,
    );
    expect(closedAt! - progress.by, "stalled at least this long when closed").toBeLessThan(SEND_TIMEOUT_MS + 1_000);
    expect(await metric(SHED)).toBe(before + 1);
    socket.destroy();
  }, 60_000);

  it("a client that reads steadily is not closed, though its answer takes longer than SEND_TIMEOUT_MS", async () => {
    const before = await metric(SHED);
    const { client: socket } = await rawConnection();
    let bytes = 0;
    let closed = false;
    socket.once("close", () => {
      closed = true;
    });
    // 150 KiB every 100 ms (1.5 MiB/s): the MiBs of catch-up take several SEND_TIMEOUT_MS to read. The kernel takes the
    // server's bytes in steps of about a third of its send buffer (~1.4 MB on loopback), each within a second here.
    let budget = 0;
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      budget -= chunk.length;
      if (budget <= 0) socket.pause();
    });
    socket.pause();
    socket.write(streamRequest());
    const until = performance.now() + 3 * SEND_TIMEOUT_MS;
    while (performance.now() < until && !closed) {
      await sleep(100);
      budget = 150 * 1024;
      socket.resume();
    }
    expect(closed).toBe(false);
    expect(bytes).toBeGreaterThan(3 * 1024 * 1024);
    expect(await metric(SHED)).toBe(before);
    socket.destroy();
  }, 60_000);

  it("an idle keep-alive connection is not closed by it", async () => {
    const before = await metric(SHED);
    const { client: socket } = await rawConnection();
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    let closed = false;
    socket.once("close", () => {
      closed = true;
    });
    socket.write(`GET ${BASE}/stats HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    await sleep(2 * SEND_TIMEOUT_MS + 500);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(closed).toBe(false);
    // Still served on the same connection.
    answer = "";
    socket.write(`GET ${BASE}/stats HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    for (let i = 0; i < 100 && !answer.includes("\r\n\r\n"); i++) await sleep(20);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(await metric(SHED)).toBe(before);
    socket.destroy();
  }, 60_000);
});
