/**
 * The production topology the process-level benches measure: the seeded devnet (32 blocks mined so `/ready`
 * means indexed), a fresh Postgres database, one `ponder start` indexer and `apis` API processes (the built
 * dist/server/main.js, `npm run serve:api`) on its views schema. Shared by bench/soak.ts and
 * bench/abuse-memory.ts; `stop()` kills what it started and drops the database.
 */

import pg from "pg";
import { buildOnce } from "../test/support/build";
import { startDevnet } from "../test/support/devnet";
import { createTestDatabase, writeManifest } from "../test/support/ponder";
import { type ServiceChild, spawnService } from "../test/support/replica";
import { startServedIndex } from "../test/support/servedIndex";

export const BENCH_PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const BENCH_REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/**
 * The views schema `ponder start --views-schema` leaves over `schema`: one view per table, Ponder's checkpoint
 * included, so an API process reading `views` hears each commit (LISTEN/NOTIFY: api/read/indexSignal.ts).
 */
export async function createViewsSchema(
  db: { query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> },
  schema: string,
  views: string,
): Promise<void> {
  const { rows } = await db.query(
    "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
    [schema],
  );
  await db.query(`CREATE SCHEMA "${views}"`);
  for (const { t } of rows as { t: string }[]) {
    await db.query(`CREATE VIEW "${views}"."${t}" AS SELECT * FROM "${schema}"."${t}"`);
  }
}

/**
 * A synthetic index of Base's proportions (bench/index-api.ts: 520,000 events over 95,000 owners) in Postgres behind a
 * views schema, for benches that run their own API processes on it (the one startServedIndex spawns is stopped);
 * `admin` is a client on its database, playing the indexer's commits.
 */
export async function servedBehindViews(o: { events: number; schema: string; views: string; seed: number }) {
  buildOnce();
  const served = await startServedIndex({
    serverUrl: BENCH_PG_URL,
    schema: o.schema,
    synthetic: { events: o.events, owners: Math.max(20, Math.round((o.events * 95_000) / 520_000)), seed: o.seed },
  });
  await served.api.stop("SIGKILL");
  const admin = new pg.Client({ connectionString: served.databaseUrl });
  await admin.connect();
  await createViewsSchema(admin, o.schema, o.views);
  return { served, admin };
}

export type ProductionTopologyOptions = {
  /** Ponder's schema; the API processes read `${schema}` views under `viewsSchema`. */
  schema: string;
  viewsSchema: string;
  /** How many API processes. */
  apis: number;
  /** Added to every process's environment (REDIS_URL, REDIS_KEY_PREFIX, LOG_LEVEL, …). */
  env: Record<string, string>;
  /** Added to the API processes' environment only (e.g. NODE_OPTIONS=--cpu-prof for a profile). */
  apiEnv?: Record<string, string>;
};

export type ProductionTopology = {
  apis: ServiceChild[];
  /** Every process started, the indexer first. */
  processes: ServiceChild[];
  /** Starts one more API process on the same index (another configuration: `env` added to the topology's). */
  spawnApi(env?: Record<string, string>, argv?: string[]): Promise<ServiceChild>;
  /** Stops the processes (`signal`: SIGTERM lets an API process drain and write a --cpu-prof profile), drops the database. */
  stop(signal?: NodeJS.Signals): Promise<void>;
};

export async function startProductionTopology(o: ProductionTopologyOptions): Promise<ProductionTopology> {
  // The API processes run the bundle: built from this checkout, never a stale dist/.
  buildOnce();
  const devnet = await startDevnet({ seed: true });
  await devnet.clients.testClient.mine({ blocks: 32 });
  const database = await createTestDatabase(BENCH_PG_URL);
  const processes: ServiceChild[] = [];
  const stop = async (signal: NodeJS.Signals = "SIGKILL") => {
    await Promise.all(processes.map((p) => p.stop(signal)));
    await database.drop();
    await devnet.stop();
  };
  try {
    const common = {
      rpcUrl: devnet.rpcUrl,
      manifestFile: writeManifest(devnet.deployment.manifest),
      databaseUrl: (database.forPonder(o.schema) as { url: string }).url,
      schema: o.schema,
      viewsSchema: o.viewsSchema,
    };
    const indexer = await spawnService({ ...common, command: "start", env: o.env });
    processes.push(indexer);
    await indexer.waitFor200("/ready", 120_000);
    const spawnApi = async (env: Record<string, string> = {}, argv?: string[]) => {
      const install = argv ? { cwd: process.cwd(), argv } : undefined;
      const api = await spawnService({ ...common, command: "api", env: { ...o.env, ...o.apiEnv, ...env }, install });
      processes.push(api);
      return api;
    };
    const apis = await Promise.all(Array.from({ length: o.apis }, () => spawnApi()));
    await Promise.all(apis.map((a) => a.waitFor200("/ready", 60_000)));
    return { apis, processes, spawnApi, stop };
  } catch (error) {
    for (const p of processes) if (!p.running()) console.error(`${p.command} exited:\n${p.log().slice(-4_000)}`);
    await stop();
    throw error;
  }
}
