/**
 * The set-up the chain-comparison tests share: a seeded devnet whose actors can act (test/support/lockChain.ts),
 * real `ponder start` indexers over it (PGlite, or a fresh Postgres database), and for the in-process tests the app
 * over the live index. Each part stops what it started, also when a later step of its start fails.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { type ApiApp, createApp } from "../../api/app";
import { createRpcClient } from "../../api/chain/rpc";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createLockIndex } from "../../api/read/atBlock";
import type { SeedResult } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "./devnet";
import { headBlock, prepareActors } from "./lockChain";
import {
  createTestDatabase,
  type IndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "./ponder";

/** Runs the registered stops last-first; every one runs even when an earlier one throws. */
class Stops {
  private readonly stops: (() => Promise<unknown> | unknown)[] = [];
  add(stop: () => Promise<unknown> | unknown): void {
    this.stops.push(stop);
  }
  async run(): Promise<void> {
    const errors: unknown[] = [];
    for (const stop of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, "stopping the index chain");
  }
  /** `start()`, and on failure everything registered so far stopped before the error is rethrown. */
  async guard<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (error) {
      await this.run().catch(() => {});
      throw error;
    }
  }
}

export interface SeededChain {
  /** The seeded devnet; `prepareActors` has run, so applyLockOps can act for every actor. */
  devnet: TestDevnet & { seed: SeedResult };
  /** The devnet's manifest on disk (MANIFEST_FILE for the indexers and API processes). */
  manifestFile: string;
  stop(): Promise<void>;
}

export async function startSeededChain(): Promise<SeededChain> {
  const stops = new Stops();
  return stops.guard(async () => {
    const devnet = await startDevnet({ seed: true });
    stops.add(() => devnet.stop());
    await prepareActors(devnet);
    const manifestFile = writeManifest(devnet.deployment.manifest);
    stops.add(() => rmSync(path.dirname(manifestFile), { recursive: true, force: true }));
    return { devnet, manifestFile, stop: () => stops.run() };
  });
}

export interface IndexerOptions {
  /**
   * The Postgres server the indexer gets a fresh database on; "" for a PGlite directory. Default: DATABASE_URL
   * (PGlite when unset), so one test runs on either as test/run.mjs chooses.
   */
  databaseUrl?: string;
  /** Ponder's schema (`--schema`), default "indexer". */
  schema?: string;
  /** Added to the indexer's environment: DATABASE_VIEWS_SCHEMA, API_PORT + HOST (npm start's API inside it), … */
  env?: Record<string, string | undefined>;
}

export interface Indexer {
  database: TestDatabase;
  ponder: PonderProcess;
  /** Resolves once Ponder's /status says every block up to the chain's head is in the tables. */
  catchUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** `ponder start` over `chain` on a database of its own, once it has indexed the chain's head. */
export async function startIndexer(chain: SeededChain, opts: IndexerOptions = {}): Promise<Indexer> {
  const stops = new Stops();
  return stops.guard(async () => {
    const database = await createTestDatabase(opts.databaseUrl);
    stops.add(() => database.drop());
    const ponder = await startPonder({
      rpcUrl: chain.devnet.rpcUrl,
      manifestFile: chain.manifestFile,
      database: database.forPonder(opts.schema),
      extraEnv: opts.env,
    });
    stops.add(() => ponder.stop());
    const catchUp = async (timeoutMs?: number) => ponder.waitForBlock(await headBlock(chain.devnet), timeoutMs);
    await catchUp(120_000);
    return { database, ponder, catchUp, stop: () => stops.run() };
  });
}

export interface IndexChain extends SeededChain, Indexer {
  /** The live index read from the test process (Ponder's own client on PGlite: see PonderProcess.openDb). */
  idx: IndexDb;
  /** The app in-process over `idx` and the devnet's RPC, rate limit lifted (router.test.ts owns that budget). */
  app: ApiApp;
}

/** A seeded devnet, one indexer over it (on DATABASE_URL's Postgres, else PGlite) and the app in-process. */
export async function startIndexChain(): Promise<IndexChain> {
  const stops = new Stops();
  return stops.guard(async () => {
    const chain = await startSeededChain();
    stops.add(() => chain.stop());
    const indexer = await startIndexer(chain);
    stops.add(() => indexer.stop());
    const idx = await indexer.ponder.openDb();
    stops.add(() => idx.close());
    const config = loadConfig({ NETWORK: "local", MANIFEST_FILE: chain.manifestFile, RPC_URL: chain.devnet.rpcUrl });
    const app = createApp({
      // The comparisons send thousands of requests; the budget itself is test/index/router.test.ts's business.
      config: { ...config, rateLimit: { max: 1_000_000, windowSec: 60 } },
      rpc: createRpcClient({ url: chain.devnet.rpcUrl, timeoutMs: 10_000 }),
      index: { atBlock: createLockIndex({ db: idx.db, schema: indexer.ponder.schema }) },
      logger: silentLogger,
    });
    return { ...chain, ...indexer, idx, app, stop: () => stops.run() };
  });
}
