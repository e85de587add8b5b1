import { createApp } from "../api/app";
import { createLogger } from "../api/observability/logger";
import { openIndexDatabase } from "../api/server/indexDatabase";
import { devnetClients } from "../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { createTestDatabase, startPonder, writeManifest } from "../test/support/ponder";
import type { benchDevnet } from "./readsDevnet";

/**
 * The real lock index for the state benchmarks: `ponder start` on Postgres over a bench devnet, caught up to
 * the head, and an app that reads it. `freeze()` stops the indexer, so the chain can run ahead of it (lag).
 */
export async function benchIndex(b: Awaited<ReturnType<typeof benchDevnet>>) {
  const clients = devnetClients(b.anvil.rpcUrl, b.deployment.chainId);
  await clients.testClient.mine({ blocks: 32 }); // past Ponder's 30-block finality depth
  const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
  const database = await createTestDatabase(
    process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  );
  let ponder: Awaited<ReturnType<typeof startPonder>> | undefined = await startPonder({
    rpcUrl: b.anvil.rpcUrl,
    manifestFile: writeManifest(b.deployment.manifest),
    database: database.forPonder("bench_state"),
  });
  await ponder.waitForBlock(head, 120_000);
  // The lock index exactly as the API process (`npm run serve:api`) opens it: its pool, its prepared statement.
  const ponderDb = database.forPonder("bench_state");
  if (ponderDb.kind !== "postgres") throw new Error("the state benchmarks need Postgres");
  const index = openIndexDatabase({ url: ponderDb.url, schema: ponderDb.schema });
  const store = index.locks;
  const app = createApp({
    config: b.config,
    rpc: b.rpc,
    logger: createLogger({ level: "warn" }),
    index: { locks: store, watermark: index.watermark },
  });
  const get = async (p: string) => {
    const res = await app.request(p);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${p} → ${res.status} ${body}`);
    return body;
  };
  return {
    app,
    store,
    database,
    get,
    clients,
    /** Waits until the index has the chain's head. */
    async catchUp() {
      const now = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
      await ponder?.waitForBlock(now, 60_000);
    },
    async freeze() {
      await ponder?.stop();
      ponder = undefined;
    },
    /** A new lock for `fresh` through the prepare route's own batch, sent by its wallet. */
    async lockViaFurnace() {
      const who = DEVNET_ACCOUNTS.fresh;
      const q = `user=${who.address}&claimAmountWei=${1500n * 10n ** 18n}&durationSeconds=${14 * 86_400}`;
      const env = JSON.parse(await get(`/api/mcp/v1/prepare/lock-via-furnace?${q}`)) as {
        transactions: { to: `0x${string}`; data: `0x${string}`; value: string }[];
      };
      const wallet = clients.walletFor(who.privateKey);
      for (const tx of env.transactions) {
        const hash = await wallet.sendTransaction({
          to: tx.to,
          data: tx.data,
          value: BigInt(tx.value),
          chain: clients.chain,
        });
        const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
        if (receipt.status !== "success") throw new Error("lock-via-furnace reverted");
      }
    },
    async stop() {
      await index.close().catch(() => {});
      await ponder?.stop();
      await database.drop();
    },
  };
}
