/**
 * A stream resumed with Last-Event-ID over HTTP (the app served by api/server/server.ts, as the API process serves
 * it, over a synthetic index in PGlite): the blocks it missed are written at its client's pace. A client that reads
 * gets every replayed event, however large the catch-up and whether or not another stream already follows its topics
 * (whose answers the hub then has at hand: the whole replay is ready at once); a client that never reads is still
 * disconnected, by the send timeout.
 */
import { connect } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import { type ApiServer, startApiServer } from "../../api/server/server";
import { readSse } from "../support/sseReader";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";

const BASE = "/api/index/v1";
const SCHEMA = "synthetic";
const START = 46_183_959n;
const SEND_TIMEOUT_MS = 2_000;

let index: SyntheticIndex;
let client: PGlite;
let api: ApiServer;
let url: string;
let head: bigint;
let query: string;
const told = toldSignal();

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${url}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** Reads a resumed stream until `quietMs` pass with nothing new after an event of the head. */
async function readResumed(lastEventId: bigint, quietMs = 1_500) {
  const controller = new AbortController();
  const res = await fetch(`${url}${BASE}/stream?${query}&lastEventId=${lastEventId}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const s = readSse(res);
  await s.until((e) => e.id === String(head), 120_000);
  for (let n = -1; n !== s.events.length; ) {
    n = s.events.length;
    await new Promise((r) => setTimeout(r, quietMs));
  }
  return { ...s, close: () => controller.abort() };
}

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 400, owners: 40, seed: 11, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  const config = loadConfig({
    NETWORK: "base",
    SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
    STREAM_REPLAY_BLOCKS: "100000",
    STREAM_MAX_PER_IP: "100",
  });
  const app = createApp({
    config,
    rpc: null,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal: told.signal },
    logger: silentLogger,
  });
  api = await startApiServer(app, { port: 0, hostname: "127.0.0.1", connections: config.connections });
  url = `http://127.0.0.1:${api.port}`;
  head = index.events.at(-1)!.blockNumber;
  await commitTold(told, (text, params) => client.query(text, params), SCHEMA, index, head);
  const owners = [...new Set(index.events.flatMap((e) => (e.owner ? [e.owner.toLowerCase()] : [])))].slice(0, 29);
  query = ["activity", "board=ve", "stats", ...owners.map((o) => `account=${o}`)].join("&");
}, 120_000);

afterAll(async () => {
  await api?.close(100);
  await client?.close();
});

describe("a resumed stream's catch-up over HTTP", () => {
  it("lastEventId given twice is 400 BAD_PARAMS, as every single-valued parameter", async () => {
    const res = await fetch(`${url}${BASE}/stream?stats&lastEventId=${head - 2n}&lastEventId=${head - 1n}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "BAD_PARAMS", detail: { param: "lastEventId" } });
  });

  it("a reader gets the whole replay (MiBs) even when another stream follows its topics; none is dropped", async () => {
    const first = await readResumed(START - 1n);
    const bytes = first.events.reduce((n, e) => n + e.data.length, 0);
    // Past what the loopback's socket buffers take at once (tcp_wmem's 4 MiB) and the 1 MiB unread bound, by far.
    expect(bytes).toBeGreaterThan(8 * 1024 * 1024);
    // The first stream stays open, following the topics: their answers are the hub's now, the next replay's at once.
    const second = await readResumed(START - 1n);
    expect(second.events.map((e) => `${e.id} ${e.event}`)).toEqual(first.events.map((e) => `${e.id} ${e.event}`));
    expect(await metric('api_streams_dropped_total{reason="unread"}')).toBe(0);
    expect(await metric("api_streams_open")).toBe(2);
    first.close();
    second.close();
    for (let i = 0; i < 50 && (await metric("api_streams_open")) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await metric("api_streams_open")).toBe(0);
  }, 240_000);

  it("a client that never reads its replay is disconnected by the send timeout", async () => {
    const follower = await readResumed(START - 1n, 500);
    const socket = connect(api.port, "127.0.0.1");
    // Never read: what the kernel buffers take is all this client takes.
    socket.pause();
    socket.on("error", () => {});
    socket.write(`GET ${BASE}/stream?${query}&lastEventId=${START - 1n} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    const opened = performance.now();
    for (let i = 0; i < 50 && (await metric("api_streams_open")) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    for (let i = 0; i < 200 && (await metric("api_streams_open")) > 1; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await metric("api_streams_open")).toBe(1);
    expect(performance.now() - opened).toBeLessThan(SEND_TIMEOUT_MS + 10_000);
    socket.destroy();
    follower.close();
  }, 120_000);
});
