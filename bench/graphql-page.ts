/**
 * GraphQL on the served API process (dist/server/main.js, as `npm run serve:api` runs it) over a synthetic Postgres
 * index (test/support/syntheticIndex.ts, shaped like Ponder's tables; a devnet only for the manifest and the node):
 * 1. an account's 100-event page through `POST /graphql` vs the same REST route
 *    (`/api/index/v1/accounts/{a}/events?limit=100`), request by request interleaved, in rounds; the figure is the
 *    median of the rounds' p50 ratios (goal ≤ 1.5× REST);
 * 2. clients that never read: sockets pipelining GraphQL requests with large answers and reading nothing; the API
 *    process's RSS and descriptors during and after, and another client's `/health` p99 meanwhile.
 * Usage: npx tsx bench/graphql-page.ts [events=100000] [samples=300]
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { getAddress } from "viem";
import { buildOnce } from "../test/support/build";
import { startDevnet } from "../test/support/devnet";
import { createTestDatabase, writeManifest } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";
import { generateSyntheticIndex, writeSyntheticIndex } from "../test/support/syntheticIndex";

const EVENTS = Number(process.argv[2] ?? 100_000);
const SAMPLES = Number(process.argv[3] ?? 300);
const ROUNDS = 5;
const SCHEMA = "bench_graphql";
const SILENT_SOCKETS = 50;
const PIPELINED = 4;
const HOLD_MS = 10_000;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
};
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const descriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const load = () => `load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

buildOnce();
const devnet = await startDevnet();
const manifestFile = writeManifest(devnet.deployment.manifest);
const database = await createTestDatabase(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
const databaseUrl = (database.forPonder(SCHEMA) as { url: string }).url;
let api: Awaited<ReturnType<typeof spawnService>> | undefined;
try {
  const index = generateSyntheticIndex({ events: EVENTS, owners: Math.max(50, EVENTS / 10), seed: 31 });
  const writer = new pg.Client({ connectionString: databaseUrl });
  await writer.connect();
  await writeSyntheticIndex((text, params) => writer.query(text, params), SCHEMA, index, {
    chainId: devnet.deployment.manifest.chainId,
  });
  await writer.end();
  api = await spawnService({
    command: "api",
    rpcUrl: devnet.rpcUrl,
    manifestFile,
    databaseUrl,
    schema: SCHEMA,
    env: { LOG_LEVEL: "error", REDIS_URL: "", RATE_LIMIT_MAX: "1000000" },
  });
  await api.waitFor200("/health", 30_000);
  const pid = api.pid;
  const base = api.url;

  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  const busiest = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 100)
    .map(([a]) => getAddress(a));
  const FIELDS =
    "kind tokenId account amountWei lockEnd autoMax fromTokenId recipient owner lockAmountWei listed blockNumber blockTimestamp txHash logIndex";
  const graphqlBody = (a: string, limit = 100) =>
    JSON.stringify({ query: `{ lockEvents(where: { account: "${a}" }, limit: ${limit}) { items { ${FIELDS} } } }` });
  const viaGraphql = async (a: string) => {
    const res = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: graphqlBody(a),
    });
    const body = (await res.json()) as { errors?: unknown };
    if (res.status !== 200 || body.errors) throw new Error(`graphql: ${res.status} ${JSON.stringify(body)}`);
  };
  const viaRest = async (a: string) => {
    const res = await fetch(`${base}/api/index/v1/accounts/${a}/events?limit=100`);
    await res.json();
    if (res.status !== 200) throw new Error(`rest: ${res.status}`);
  };

  // ------------------------------------------------------------------ 1. a page: GraphQL vs REST
  const rssStart = rssMb(pid);
  const fdStart = descriptors(pid);
  for (const a of busiest.slice(0, 20)) await Promise.all([viaGraphql(a), viaRest(a)]); // warm-up
  console.log(`synthetic index: ${index.events.length} events; ${load()}`);
  const gq: number[] = [];
  const rest: number[] = [];
  const ratios: number[] = [];
  const perRound = Math.floor(SAMPLES / ROUNDS);
  for (let i = 0; i < perRound * ROUNDS; i++) {
    const a = busiest[i % busiest.length]!;
    // Alternate which goes first, so neither always meets a warmer cache.
    const order: [number[], (a: string) => Promise<void>][] =
      i % 2 === 0
        ? [
            [gq, viaGraphql],
            [rest, viaRest],
          ]
        : [
            [rest, viaRest],
            [gq, viaGraphql],
          ];
    for (const [into, call] of order) {
      const t = performance.now();
      await call(a);
      into.push(performance.now() - t);
    }
    if ((i + 1) % perRound === 0) ratios.push(pct(gq.slice(-perRound), 50) / pct(rest.slice(-perRound), 50));
  }
  const ratio = pct(ratios, 50);
  console.log(
    `an account's 100-event page, ${perRound * ROUNDS} each, sequential: GraphQL p50 ${pct(gq, 50).toFixed(2)} p99 ` +
      `${pct(gq, 99).toFixed(2)} ms | REST p50 ${pct(rest, 50).toFixed(2)} p99 ${pct(rest, 99).toFixed(2)} ms | ` +
      `${ratio.toFixed(2)}× (median of ${ROUNDS} rounds: ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); ${load()}`,
  );
  console.log(
    `API process: RSS ${rssStart.toFixed(0)} → ${rssMb(pid).toFixed(0)} MB, descriptors ${fdStart} → ${descriptors(pid)}`,
  );

  // ------------------------------------------------------------------ 2. clients that never read
  const rssBefore = rssMb(pid);
  const fdBefore = descriptors(pid);
  const big = graphqlBody(busiest[0]!, 1000);
  const request =
    `POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(big)}\r\n\r\n${big}`;
  const { port } = new URL(base);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < SILENT_SOCKETS; i++) {
    const s = net.connect({ host: "127.0.0.1", port: Number(port), localAddress: `127.0.1.${(i % 200) + 1}` });
    s.on("error", () => {});
    s.pause(); // never reads
    s.write(request.repeat(PIPELINED));
    sockets.push(s);
  }
  let peakRss = rssBefore;
  let peakFd = fdBefore;
  const health: number[] = [];
  const until = performance.now() + HOLD_MS;
  while (performance.now() < until) {
    const t = performance.now();
    const res = await fetch(`${base}/health`);
    await res.text();
    health.push(performance.now() - t);
    peakRss = Math.max(peakRss, rssMb(pid));
    peakFd = Math.max(peakFd, descriptors(pid));
    await sleep(20);
  }
  const open = sockets.filter((s) => !s.destroyed).length;
  for (const s of sockets) s.destroy();
  await sleep(10_000);
  console.log(
    `${SILENT_SOCKETS} sockets × ${PIPELINED} pipelined GraphQL requests (1,000-event answers), never read, ${HOLD_MS / 1000} s: ` +
      `RSS ${rssBefore.toFixed(0)} MB → peak +${(peakRss - rssBefore).toFixed(0)} MB, +${(rssMb(pid) - rssBefore).toFixed(0)} MB ` +
      `10 s after; descriptors ${fdBefore} → peak ${peakFd} → ${descriptors(pid)}; still open at the end ${open}; ` +
      `another client's /health p50 ${pct(health, 50).toFixed(1)} p99 ${pct(health, 99).toFixed(1)} ms (${health.length}); ${load()}`,
  );
  console.log(`\nfigure: GraphQL page / REST page p50 = ${ratio.toFixed(2)}× (goal ≤ 1.5)`);
} finally {
  await api?.stop("SIGKILL");
  await database.drop();
  await devnet.stop();
  rmSync(path.dirname(manifestFile), { recursive: true, force: true });
}
