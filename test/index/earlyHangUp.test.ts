/**
 * A client that hangs up while its request still waits in the middleware (the rate limit's Redis round trip): its
 * response's "close" is emitted before the route runs, so whatever listened for it after never heard it.
 * - A stream opened then held its per-address slot for good — sixteen instant hang-ups locked an address out of streams
 *   with 429 until the process restarted (red team rtlive F3).
 * - A `minBlock` wait ran to its full `waitMs`, holding a place of the waiters' cap (red team rtlive F8), and any other
 *   read went on as if someone would read its answer.
 * Served as the API process serves it (api/server/server.ts over the app, the rate limit on a real Redis), over a
 * synthetic index in PGlite whose heads the test tells.
 */
import { connect } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import { type ApiServer, startApiServer } from "../../api/server/server";
import { generateSyntheticIndex, type SyntheticIndex, writeSyntheticIndex } from "../support/syntheticIndex";
import { commitTold, toldSignal } from "../support/toldSignal";

const BASE = "/api/index/v1";
const SCHEMA = "synthetic";
const START = 46_183_959n;
const PER_IP = 4;
const HANG_UPS = 40;
/** Its own Redis database: the rate limit's keys of this test never meet another's. */
const REDIS_URL = process.env.STREAM_HANGUP_REDIS_URL ?? "redis://127.0.0.1:6379/11";

let index: SyntheticIndex;
let client: PGlite;
let api: ApiServer;
let url: string;
let head: bigint;
const told = toldSignal();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${url}/api/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** A request (a stream, unless said) from `address` whose socket is destroyed as soon as the request is written. */
function hangUp(address: string, path = `${BASE}/stream?stats`): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ port: api.port, host: "127.0.0.1", localAddress: address }, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
      socket.destroy();
      resolve();
    });
    socket.on("error", () => resolve());
  });
}

/** The status line of a stream opened from `address` (the stream then closed). */
function openFrom(address: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port: api.port, host: "127.0.0.1", localAddress: address }, () => {
      socket.write(`GET ${BASE}/stream?stats HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    });
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n");
      if (end !== -1) {
        socket.destroy();
        resolve(text.slice(0, end));
      }
    });
    socket.on("error", reject);
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer from ${address}: ${JSON.stringify(text)}`));
    }, 5_000);
  });
}

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 200, owners: 20, seed: 13, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 200n });
  const config = loadConfig({
    NETWORK: "base",
    REDIS_URL,
    RATE_LIMIT_MAX: "1000000",
    STREAM_MAX_PER_IP: String(PER_IP),
    STREAM_HEARTBEAT_MS: "1000",
  });
  const metrics = createMetrics();
  const app = createApp({
    config,
    rpc: null,
    metrics,
    index: { atBlock: createLockIndex({ db: drizzle(client), schema: SCHEMA }), signal: told.signal },
    logger: silentLogger,
  });
  api = await startApiServer(app, {
    port: 0,
    hostname: "127.0.0.1",
    connections: config.connections,
    trustedProxies: config.trustedProxies,
    metrics,
  });
  url = `http://127.0.0.1:${api.port}`;
  head = [...new Set(index.events.map((e) => e.blockNumber))].at(-1)!;
  await commitTold(told, (text, params) => client.query(text, params), SCHEMA, index, head);
}, 120_000);

afterAll(async () => {
  await api?.close(100);
  await client?.close();
});

describe("a stream's client that hangs up before the route runs", () => {
  it("holds no slot: the address still opens streams and none stays open", async () => {
    // Ten times the address's cap of instant hang-ups, from one address: on 6b19d00 every one whose "close" came
    // during the rate limit's Redis round trip was opened anyway and never closed.
    const address = "127.0.12.1";
    for (let i = 0; i < HANG_UPS; i++) await hangUp(address);
    let open = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 50 && open > 0; i++) {
      await sleep(100);
      open = await metric("api_streams_open");
    }
    expect(open).toBe(0);
    expect(await openFrom(address)).toBe("HTTP/1.1 200 OK");
    for (let i = 0; i < 50 && (await metric("api_streams_open")) > 0; i++) await sleep(100);
    expect(await metric("api_streams_open")).toBe(0);
  }, 60_000);
});

describe("a minBlock wait whose client hangs up before the route runs", () => {
  it("ends at once, cancelled, instead of at its waitMs", async () => {
    const waits = (outcome: string) => metric(`api_min_block_waits_total{of="index",outcome="${outcome}"}`);
    const [cancelled, timedOut] = [await waits("cancelled"), await waits("timeout")];
    const path = `${BASE}/stats?minBlock=${head + 1000n}&waitMs=3000`;
    for (let i = 0; i < HANG_UPS; i++) await hangUp("127.0.13.1", path);
    // Every wait was cancelled within a second or so; none was left to run to its 3 s (on 0946ee1 most did).
    for (let i = 0; i < 30 && (await waits("cancelled")) - cancelled < HANG_UPS; i++) await sleep(100);
    expect((await waits("cancelled")) - cancelled).toBe(HANG_UPS);
    await sleep(3_500);
    expect((await waits("timeout")) - timedOut).toBe(0);
  }, 60_000);
});
