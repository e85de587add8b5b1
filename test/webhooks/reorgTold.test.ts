/**
 * Every reorg reaches the webhooks, however it happens (red team rthook F1, F5, F6), through the served processes:
 * the seeded devnet, ONE indexer (`ponder start` on Postgres) and an API process, reorgs made with evm_snapshot /
 * evm_revert. A second reorg landing on the same head height as the one before is told (it was taken for the one
 * before: the feed judged "already handled" by the height); a reorg while the API's LISTEN connection is down, or
 * while no API process runs, is told when the feed next reads the index (it was never told: only the live signal said
 * there was one); and a delivery in flight when its block is orphaned ends before its `index.reverted` is sent, and is
 * listed delivered when acknowledged (the revert was sent beside it, and it was listed cancelled).
 * Each receiver's last word on a topic is the chain's, read with eth_call at that block.
 */
import pg from "pg";
import { type Address, getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import type { SeededChain } from "../support/indexChain";
import { type LiveTopology, lockViaFurnace } from "../support/liveTopology";
import { headBlock, readChainLocks } from "../support/lockChain";
import type { ServiceChild } from "../support/replica";
import { type Received, WebhookReceiver } from "../support/webhookReceiver";
import { registerWebhook, startWebhookTopology, WEBHOOK_OPERATOR_TOKEN } from "../support/webhookTopology";

let chain: SeededChain;
let topology: LiveTopology;
let api: ServiceChild;
const receivers: WebhookReceiver[] = [];

type Body = {
  type: string;
  data: { topic: string; blockNumber: string; answer?: { locks?: { tokenId: string }[] }; revertedId?: string };
};
const parsed = (r: Received) => JSON.parse(r.body) as Body;
const who = (name: "alice" | "bob" | "carol") => getAddress(DEVNET_ACCOUNTS[name].address);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receiver(): Promise<WebhookReceiver> {
  const r = new WebhookReceiver();
  await r.up();
  receivers.push(r);
  return r;
}

async function operator(method: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${api.url}/api/index/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${WEBHOOK_OPERATOR_TOKEN}` },
  });
  return (await res.json()) as Record<string, unknown>;
}

/** The chain's live locks of `owner` at `block`, as the account answer lists them (token ids ascending). */
async function chainLocks(owner: Address, block: bigint): Promise<bigint[]> {
  return (await readChainLocks(chain.devnet, block)).locks
    .filter((l) => l.owner === owner && l.amount > 0n)
    .map((l) => l.tokenId)
    .sort((x, y) => (x < y ? -1 : 1));
}

/** The receiver's last word on `account:<owner>` (after every revert it was sent), and that it is the chain's. */
async function expectLastWordIsChain(r: WebhookReceiver, owner: Address): Promise<void> {
  const acked = r.acked().map(parsed);
  const reverted = new Set(acked.filter((b) => b.type === "index.reverted").map((b) => b.data.revertedId));
  const ids = r.acked().map((x) => x.id);
  const standing = acked.filter(
    (b, i) => b.type === "index.account" && b.data.topic === `account:${owner}` && !reverted.has(ids[i]),
  );
  const last = standing.at(-1);
  expect(last, `no standing answer for ${owner}`).toBeDefined();
  const sent = last!.data.answer!.locks!.map((l) => BigInt(l.tokenId));
  expect(sent).toEqual(await chainLocks(owner, BigInt(last!.data.blockNumber)));
}

/** The index's head block, read in the database (with no API process up). */
async function indexHead(): Promise<bigint> {
  const client = new pg.Client({ connectionString: topology.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT latest_checkpoint FROM s._ponder_checkpoint");
    return BigInt(String(rows[0]!.latest_checkpoint).slice(26, 42));
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  topology = await startWebhookTopology({
    apis: 1,
    env: { WEBHOOK_RETRY_SCHEDULE: "0.3,0.5,1", WEBHOOK_TIMEOUT_MS: "10000" },
  });
  chain = topology.chain;
  api = topology.apis[0]!;
}, 240_000);

afterAll(async () => {
  for (const r of receivers) await r.down();
  await topology?.stop();
});

/**
 * A receiver subscribed to bob's and carol's accounts (and the stats), a snapshot taken, then bob's lock on that fork,
 * its delivery awaited: the branch the tests replace.
 */
async function bobLockedOnAFork(amount: bigint) {
  const { testClient } = chain.devnet.clients;
  const r = await receiver();
  const [bob, carol] = [who("bob"), who("carol")];
  const hook = await registerWebhook(api, r, ["stats", `account:${bob}`, `account:${carol}`]);
  await testClient.mine({ blocks: 1 });
  await sleep(1_000);
  const snapshot = await testClient.snapshot();
  await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, amount);
  const height = (await headBlock(chain.devnet)).toString();
  const bobs = await r.until((acked) =>
    acked.find((x) => parsed(x).data.topic === `account:${bob}` && parsed(x).data.blockNumber === height),
  );
  return { r, bob, carol, hook, snapshot, bobs };
}

/**
 * The delivery `revertedId` was reverted, an account answer for each of `owners` followed, and each owner's last
 * standing answer equals the chain's locks at its block.
 */
async function expectToldReverted(r: WebhookReceiver, revertedId: string, owners: Address[]): Promise<void> {
  await r.until((acked) => acked.find((x) => parsed(x).data.revertedId === revertedId), 30_000);
  await r.until((acked) => {
    const at = acked.findIndex((x) => parsed(x).data.revertedId === revertedId);
    return acked.slice(at).filter((x) => parsed(x).type === "index.account").length >= owners.length;
  });
  for (const owner of owners) await expectLastWordIsChain(r, owner);
}

describe("webhooks: every reorg is told", () => {
  it("a delivery in flight when its block is orphaned ends before its index.reverted is sent, and is listed delivered", async () => {
    const { testClient } = chain.devnet.clients;
    const r = await receiver();
    r.delayMs = 4_000;
    const hook = await registerWebhook(api, r, ["stats"]);
    await sleep(1_000);
    const snapshot = await testClient.snapshot();
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, 1_000n);
    const orphan = (await headBlock(chain.devnet)).toString();
    // As soon as the orphan's delivery is at the receiver (its answer 4 s away), the block is replaced.
    for (let i = 0; i < 100 && !r.received.some((x) => parsed(x).data.blockNumber === orphan); i++) await sleep(50);
    const original = r.received.find((x) => parsed(x).data.blockNumber === orphan)!;
    expect(original).toBeDefined();
    await testClient.revert({ id: snapshot });
    await testClient.mine({ blocks: 2 });
    const revert = await r.until((acked) => acked.find((x) => parsed(x).type === "index.reverted"), 40_000);
    expect(parsed(revert).data.revertedId).toBe(original.id);
    // Its request came after the original's answer (one at a time per webhook, oldest first).
    expect(revert.at).toBeGreaterThanOrEqual(original.at + r.delayMs - 50);
    const listed = (await operator("GET", `/webhooks/deliveries?webhook=${hook.id}`)).deliveries as {
      id: string;
      status: string;
    }[];
    expect(listed.find((d) => d.id === original.id)?.status).toBe("delivered");
    await operator("DELETE", `/webhooks/${hook.id}`);
  }, 90_000);

  it("a second reorg landing on the same head height as the one before is told", async () => {
    const { testClient } = chain.devnet.clients;
    const r = await receiver();
    const [alice, bob, carol] = [who("alice"), who("bob"), who("carol")];
    const hook = await registerWebhook(api, r, [`account:${alice}`, `account:${bob}`, `account:${carol}`]);
    await testClient.mine({ blocks: 1 });
    await sleep(1_000);
    let snapshot = await testClient.snapshot();
    // Three branches, each one block over the same fork: alice's lock, then bob's, then carol's at the same height.
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 1_100n);
    const height = (await headBlock(chain.devnet)).toString();
    await r.until((acked) => acked.find((x) => parsed(x).data.topic === `account:${alice}`));
    await testClient.revert({ id: snapshot });
    snapshot = await testClient.snapshot();
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, 1_200n);
    expect((await headBlock(chain.devnet)).toString()).toBe(height);
    const bobs = await r.until((acked) =>
      acked.find(
        (x, i) =>
          acked.slice(0, i).some((y) => parsed(y).type === "index.reverted") &&
          parsed(x).data.topic === `account:${bob}` &&
          parsed(x).data.blockNumber === height,
      ),
    );
    await testClient.revert({ id: snapshot });
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.carol, 1_300n);
    expect((await headBlock(chain.devnet)).toString()).toBe(height);
    await testClient.mine({ blocks: 3 });
    // Bob's answer of the second branch is reverted, and the new head's answers follow.
    await expectToldReverted(r, bobs.id, [alice, bob, carol]);
    await operator("DELETE", `/webhooks/${hook.id}`);
  }, 120_000);

  it("a reorg while the API's LISTEN connection is down is told", async () => {
    const { testClient } = chain.devnet.clients;
    const { r, bob, carol, hook, snapshot, bobs } = await bobLockedOnAFork(1_400n);
    const admin = new pg.Client({ connectionString: topology.databaseUrl });
    await admin.connect();
    try {
      // This database's only: the API processes of other test files on the same server listen under the name too.
      const { rows } = await admin.query(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = 'lock-index-signal' AND datname = current_database()",
      );
      expect(rows.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await testClient.revert({ id: snapshot });
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.carol, 1_500n);
    await testClient.mine({ blocks: 3 });
    await expectToldReverted(r, bobs.id, [bob, carol]);
    await operator("DELETE", `/webhooks/${hook.id}`);
  }, 120_000);

  it("a reorg while no API process runs is told by the next one to start", async () => {
    const { testClient } = chain.devnet.clients;
    const { r, bob, carol, hook, snapshot, bobs } = await bobLockedOnAFork(1_600n);
    await api.stop();
    await testClient.revert({ id: snapshot });
    await lockViaFurnace(chain, DEVNET_ACCOUNTS.carol, 1_700n);
    await testClient.mine({ blocks: 3 });
    const head = await headBlock(chain.devnet);
    for (let i = 0; i < 200 && (await indexHead()) < head; i++) await sleep(100);
    expect(await indexHead()).toBe(head);
    api = await topology.spawnApi();
    await api.waitFor200("/ready", 60_000);
    await expectToldReverted(r, bobs.id, [bob, carol]);
    await operator("DELETE", `/webhooks/${hook.id}`);
  }, 120_000);
});
