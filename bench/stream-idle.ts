/**
 * Idle event streams on one API process, and how soon a lock reaches an open stream. The production shape: the
 * seeded devnet, one indexer (`ponder start --views-schema`, Postgres) and one API process (dist/server/main.js).
 * 1. Baseline: the API process's RSS and another client's `/health` p99 (sequential, keep-alive), no stream open.
 * 2. STREAMS (default 10,000) idle streams opened on raw sockets (`?lock=` an id never minted: only heartbeats), each
 *    counted open once its `retry:` line arrived; then the RSS and the same `/health` p99 again.
 * 3. With them open: LOCKS (default 30) locks created on the devnet, one per block; for each, the time from the
 *    index's commit (the bench LISTENs on the same channel the API process does) to the `stats` event of that block on
 *    a measuring stream, in ms and in Base blocks (2 s).
 * Usage: npx tsx bench/stream-idle.ts   (STREAMS=n LOCKS=n)
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import pg from "pg";
import { DEVNET_ABIS } from "../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { buildOnce } from "../test/support/build";
import { send } from "../test/support/devnet";
import { startSeededChain } from "../test/support/indexChain";
import { headBlock } from "../test/support/lockChain";
import { createTestDatabase } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";

const STREAMS = Number(process.env.STREAMS ?? 10_000);
const LOCKS = Number(process.env.LOCKS ?? 30);
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

/** The V8 heap in use (prom-client's `nodejs_heap_size_used_bytes`, read at scrape time), in MB. */
async function heapMb(base: string): Promise<number> {
  const text = await (await fetch(`${base}/api/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)![1]) / 1024 / 1024;
}

async function healthP99(base: string, n = 500) {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/health`);
    await res.arrayBuffer();
    samples.push(performance.now() - t0);
  }
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}

function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let seen = "";
    socket.setEncoding("utf8");
    const onData = (chunk: string) => {
      seen += chunk;
      if (seen.includes("retry: ")) {
        socket.off("data", onData);
        socket.on("data", () => {});
        resolve(socket);
      } else if (seen.startsWith("HTTP/1.1 4") || seen.startsWith("HTTP/1.1 5")) {
        reject(new Error(seen.split("\r\n")[0]));
      }
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(
      `GET /api/index/v1/stream?lock=999999999 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`,
    );
  });
}

buildOnce();
const chain = await startSeededChain();
await chain.devnet.clients.testClient.mine({ blocks: 32 });
const database = await createTestDatabase(PG_URL);
const databaseUrl = (database.forPonder("bench_v1") as { url: string }).url;
const common = {
  rpcUrl: chain.devnet.rpcUrl,
  manifestFile: chain.manifestFile,
  databaseUrl,
  env: {
    REDIS_URL: "",
    LOG_LEVEL: "error",
    INDEXER_POLLING_MS: "200",
    MAX_CONNECTIONS_PER_IP: String(STREAMS + 1_000),
    STREAM_MAX_PER_IP: String(STREAMS + 100),
    STREAM_MAX: String(STREAMS + 100),
    // Every stream is a request under the `index` budget (300 a minute per address by default).
    RATE_LIMIT_MAX: "1000000",
  },
};
const indexer = await spawnService({ ...common, command: "start", schema: "bench_v1", viewsSchema: "bench" });
const sockets: Socket[] = [];
const listener = new pg.Client({ connectionString: databaseUrl });
try {
  await indexer.waitFor200("/ready", 180_000);
  const api = await spawnService({ ...common, command: "api", schema: "bench_v1", viewsSchema: "bench" });
  await api.waitFor200("/ready", 60_000);
  await healthP99(api.url, 200); // warm
  const before = { rss: rssMb(api.pid), heap: await heapMb(api.url), health: await healthP99(api.url) };
  console.log(
    `baseline: RSS ${before.rss.toFixed(1)} MB, /health p50 ${before.health.p50.toFixed(2)} p99 ${before.health.p99.toFixed(2)} ms (load ${load()})`,
  );

  const t0 = performance.now();
  for (let i = 0; i < STREAMS; i += 250) {
    const batch = await Promise.all(Array.from({ length: Math.min(250, STREAMS - i) }, () => openIdle(api.port)));
    sockets.push(...batch);
  }
  console.log(`opened ${sockets.length} streams in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await new Promise((r) => setTimeout(r, 3_000));
  const after = { rss: rssMb(api.pid), heap: await heapMb(api.url), health: await healthP99(api.url) };
  // The heap again after a while (GC has had time to take what opening them left behind), with the RSS then.
  await new Promise((r) => setTimeout(r, 20_000));
  const settled = { rss: rssMb(api.pid), heap: await heapMb(api.url) };
  console.log(
    `heap used: ${before.heap.toFixed(1)} MB before, ${after.heap.toFixed(1)} MB after opening (+${(((after.heap - before.heap) * 1024) / STREAMS).toFixed(1)} KB a stream), ${settled.heap.toFixed(1)} MB 20 s later (+${(((settled.heap - before.heap) * 1024) / STREAMS).toFixed(1)} KB a stream); RSS then ${settled.rss.toFixed(1)} MB`,
  );
  const perStreamKb = ((after.rss - before.rss) * 1024) / sockets.length;
  console.log(
    `with ${sockets.length} idle streams: RSS ${after.rss.toFixed(1)} MB (+${(after.rss - before.rss).toFixed(1)} MB, ${perStreamKb.toFixed(1)} KB each), /health p50 ${after.health.p50.toFixed(2)} p99 ${after.health.p99.toFixed(2)} ms (${(after.health.p99 / before.health.p99).toFixed(2)}× baseline; load ${load()})`,
  );

  // Lock-to-stream: the index's commit (its NOTIFY, as the API process receives it) to the stream's event.
  await listener.connect();
  const committed = new Map<bigint, number>();
  listener.on("notification", (m) => {
    const b = BigInt(m.payload!.slice(26, 42));
    if (!committed.has(b)) committed.set(b, performance.now());
  });
  await listener.query(`LISTEN "bench_block"`);
  const arrived = new Map<bigint, number>();
  const res = await fetch(`${api.url}/api/index/v1/stream?stats`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const m of value.matchAll(/id: (\d+)\nevent: stats/g)) {
        const b = BigInt(m[1]!);
        if (!arrived.has(b)) arrived.set(b, performance.now());
      }
    }
  })();
  await new Promise((r) => setTimeout(r, 1_000));
  const blocks: bigint[] = [];
  for (let i = 0; i < LOCKS; i++) {
    await send(chain.devnet, DEVNET_ACCOUNTS.alice.privateKey, {
      address: chain.devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [1_000n * 10n ** 18n, 0n, 30n * 86_400n, false, 1n],
    });
    const b = await headBlock(chain.devnet);
    blocks.push(b);
    const end = Date.now() + 20_000;
    while (!arrived.has(b) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  }
  await reader.cancel();
  const lat = blocks.filter((b) => arrived.has(b) && committed.has(b)).map((b) => arrived.get(b)! - committed.get(b)!);
  const missing = blocks.length - lat.length;
  console.log(
    `lock-to-stream over ${lat.length} locks (${missing} missing): p50 ${quantile(lat, 0.5).toFixed(1)} ms, p99 ${quantile(lat, 0.99).toFixed(1)} ms = ${(quantile(lat, 0.99) / 2000).toFixed(3)} Base blocks after the index's commit`,
  );
  const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
  console.log(
    metrics
      .split("\n")
      .filter((l) => /^api_(streams_|stream_events|index_signal)/.test(l))
      .join("\n"),
  );
  console.log(
    `stream-idle: ${sockets.length} idle streams +${(after.rss - before.rss).toFixed(0)} MB RSS, /health p99 ${after.health.p99.toFixed(1)} ms (baseline ${before.health.p99.toFixed(1)}); lock-to-stream p99 ${(quantile(lat, 0.99) / 2000).toFixed(3)} blocks`,
  );
  for (const s of sockets) s.destroy();
  await api.stop();
} finally {
  for (const s of sockets) s.destroy();
  await listener.end().catch(() => {});
  await indexer.stop();
  await database.drop();
  await chain.stop();
}
