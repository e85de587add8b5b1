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
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { buildOnce } from "../test/support/build";
import { type LiveTopology, lockViaFurnace } from "../test/support/liveTopology";
import { headBlock } from "../test/support/lockChain";
import { WebhookReceiver } from "../test/support/webhookReceiver";
import { registerWebhook, startWebhookTopology } from "../test/support/webhookTopology";

const DOWN_S = Number(process.env.DOWN_S ?? 60);

buildOnce();
const receiver = new WebhookReceiver();
let topology: LiveTopology | undefined;
try {
  topology = await startWebhookTopology({
    apis: 2,
    env: process.env.SCHEDULE ? { WEBHOOK_RETRY_SCHEDULE: process.env.SCHEDULE } : {},
  });
  const { chain, apis } = topology;
  await receiver.up();
  const bob = getAddress(DEVNET_ACCOUNTS.bob.address);
  await registerWebhook(apis[0]!, receiver, ["stats", `account:${bob}`]);
  const lock = async (amount: bigint) => {
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, amount);
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
  await topology?.stop();
}
