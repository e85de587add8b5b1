/**
 * A webhook receiver down for DOWN_S (default 60) seconds, on the production shape: the seeded devnet, one indexer
 * (`ponder start --views-schema`, Postgres) and TWO API processes (dist/server/main.js) sharing the outbox, with the
 * default retry schedule (WEBHOOK_RETRY_SCHEDULE unset: 5 s, 30 s, 2 min, …) unless SCHEDULE is given.
 * 1. A webhook on `stats` (every lock event) and bob's account; one lock delivered first (warm-up).
 * 2. The receiver's port closed; a lock created every ~3 s for DOWN_S seconds.
 * 3. The receiver back on the same port: the time until every block's delivery is acknowledged, whether they arrived
 *    in block order, how many were acknowledged twice (by webhook-id), and the attempts refused while it was down.
 * Usage: npx tsx bench/webhook-outage.ts   (DOWN_S=n SCHEDULE=5,30,…)
 */
import { getAddress } from "viem";
import { DEVNET_ABIS } from "../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { buildOnce } from "../test/support/build";
import { send } from "../test/support/devnet";
import { startSeededChain } from "../test/support/indexChain";
import { headBlock } from "../test/support/lockChain";
import { createTestDatabase } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";
import { WebhookReceiver } from "../test/support/webhookReceiver";

const DOWN_S = Number(process.env.DOWN_S ?? 60);
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const TOKEN = "bench-operator-token-0123456789";
const E18 = 10n ** 18n;

buildOnce();
const chain = await startSeededChain();
const database = await createTestDatabase(PG_URL);
const receiver = new WebhookReceiver();
const services: Awaited<ReturnType<typeof spawnService>>[] = [];
try {
  await chain.devnet.clients.testClient.mine({ blocks: 32 });
  const common = {
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    databaseUrl: (database.forPonder("s_v1") as { url: string }).url,
    env: {
      REDIS_URL: "",
      LOG_LEVEL: "error",
      INDEXER_POLLING_MS: "200",
      OPERATOR_TOKEN: TOKEN,
      WEBHOOK_ALLOW_PRIVATE: "loopback",
      ...(process.env.SCHEDULE ? { WEBHOOK_RETRY_SCHEDULE: process.env.SCHEDULE } : {}),
    },
  };
  const indexer = await spawnService({ ...common, command: "start", schema: "s_v1", viewsSchema: "s" });
  services.push(indexer);
  await indexer.waitFor200("/ready", 120_000);
  const apis = await Promise.all(
    [0, 1].map(() => spawnService({ ...common, command: "api", schema: "s_v1", viewsSchema: "s" })),
  );
  services.push(...apis);
  await Promise.all(apis.map((a) => a.waitFor200("/ready", 60_000)));
  await receiver.up();
  const bob = getAddress(DEVNET_ACCOUNTS.bob.address);
  const reg = await fetch(`${apis[0]!.url}/api/index/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, topics: ["stats", `account:${bob}`] }),
  });
  if (reg.status !== 201) throw new Error(`registration: ${reg.status} ${await reg.text()}`);
  const lock = async (amount: bigint) => {
    await send(chain.devnet, DEVNET_ACCOUNTS.bob.privateKey, {
      address: chain.devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [amount * E18, 0n, 30n * 86_400n, false, 1n],
    });
    return (await headBlock(chain.devnet)).toString();
  };
  const blockOf = (body: string) => (JSON.parse(body) as { data: { blockNumber: string } }).data.blockNumber;
  const warm = await lock(1_000n);
  await receiver.until((acked) => acked.filter((r) => blockOf(r.body) === warm).length === 2, 60_000);

  await receiver.down();
  const downAt = Date.now();
  const blocks: string[] = [];
  for (let i = 0; Date.now() - downAt < DOWN_S * 1000; i++) {
    blocks.push(await lock(1_000n + BigInt(i)));
    await new Promise((r) => setTimeout(r, 3_000));
  }
  await receiver.up();
  const upAt = Date.now();
  const wanted = new Set(blocks);
  await receiver.until(
    (acked) => acked.filter((r) => wanted.has(blockOf(r.body))).length === blocks.length * 2,
    20 * 60_000,
  );
  const caughtUpMs = Date.now() - upAt;
  await new Promise((r) => setTimeout(r, 2_000));
  const acked = receiver.acked().filter((r) => wanted.has(blockOf(r.body)));
  const order = acked.map((r) => BigInt(blockOf(r.body)));
  const inOrder = order.every((b, i) => i === 0 || order[i - 1]! <= b);
  const ids = acked.map((r) => r.id);
  const metrics = await Promise.all(apis.map(async (a) => (await fetch(`${a.url}/api/metrics`)).text()));
  const outcome = (m: string, o: string) =>
    Number(new RegExp(`api_webhook_attempts_total\\{outcome="${o}"\\} (\\d+)`).exec(m)?.[1] ?? 0);
  console.log(
    JSON.stringify({
      downSeconds: Math.round((upAt - downAt) / 1000),
      schedule: process.env.SCHEDULE ?? "default (5,30,120,…)",
      blocksWhileDown: blocks.length,
      deliveriesExpected: blocks.length * 2,
      deliveriesAcknowledged: acked.length,
      acknowledgedTwice: ids.length - new Set(ids).size,
      inBlockOrder: inOrder,
      caughtUpSecondsAfterUp: Math.round(caughtUpMs / 100) / 10,
      attempts: {
        delivered: metrics.reduce((s, m) => s + outcome(m, "delivered"), 0),
        retry: metrics.reduce((s, m) => s + outcome(m, "retry"), 0),
        dead: metrics.reduce((s, m) => s + outcome(m, "dead"), 0),
      },
    }),
  );
} finally {
  await receiver.down();
  await Promise.all(services.map((s) => s.stop()));
  await database.drop();
  await chain.stop();
}
