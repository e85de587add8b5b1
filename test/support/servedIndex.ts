/**
 * The API process as operators run it (dist/server/main.js, test/support/replica.ts) over a synthetic index on
 * Postgres (test/support/syntheticIndex.ts, Ponder's tables and indexes): the topology of test/graphql/served.test.ts
 * and bench/graphql-page.ts, set up in one place. A devnet is there for the manifest and the node the process checks
 * at start-up; the index itself is written straight to a fresh schema of a fresh database. The caller builds dist/
 * (vitest's globalSetup, or buildOnce in a bench).
 */
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { startDevnet, type TestDevnet } from "./devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "./ponder";
import { type ServiceChild, spawnService } from "./replica";
import {
  generateSyntheticIndex,
  type SyntheticIndex,
  type SyntheticOptions,
  writeSyntheticIndex,
} from "./syntheticIndex";

export type ServedIndexOptions = {
  /** The Postgres server; a database of its own is made on it and dropped at the end. */
  serverUrl: string;
  /** The schema the index is written to and the API process reads. */
  schema: string;
  synthetic: SyntheticOptions;
  /** Added to the API process's environment (LOG_LEVEL=error and no Redis unless said). */
  env?: Record<string, string | undefined>;
};

export type ServedIndex = {
  devnet: TestDevnet;
  database: TestDatabase;
  /** The database holding `schema`, for the caller's own sessions. */
  databaseUrl: string;
  schema: string;
  /** The index written (throws once released). */
  readonly index: SyntheticIndex;
  /**
   * Lets the caller's process drop the synthetic index (hundreds of MB at Base scale) once it has taken what it needs
   * from it: a bench whose own collections of that heap ran on both cores beside the API process it measures.
   */
  releaseIndex(): void;
  /** Started and answering 200 on /health (a new one after `restartApi`). */
  api: ServiceChild;
  /** Kills the API process and starts a fresh one on the same index (a bench's parts from the same start). */
  restartApi(): Promise<ServiceChild>;
  /** Kills the API process, drops the database, stops the devnet, removes the manifest. */
  stop(): Promise<void>;
};

export async function startServedIndex(options: ServedIndexOptions): Promise<ServedIndex> {
  const undo: (() => Promise<unknown> | unknown)[] = [];
  const stop = async () => {
    for (const step of undo.reverse()) await step();
    undo.length = 0;
  };
  try {
    const devnet = await startDevnet();
    undo.push(() => devnet.stop());
    const manifestFile = writeManifest(devnet.deployment.manifest);
    undo.push(() => rmSync(path.dirname(manifestFile), { recursive: true, force: true }));
    const database = await createTestDatabase(options.serverUrl);
    undo.push(() => database.drop());
    if (database.kind !== "postgres") throw new Error("startServedIndex: a Postgres server URL is needed");
    const databaseUrl = (database.forPonder(options.schema) as { url: string }).url;
    let index: SyntheticIndex | undefined = generateSyntheticIndex(options.synthetic);
    const writer = new pg.Client({ connectionString: databaseUrl });
    await writer.connect();
    try {
      await writeSyntheticIndex((text, params) => writer.query(text, params), options.schema, index, {
        chainId: devnet.deployment.manifest.chainId,
      });
    } finally {
      await writer.end();
    }
    const spawnApi = async () => {
      const api = await spawnService({
        command: "api",
        rpcUrl: devnet.rpcUrl,
        manifestFile,
        databaseUrl,
        schema: options.schema,
        env: { LOG_LEVEL: "error", REDIS_URL: "", ...options.env },
      });
      undo.push(() => api.stop("SIGKILL"));
      await api.waitFor200("/health", 30_000);
      return api;
    };
    const served: ServedIndex = {
      devnet,
      database,
      databaseUrl,
      schema: options.schema,
      get index() {
        if (index === undefined) throw new Error("startServedIndex: the synthetic index was released");
        return index;
      },
      releaseIndex() {
        index = undefined;
      },
      api: await spawnApi(),
      async restartApi() {
        await served.api.stop("SIGKILL");
        served.api = await spawnApi();
        return served.api;
      },
      stop,
    };
    return served;
  } catch (error) {
    await stop();
    throw error;
  }
}
