import type { LockStore } from "../../api/read/contract";
import { createLockStore } from "../../api/read/store";
import {
  createTestDatabase,
  type IndexDb,
  openIndexDb,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "./ponder";
import type { ReadsDevnet } from "./readsDevnet";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export type IndexedReads = {
  database: TestDatabase;
  ponder: PonderProcess;
  index: IndexDb;
  /** The real LockStore over Ponder's tables on Postgres. */
  store: LockStore;
  /** Closes the index connection, stops Ponder and drops the database (the devnet is the caller's). */
  stop(): Promise<void>;
};

/**
 * The real indexer (`ponder start`) over a seeded reads devnet, on a fresh Postgres database, caught up with
 * every seeded event: blocks are mined past Ponder's 30-block finality depth first, then it waits for the head.
 */
export async function indexSeededDevnet(d: ReadsDevnet, schema: string): Promise<IndexedReads> {
  await d.chain.testClient.mine({ blocks: 32 });
  const head = await d.chain.publicClient.getBlockNumber({ cacheTime: 0 });
  const database = await createTestDatabase(PG_URL);
  let ponder: PonderProcess | undefined;
  try {
    ponder = await startPonder({
      rpcUrl: d.anvil.rpcUrl,
      manifestFile: writeManifest(d.deployment.manifest),
      database: database.forPonder(schema),
    });
    await ponder.waitForBlock(head, 120_000);
    const index = await openIndexDb(database.forPonder(schema));
    const p = ponder;
    return {
      database,
      ponder: p,
      index,
      store: createLockStore({ db: index.db }),
      async stop() {
        await index.close().catch(() => {});
        await p.stop();
        await database.drop();
      },
    };
  } catch (error) {
    await ponder?.stop();
    await database.drop();
    throw error;
  }
}
