/**
 * The state route through the served process: GET /api/mcp/v1/state/:address on the API process operators run
 * (api/server/main.ts, `npm run serve:api`, its own process) reading a real index (`ponder start
 * --views-schema` on Postgres) over a seeded devnet, against the same route answered in-process by createApp
 * (app.request: no socket, no server) with the same index module (api/server/indexDatabase.ts) and the same
 * node, same run. Sequential requests, 5 alternating rounds × 200 each; the figure is served p50 / in-process
 * p50 (what serving over a socket from its own process adds to one state answer). Also reported: served
 * throughput with 8 connections for 3 s.
 * Usage: npx tsx bench/served-state.ts
 */
import autocannon from "autocannon";
import { createApp } from "../api/app";
import { openIndexDatabase } from "../api/server/indexDatabase";
import { createServiceDeps } from "../api/server/process";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { startDevnet } from "../test/support/devnet";
import { createTestDatabase, writeManifest } from "../test/support/ponder";
import { type ServiceChild, spawnService } from "../test/support/replica";

const ROUNDS = 5;
const PER_ROUND = 200;
const PATH = `/api/mcp/v1/state/${DEVNET_ACCOUNTS.alice.address}`;
process.env.LOG_LEVEL = "warn";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

async function p50(get: () => Promise<Response>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < PER_ROUND; i++) {
    const t0 = performance.now();
    const res = await get();
    const body = await res.text();
    if (res.status !== 200 || !body.includes('"subgraph+rpc"')) throw new Error(`state: ${res.status} ${body}`);
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

const devnet = await startDevnet({ seed: true });
await devnet.clients.testClient.mine({ blocks: 32 });
const database = await createTestDatabase(
  process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
);
const processes: ServiceChild[] = [];
try {
  const databaseUrl = (database.forPonder("bench_v1") as { url: string }).url;
  const common = {
    rpcUrl: devnet.rpcUrl,
    manifestFile: writeManifest(devnet.deployment.manifest),
    databaseUrl,
    schema: "bench_v1",
    viewsSchema: "bench",
    env: { REDIS_URL: undefined, RATE_LIMIT_MAX: "1000000", LOG_LEVEL: "warn" },
  };
  const indexer = await spawnService({ ...common, command: "start" });
  processes.push(indexer);
  await indexer.waitFor200("/ready", 120_000);
  const api = await spawnService({ ...common, command: "api" });
  processes.push(api);
  await api.waitFor200("/ready", 30_000);

  const deps = await createServiceDeps({
    env: { NETWORK: "local", MANIFEST_FILE: common.manifestFile, RPC_URL: devnet.rpcUrl, RATE_LIMIT_MAX: "1000000" },
  });
  const index = openIndexDatabase({ url: databaseUrl, schema: "bench" });
  const app = createApp({ ...deps, index: { locks: index.locks, atBlock: null } });

  const served = () => fetch(`${api.url}${PATH}`);
  const inProcess = async () => app.request(PATH);
  await p50(served);
  await p50(inProcess); // warm-up
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? [served, inProcess] : [inProcess, served];
    const [first, second] = [await p50(order[0]!), await p50(order[1]!)];
    const [s, i] = round % 2 ? [first, second] : [second, first];
    ratios.push(s / i);
    console.log(
      `round ${round}: served p50 ${s.toFixed(2)} ms, in-process p50 ${i.toFixed(2)} ms → ${(s / i).toFixed(2)}`,
    );
  }
  const load = await autocannon({ url: `${api.url}${PATH}`, connections: 8, duration: 3 });
  if (load.non2xx || load.errors) throw new Error(`load: ${load.non2xx} non-2xx, ${load.errors} errors`);
  console.log(
    `served throughput: ${Math.round(load.requests.average)} req/s, p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms (8 connections, 3 s)`,
  );
  await index.close();
  await deps.limiter?.close().catch(() => {});
  console.log(`served-state: state route, API process p50 / in-process p50 = ${median(ratios).toFixed(2)}`);
} finally {
  await Promise.all(processes.map((p) => p.stop()));
  await database.drop();
  await devnet.stop();
}
