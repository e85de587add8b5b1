/**
 * The live topology of the stream and webhook tests: the seeded devnet with 32 blocks mined (so `/ready` means
 * indexed), a fresh Postgres database, ONE indexer (`ponder start --schema s_v1 --views-schema s`, so the API
 * processes LISTEN for its commits) and `apis` API processes (dist/server/main.js) reading the views; `spawnApi`
 * starts one more on the same index (another configuration: `env` added to the topology's), `spawnIndexer` another
 * indexer on the same views schema (a redeploy's or a re-index's new schema). `stop` ends them all, drops the database
 * and stops the devnet.
 */
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import type { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { send } from "./devnet";
import { type SeededChain, startSeededChain } from "./indexChain";
import { createTestDatabase, type TestDatabase } from "./ponder";
import { type ServiceChild, spawnService } from "./replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const SCHEMA = "s_v1";
const VIEWS = "s";

export type LiveTopology = {
  chain: SeededChain;
  database: TestDatabase;
  /** The database holding the index, for the test's own sessions. */
  databaseUrl: string;
  indexer: ServiceChild;
  apis: ServiceChild[];
  spawnApi(env?: Record<string, string>): Promise<ServiceChild>;
  /** `ponder start --schema <schema> --views-schema s` on the same database, with the topology's environment. */
  spawnIndexer(schema: string, logLevel?: "warn" | "info"): Promise<ServiceChild>;
  /** The definition of the views schema's checkpoint view: it names the schema the views read. */
  viewsTarget(): Promise<string>;
  stop(): Promise<void>;
};

export async function startLiveTopology(o: { apis: number; env: Record<string, string> }): Promise<LiveTopology> {
  const chain = await startSeededChain();
  await chain.devnet.clients.testClient.mine({ blocks: 32 });
  const database = await createTestDatabase(PG_URL);
  const databaseUrl = (database.forPonder(SCHEMA) as { url: string }).url;
  const started: ServiceChild[] = [];
  const common = { rpcUrl: chain.devnet.rpcUrl, manifestFile: chain.manifestFile, databaseUrl };
  const spawn = async (
    command: "start" | "api",
    env: Record<string, string> = {},
    schema = SCHEMA,
    logLevel?: "warn" | "info",
  ) => {
    const child = await spawnService({
      ...common,
      command,
      schema,
      viewsSchema: VIEWS,
      env: { ...o.env, ...env },
      logLevel,
    });
    started.push(child);
    return child;
  };
  const viewsTarget = async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT definition FROM pg_views WHERE schemaname = '${VIEWS}' AND viewname = '_ponder_checkpoint'`,
      );
      return String(rows[0]?.definition ?? "");
    } finally {
      await client.end();
    }
  };
  const stop = async () => {
    await Promise.all(started.map((p) => p.stop()));
    await database.drop();
    await chain.stop();
  };
  try {
    const indexer = await spawn("start");
    await indexer.waitFor200("/ready", 120_000);
    const apis = await Promise.all(Array.from({ length: o.apis }, () => spawn("api")));
    await Promise.all(apis.map((api) => api.waitFor200("/ready", 60_000)));
    return {
      chain,
      database,
      databaseUrl,
      indexer,
      apis,
      spawnApi: (env) => spawn("api", env),
      spawnIndexer: (schema, logLevel) => spawn("start", {}, schema, logLevel),
      viewsTarget,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A new lock for `who` through the Furnace (enterWithClaim: `amount` tokens, 30 days): one block, a lock event. */
export const lockViaFurnace = (chain: SeededChain, who: (typeof DEVNET_ACCOUNTS)["alice"], amount: bigint) =>
  send(chain.devnet, who.privateKey, {
    address: chain.devnet.addresses.Furnace,
    abi: DEVNET_ABIS.Furnace,
    functionName: "enterWithClaim",
    args: [amount * 10n ** 18n, 0n, 30n * 86_400n, false, 1n],
  });

/**
 * A test file's live topology with one API process, Ponder polling every 200 ms: started before its tests, stopped
 * after them. Without Redis, errors logged; with `redisPrefix`, on Redis (TEST_REDIS_URL) under a prefix of the file's
 * own, its keys deleted after, and a rate limit no test meets. The getter throws before it has started.
 */
export function liveTopologyPerFile(o: { redisPrefix?: string } = {}): () => LiveTopology {
  let topology: LiveTopology | undefined;
  const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  const prefix = `${o.redisPrefix}:${process.pid}:${Date.now()}:`;
  beforeAll(
    async () => {
      topology = await startLiveTopology({
        apis: 1,
        env:
          o.redisPrefix === undefined
            ? { REDIS_URL: "", LOG_LEVEL: "error", INDEXER_POLLING_MS: "200" }
            : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: "1000000", INDEXER_POLLING_MS: "200" },
      });
    },
    o.redisPrefix === undefined ? 240_000 : 300_000,
  );
  afterAll(async () => {
    await topology?.stop();
    if (o.redisPrefix === undefined) return;
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  return () => {
    if (!topology) throw new Error("the live topology has not started");
    return topology;
  };
}
