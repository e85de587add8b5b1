import { Redis } from "ioredis";
import pg from "pg";
import { parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { send, startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

// The README's zero-downtime redeploy on this machine: indexer v1 (`ponder start --schema asset_v1 --views-schema
// asset`) and one API process (`npm run serve:api` reading the views schema `asset`: the replica); then indexer v2 on
// a NEW schema (asset_v2) with the SAME views schema while the replica is polled without pause; then v1 is stopped
// and its schema dropped.
//
// What Ponder (0.16, 0.17) does with --views-schema (dist/esm/runtime/omnichain.js → database/actions.js createViews): once
// the backfill is done, in ONE transaction, it DROPs and re-CREATEs every `<views>.<table>` (and _ponder_meta,
// _ponder_checkpoint) as `SELECT * FROM <schema>.<table>`, then sets is_ready = 1 in its own _ponder_meta in a
// SEPARATE statement. Nothing touches the views before that, and nothing on shutdown. So the views follow v1 until v2
// has caught up, then v2; stopping v1 changes nothing for the replica. The one seam: between those two statements the
// views' _ponder_meta is v2's with is_ready = 0, so for a few ms the replica answers "rpc" with no locks (still 200).

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PREFIX = `redeploytest:${process.pid}:${Date.now()}:`;
const E18 = 10n ** 18n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let devnet: TestDevnet;
let database: TestDatabase;
let databaseUrl: string;
let common: Omit<Parameters<typeof spawnService>[0], "command" | "schema">;
let v1: ServiceChild;
let v2: ServiceChild | undefined;
let replica: ServiceChild;

type Locks = { tokenId: string; amountWei: string; lockEnd: string; autoMax: boolean }[];
type Answer = { status: number; source?: string; locks?: Locks; error?: string };

async function stateOf(address: string): Promise<Answer> {
  try {
    const res = await fetch(`${replica.url}/api/mcp/v1/state/${address}`, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { source?: string; user?: { veLocks?: Locks } };
    // An AutoMax lock's end is its answer's block time + 365 days (getLockInfo, protocol.md §8): it moves with
    // every block, so "the same locks" compares it as that rule, not as a figure.
    const locks = body.user?.veLocks?.map((l) => (l.autoMax ? { ...l, lockEnd: "block time + 365 days" } : l));
    return { status: res.status, source: body.source, locks };
  } catch (error) {
    return { status: -1, error: String(error) };
  }
}

async function viewTarget(): Promise<string> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      "SELECT definition FROM pg_views WHERE schemaname = 'asset' AND viewname IN ('lock', '_ponder_meta') ORDER BY viewname",
    );
    return rows.map((r) => r.definition as string).join("\n");
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  devnet = await startDevnet({ seed: true });
  // Ponder treats the last 30 blocks as unfinalized: mine past them so /ready means every seeded event is in.
  await devnet.clients.testClient.mine({ blocks: 32 });
  database = await createTestDatabase(PG_URL);
  databaseUrl = (database.forPonder("asset_v1") as { url: string }).url;
  common = {
    rpcUrl: devnet.rpcUrl,
    manifestFile: writeManifest(devnet.deployment.manifest),
    databaseUrl,
    logLevel: "info",
    // The poll loop must never meet the rate limit: it is not what this test is about.
    env: { REDIS_URL, REDIS_KEY_PREFIX: PREFIX, RATE_LIMIT_MAX: "1000000" },
  };
  v1 = await spawnService({ ...common, command: "start", schema: "asset_v1", viewsSchema: "asset" });
  await v1.waitFor200("/ready", 90_000);
  replica = await spawnService({ ...common, command: "api", schema: "asset_v1", viewsSchema: "asset" });
  await replica.waitFor200("/ready", 60_000);
}, 180_000);

afterAll(async () => {
  await Promise.all([replica?.stop(), v1?.stop(), v2?.stop()]);
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await database?.drop();
  await devnet?.stop();
}, 60_000);

describe("zero-downtime redeploy: new schema, same views schema", () => {
  it("the replica keeps serving the same locks while v2 catches up, follows v2 once ready, and survives v1's stop", async () => {
    const alice = DEVNET_ACCOUNTS.alice.address;
    const fresh = DEVNET_ACCOUNTS.fresh;

    // The baseline: the replica serves alice's locks from the index (v1 through the views).
    let baseline: Answer | undefined;
    for (let deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
      const a = await stateOf(alice);
      if (a.status === 200 && a.source === "subgraph+rpc") {
        baseline = a;
        break;
      }
    }
    expect(baseline?.locks?.length, JSON.stringify(baseline)).toBeGreaterThan(0);
    expect(await viewTarget()).toContain("asset_v1");

    // Poll the replica for the whole episode, one request at a time, 100 ms apart (bounded by `stopPolling`).
    const answers: (Answer & { at: number })[] = [];
    let stopPolling = false;
    const polling = (async () => {
      for (let i = 0; !stopPolling && i < 2_000; i++) {
        const at = performance.now();
        answers.push({ ...(await stateOf(alice)), at });
        await sleep(100);
      }
    })();
    let tokenId: string | undefined;
    let v2ReadyAt = Number.POSITIVE_INFINITY;
    const indexed = (a: Answer) => a.source === "subgraph+rpc";
    // Never a failed request, and never a wrong list: the index answers baseline's locks or, in the switch window
    // (see checkSwitchWindow), the replica degrades to its documented "rpc" answer with no locks.
    const failed = () =>
      answers.filter(
        (a) =>
          a.status !== 200 ||
          (indexed(a)
            ? JSON.stringify(a.locks) !== JSON.stringify(baseline?.locks)
            : a.source !== "rpc" || a.locks?.length !== 0),
      );
    // Ponder commits the new views (including _ponder_meta → v2's, is_ready still 0) and THEN sets is_ready = 1 in a
    // second statement: a request landing between the two sees the index as not ready. Measured with back-to-back
    // polling: 1 of ~1,000 requests during v2's catch-up, i.e. a window of a few ms. So: degraded answers only
    // before v2's /ready said 200, all within one short burst.
    const checkSwitchWindow = () => {
      const degraded = answers.filter((a) => !indexed(a));
      expect(degraded.length, JSON.stringify(degraded)).toBeLessThanOrEqual(2);
      for (const a of degraded) expect(a.at).toBeLessThan(v2ReadyAt);
      if (degraded.length === 2) expect(degraded[1]!.at - degraded[0]!.at).toBeLessThan(1_000);
    };

    try {
      // v2: a new schema, the same views schema. Until it has caught up the views must still be v1's.
      v2 = await spawnService({ ...common, command: "start", schema: "asset_v2", viewsSchema: "asset" });
      await v2.waitFor200("/ready", 90_000);
      v2ReadyAt = performance.now();
      const duringCatchUp = answers.length;
      expect(v2.log()).toContain("Created database views");
      expect(await viewTarget()).toContain("asset_v2");
      expect(await viewTarget()).not.toContain("asset_v1");
      expect(failed(), `v2 catch-up, ${duringCatchUp} answers`).toEqual([]);
      checkSwitchWindow();

      // A new lock, created after the switch: the replica lists it, i.e. the views follow a live indexer.
      const token = devnet.addresses.AssetToken;
      // Through the Furnace, as on Base (VeLockNFT.createLockFor accepts only the Furnace).
      const furnace = devnet.addresses.Furnace;
      await send(devnet, fresh.privateKey, {
        address: token,
        abi: DEVNET_ABIS.AssetToken,
        functionName: "approve",
        args: [furnace, 1_000n * E18],
      });
      const receipt = await send(devnet, fresh.privateKey, {
        address: furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [1_000n * E18, 0n, 7n * 86_400n, false, 1n], // 7 days: no devnet bonus, the amount stays round
      });
      const [created] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
      tokenId = created?.args.tokenId.toString();
      expect(tokenId).toBeDefined();
      let listed: Answer | undefined;
      for (let deadline = Date.now() + 20_000; Date.now() < deadline; await sleep(100)) {
        const f = await stateOf(fresh.address);
        if (f.source === "subgraph+rpc" && f.locks?.some((l) => l.tokenId === tokenId)) {
          listed = f;
          break;
        }
      }
      expect(listed?.locks, `lock ${tokenId} never listed`).toEqual([
        { tokenId, amountWei: (1_000n * E18).toString(), lockEnd: expect.any(String), autoMax: false },
      ]);

      // v1 stops (SIGTERM, graceful): the replica does not notice.
      const exit = await v1.stop("SIGTERM");
      expect(exit.code).toBe(0);
      const afterStop = answers.length;
      for (let deadline = Date.now() + 5_000; answers.length < afterStop + 10 && Date.now() < deadline; )
        await sleep(100);
      expect(answers.length).toBeGreaterThanOrEqual(afterStop + 10);
    } finally {
      stopPolling = true;
      await polling;
    }
    expect(answers.length).toBeGreaterThan(30);
    expect(failed(), `${answers.length} answers`).toEqual([]);
    checkSwitchWindow();

    // The README's last step: drop the old schema. Nothing the replica reads depends on it any more.
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    try {
      await c.query('DROP SCHEMA "asset_v1" CASCADE');
    } finally {
      await c.end();
    }
    const after = await stateOf(alice);
    expect(after).toEqual(baseline);
    expect((await stateOf(fresh.address)).locks?.map((l) => l.tokenId)).toEqual([tokenId]);
    await replica.waitFor200("/ready", 5_000);
  }, 150_000);
});
