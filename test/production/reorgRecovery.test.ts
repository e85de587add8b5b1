/**
 * docs/operations.md "Unrecoverable reorg", end to end in the production topology: the devnet, `ponder start` on
 * Postgres with its views schema and Ponder's sync cache ON (INDEXER_DISABLE_CACHE=false, as on Base), one API
 * process. A reorg deeper than Ponder's finalized block replaces alice's lock with bob's in the same block; the API
 * refuses "replaced branch". Then the runbook's steps: stop the stuck indexer, rewind the sync cache
 * (scripts/rewind-sync-cache.mjs: dry run, then --apply), start a new indexer on a new schema with the same views
 * schema. The API serves again without a restart, with the canonical rows (bob's lock, no trace of alice's), and
 * the gauge is back to 0. Without the rewind (the runbook before it) the new schema is the orphaned branch again:
 * Ponder back-fills from ponder_sync, whose blocks, logs and intervals still hold it, and the API keeps refusing.
 *
 * A webhook receiver on 127.0.0.1 follows stats and both accounts throughout: it was delivered alice's lock (the
 * orphaned branch) and Ponder never reverts it, so what it hears after the switch is the API's own check of what it
 * fed (api/webhooks/engine.ts): one `index.reverted` per delivery of the orphaned block, before anything else, then
 * the topics' answers at the new head (bob's lock), nothing delivered twice.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type LiveTopology, lockViaFurnace, startLiveTopology } from "../support/liveTopology";
import { REPO_ROOT } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";
import { type Received, WebhookReceiver } from "../support/webhookReceiver";
import { registerWebhook, WEBHOOK_OPERATOR_TOKEN } from "../support/webhookTopology";

const BASE = "/api/index/v1";
const ENV = {
  REDIS_URL: "",
  LOG_LEVEL: "info",
  INDEXER_POLLING_MS: "200",
  INDEXER_DISABLE_CACHE: "false",
  RATE_LIMIT_MAX: "1000000",
  OPERATOR_TOKEN: WEBHOOK_OPERATOR_TOKEN,
  WEBHOOK_ALLOW_PRIVATE: "loopback",
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let topology: LiveTopology;
let api: ServiceChild;
let next: ServiceChild | undefined;
const receiver = new WebhookReceiver();

type Payload = {
  type: string;
  data: { topic: string; blockNumber: string; revertedId?: string; head?: string; answer?: unknown };
};
const parsed = (r: Received) => JSON.parse(r.body) as Payload;

beforeAll(async () => {
  topology = await startLiveTopology({ apis: 1, env: ENV });
  api = topology.apis[0]!;
  await receiver.up();
}, 480_000);

afterAll(async () => {
  await receiver.down();
  await next?.stop();
  await topology?.stop();
});

async function query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: topology.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Ponder's finalized block, as its checkpoint table in the views schema says. */
async function finalizedBlock(): Promise<bigint> {
  const rows = await query<{ finalized_checkpoint: string }>("SELECT finalized_checkpoint FROM s._ponder_checkpoint");
  return rows[0] ? BigInt(rows[0].finalized_checkpoint.slice(26, 42)) : 0n;
}

/** The runbook's script, as an operator runs it with the indexer's environment: exit code and its JSON lines. */
async function rewind(...args: string[]): Promise<{ code: number; lines: Record<string, unknown>[]; stderr: string }> {
  const env = { ...process.env, DATABASE_URL: topology.databaseUrl, RPC_URL: topology.chain.devnet.rpcUrl };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["scripts/rewind-sync-cache.mjs", ...args], {
      cwd: REPO_ROOT,
      env,
      timeout: 60_000,
    });
    return {
      code: 0,
      lines: stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l)),
      stderr,
    };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, lines: [], stderr: e.stderr };
  }
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;
async function get(path: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${path}`);
  return { status: res.status, body: (await res.json()) as Json };
}

describe("the Unrecoverable reorg runbook", () => {
  it("re-indexes the chain as it is now: the API serves the canonical rows again, gauge 0, no restart", async () => {
    const { chain } = topology;
    const test = chain.devnet.clients.testClient;
    const publicClient = chain.devnet.clients.publicClient;

    // A webhook on stats and both accounts, fed from the head on.
    const [alice, bobAddress] = [DEVNET_ACCOUNTS.alice.address, DEVNET_ACCOUNTS.bob.address];
    const hook = await registerWebhook(api, receiver, ["stats", `account:${alice}`, `account:${bobAddress}`]);
    expect(hook.id).toMatch(/^wh_/);

    // The old branch: alice's lock, then blocks until Ponder has finalized it (and written it to ponder_sync).
    const fork = await test.snapshot();
    const orphan = await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 3_000n);
    // Its deliveries reach the receiver: alice's account and stats at its block.
    const at = orphan.blockNumber.toString();
    const orphaned = await receiver.until((acked) => {
      const hit = acked.filter((r) => parsed(r).data.blockNumber === at);
      return hit.length === 2 && hit;
    });
    expect(orphaned.map((r) => parsed(r).data.topic).sort()).toEqual([`account:${alice}`, "stats"].sort());
    const beforeRecovery = receiver.acked().length;
    await test.mine({ blocks: 70 });
    for (let i = 0; i < 120 && (await finalizedBlock()) < orphan.blockNumber; i++) {
      await test.mine({ blocks: 1 });
      await sleep(1_000);
    }
    expect(await finalizedBlock()).toBeGreaterThanOrEqual(orphan.blockNumber);

    // The new branch from before it: bob's lock in the same block (the same token id), and more blocks than before.
    const oldHead = await publicClient.getBlockNumber({ cacheTime: 0 });
    await test.revert({ id: fork });
    const canonical = await lockViaFurnace(chain, DEVNET_ACCOUNTS.bob, 2_000n);
    expect(canonical.blockNumber).toBe(orphan.blockNumber);
    const forkHead = await publicClient.getBlockNumber({ cacheTime: 0 });
    await test.mine({ blocks: Number(oldHead - forkHead) + 10 });

    // The alarm: every index answer refused.
    let stats = await get(`${BASE}/stats`);
    for (let i = 0; i < 120 && stats.body.detail?.reason !== "replaced branch"; i++) {
      await sleep(500);
      stats = await get(`${BASE}/stats`);
    }
    expect(stats).toMatchObject({ status: 503, body: { detail: { reason: "replaced branch" } } });
    expect(api.log()).toContain("index on a replaced branch");

    // Step 1: stop the stuck indexer. Its lock stays live for Ponder's 25 s heartbeat timeout; the script waits it out.
    await topology.indexer.stop();
    const early = await rewind();
    expect(early.code).toBe(1);
    expect(early.stderr).toContain("stop every indexer first");
    await sleep(26_000);

    // Step 2: the dry run finds the replaced block and changes nothing; --apply deletes from there, intervals included.
    const dry = await rewind();
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.lines[0]).toMatchObject({ lowestReplaced: orphan.blockNumber.toString() });
    const from = BigInt(dry.lines[1]!.fromBlock as string);
    expect(from).toBeLessThanOrEqual(orphan.blockNumber);
    expect((dry.lines[1]!.wouldDelete as Json).logs).toBeGreaterThan(0);
    const stored = `SELECT count(*)::int AS n FROM ponder_sync.logs WHERE block_number >= ${from}`;
    const before = (await query<{ n: number }>(stored))[0]!.n;
    expect(before).toBeGreaterThan(0);
    const applied = await rewind("--apply");
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.lines[1]).toMatchObject({ msg: "sync cache rewound", fromBlock: from.toString() });
    expect((await query<{ n: number }>(stored))[0]!.n).toBe(0);
    expect((await rewind()).lines).toEqual([
      expect.objectContaining({ lowestReplaced: null }),
      { msg: "every stored block is the node's: nothing to rewind" },
    ]);

    // Step 3: a new indexer on a new schema, the same views schema; the API follows the views within its checks.
    next = await spawnService({
      command: "start",
      rpcUrl: chain.devnet.rpcUrl,
      manifestFile: chain.manifestFile,
      databaseUrl: topology.databaseUrl,
      schema: "s_v2",
      viewsSchema: "s",
      env: ENV,
    });
    await next.waitFor200("/ready", 120_000);
    stats = await get(`${BASE}/stats`);
    for (let i = 0; i < 60 && stats.status !== 200; i++) {
      await sleep(500);
      stats = await get(`${BASE}/stats`);
    }
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(api.log()).toContain("index back on the canonical branch");
    const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
    expect(metrics).toMatch(/^api_index_replaced_branch 0$/m);

    // The receiver: every delivery of the orphaned branch reverted, once each, before anything else; then the new
    // head's answers. Heads come as the chain moves (Base's every 2 s).
    const wanted = new Set(orphaned.map((r) => r.id));
    let told: Received[] = [];
    for (let i = 0; i < 60; i++) {
      await test.mine({ blocks: 1 });
      await sleep(500);
      told = receiver.acked().slice(beforeRecovery);
      if (told.some((r) => parsed(r).type !== "index.reverted")) break;
    }
    await sleep(1_500); // anything else the feed would send
    told = receiver.acked().slice(beforeRecovery);
    const reverts = told.filter((r) => parsed(r).type === "index.reverted");
    expect(reverts.map((r) => parsed(r).data.revertedId).sort(), JSON.stringify(told.map((r) => r.body))).toEqual(
      [...wanted].sort(),
    );
    expect(told.slice(0, reverts.length)).toEqual(reverts); // first, before any delivery of the new branch
    const head = parsed(reverts[0]!).data.head!;
    for (const r of reverts) expect(parsed(r).data).toMatchObject({ blockNumber: at, head });
    const answers = told.slice(reverts.length).map(parsed);
    expect(answers.map((p) => [p.type, p.data.topic, p.data.blockNumber]).sort()).toEqual(
      [
        ["index.stats", "stats", head],
        ["index.account", `account:${alice}`, head],
        ["index.account", `account:${bobAddress}`, head],
      ].sort(),
    );
    // Each answer is the REST route's at that head, of the new schema's rows.
    const rest = await get(`${BASE}/stats?block=${head}`);
    const fed = (answers.find((p) => p.data.topic === "stats")!.data as { answer?: Json }).answer!;
    const { indexLagSeconds: _a, stale: _b, ...fedStats } = fed;
    const { indexLagSeconds: _c, stale: _d, ...restStats } = rest.body;
    expect(fedStats).toEqual(restStats);
    const ids = receiver.acked().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length); // nothing delivered twice

    // The canonical rows: bob's lock event where the chain has it, nothing of alice's orphaned transaction.
    const events = await query<{ tx_hash: string; token_id: string; block_number: string }>(
      "SELECT tx_hash, token_id::text, block_number::text FROM s_v2.lock_event WHERE block_number >= $1",
      [from.toString()],
    );
    expect(events.map((e) => e.tx_hash)).not.toContain(orphan.transactionHash);
    const bob = events.find((e) => e.tx_hash === canonical.transactionHash);
    expect(bob?.block_number).toBe(canonical.blockNumber.toString());
    for (const e of events) {
      const receipt = await publicClient.getTransactionReceipt({ hash: e.tx_hash as `0x${string}` });
      expect(receipt.blockNumber.toString()).toBe(e.block_number);
    }
    const lock = await get(`${BASE}/locks/${bob!.token_id}`);
    expect(lock.status).toBe(200);
    expect(JSON.stringify(lock.body).toLowerCase()).toContain(DEVNET_ACCOUNTS.bob.address.toLowerCase());
    expect(JSON.stringify(lock.body).toLowerCase()).not.toContain(DEVNET_ACCOUNTS.alice.address.toLowerCase());
  }, 420_000);
});
