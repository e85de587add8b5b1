/**
 * GraphQL against the chain through the processes users run (issue 23, 6 and 9), over ONE seeded devnet:
 * - production: `ponder start` on Postgres writing schema asset_v1 with the views schema asset, and the API process
 *   (dist/server/main.js, `npm run serve:api`) reading the views;
 * - the local stack (`npm start`, devnet/start.ts): one `ponder start` on PGlite with the API served inside it on
 *   API_PORT (src/api/index.ts).
 * Each is waited for by its data (`_meta.block` at the chain's head), never /ready, and compared over POST /graphql
 * with the chain at `_meta.block` (test/support/graphqlChain.ts): every lock and every owner's locks after the seed
 * and after fast-check generated activity (merges, unlocks, transfers, AutoMax changes, listings), and an account's
 * lockEvents pages holding their block while new blocks with its own new events are mined and indexed.
 */
import fc from "fast-check";
import { getAddress, parseEventLogs, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VeLockNFTAbi } from "../../abis";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import {
  expectGraphqlLocksMatchChain,
  expectLockEventPagesHoldBlock,
  type GraphqlPost,
  graphqlPost,
  waitForGraphqlBlock,
} from "../support/graphqlChain";
import { type SeededChain, startSeededChain } from "../support/indexChain";
import { applyLockOps, headBlock, type LockOp, lockOpArb } from "../support/lockChain";
import { createTestDatabase, type TestDatabase } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
// The comparisons and the data waits send a few hundred requests a minute; the budget is router.test.ts's business.
const ENV = { REDIS_URL: "", LOG_LEVEL: "warn", RATE_LIMIT_MAX: "1000000" };

interface Served {
  name: string;
  post: GraphqlPost;
  processes: ServiceChild[];
}

let chain: SeededChain;
const databases: TestDatabase[] = [];
const children: ServiceChild[] = [];
const served: Served[] = [];

/** Every served topology answers at the chain's head (or later). */
async function allCaughtUp(timeoutMs = 60_000): Promise<bigint> {
  const head = await headBlock(chain.devnet);
  await Promise.all(served.map((s) => waitForGraphqlBlock(s.post, head, { timeoutMs, processes: s.processes })));
  return head;
}

/** The production topology: indexer on Postgres with the views schema, the API process reading the views. */
async function startProduction(): Promise<Served> {
  const database = await createTestDatabase(PG_URL);
  databases.push(database);
  const databaseUrl = (database.forPonder("asset_v1") as { url: string }).url;
  const common = {
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    databaseUrl,
    schema: "asset_v1",
    viewsSchema: "asset",
  };
  const indexer = await spawnService({ ...common, command: "start", env: ENV });
  children.push(indexer);
  const api = await spawnService({ ...common, command: "api", env: ENV });
  children.push(api);
  await api.waitFor200("/health", 30_000);
  return {
    name: "production: ponder start (Postgres, views) + API process",
    post: graphqlPost((p, init) => fetch(`${api.url}${p}`, init)),
    processes: [indexer, api],
  };
}

/** npm start's topology: one `ponder start` on PGlite serving the API itself on API_PORT. */
async function startLocalStack(): Promise<Served> {
  const apiPort = await freePort();
  const database = await createTestDatabase("");
  databases.push(database);
  const ponder = await spawnService({
    command: "start",
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    pgliteDir: (database.forPonder() as { dir: string }).dir,
    schema: "local",
    env: { ...ENV, API_PORT: String(apiPort), HOST: "127.0.0.1" },
  });
  children.push(ponder);
  return {
    name: "local stack: ponder start (PGlite) serving the API",
    post: graphqlPost((p, init) => fetch(`http://127.0.0.1:${apiPort}${p}`, init)),
    processes: [ponder],
  };
}

beforeAll(async () => {
  chain = await startSeededChain();
  served.push(await startProduction(), await startLocalStack());
  await allCaughtUp(60_000);
}, 180_000);

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await Promise.all(databases.map((d) => d.drop()));
  await chain?.stop();
});

/** Lifecycle kinds of the VeLockNFT logs in (from, to]. */
async function kindsBetween(from: bigint, to: bigint): Promise<Map<string, number>> {
  const logs = await chain.devnet.clients.publicClient.getLogs({
    address: chain.devnet.addresses.VeLockNFT,
    fromBlock: from + 1n,
    toBlock: to,
  });
  const kinds = new Map<string, number>();
  for (const l of parseEventLogs({ abi: VeLockNFTAbi, logs })) {
    const a = l.args as Record<string, unknown>;
    const mintOrBurn = l.eventName === "Transfer" && (a.from === zeroAddress || a.to === zeroAddress);
    const kind = mintOrBurn ? "mint/burn" : l.eventName;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return kinds;
}

/**
 * One run of generated activity that is sure to hold each kind the comparison is about. `fresh` (no lock after the
 * seed and prepareActors, none at the end of a run) makes a lock, waits past every lock's end and unlocks it, makes
 * two and merges them, switches AutoMax on for the survivor, has it listed and unlisted, and sells it back (a
 * transfer to the Furnace); then random activity by the other actors. Amounts, durations, the unlock's path and the
 * random tail are generated.
 */
const activityArb: fc.Arbitrary<LockOp[]> = fc
  .record({
    amounts: fc.tuple(fc.bigInt(1_000n, 5_000n), fc.bigInt(1_000n, 5_000n), fc.bigInt(1_000n, 5_000n)),
    days: fc.tuple(fc.bigInt(7n, 365n), fc.bigInt(7n, 365n), fc.bigInt(7n, 365n)),
    delegated: fc.boolean(),
    merge: fc.nat({ max: 31 }),
    others: fc.array(
      lockOpArb.filter((op) => !("actor" in op) || op.actor !== "fresh"),
      { minLength: 2, maxLength: 4 },
    ),
  })
  .map(({ amounts: [a1, a2, a3], days: [d1, d2, d3], delegated, merge, others }): LockOp[] => [
    { kind: "create", actor: "fresh", amount: a1, days: d1, autoMax: false },
    { kind: "timeTravel", days: 366n },
    { kind: "unlock", actor: "fresh", pick: 0, delegated },
    { kind: "create", actor: "fresh", amount: a2, days: d2, autoMax: false },
    { kind: "create", actor: "fresh", amount: a3, days: d3, autoMax: false },
    { kind: "merge", actor: "fresh", pick: merge, other: merge + 1 },
    { kind: "setAutoMax", actor: "fresh", pick: 0, enabled: true },
    { kind: "list", actor: "fresh", pick: 0, listed: true },
    { kind: "list", actor: "fresh", pick: 0, listed: false },
    { kind: "sellBack", actor: "fresh", pick: 0 },
    ...others,
  ]);

describe("GraphQL against the chain through the served processes", () => {
  it("after the seed: every lock and every owner's locks, in both topologies, as the chain has them", async () => {
    for (const s of served) {
      const B = await expectGraphqlLocksMatchChain(chain.devnet, s.post);
      expect(B, s.name).toBeGreaterThanOrEqual(await headBlock(chain.devnet));
    }
  });

  it("after generated activity (merges, unlocks, transfers, AutoMax, listings): both equal the chain (property)", async () => {
    const from = await headBlock(chain.devnet);
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(activityArb, async (ops) => {
        runs++;
        await applyLockOps(chain.devnet, ops);
        await allCaughtUp();
        for (const s of served) await expectGraphqlLocksMatchChain(chain.devnet, s.post);
      }),
      { numRuns: 2, endOnFailure: true },
    );
    const kinds = await kindsBetween(from, await headBlock(chain.devnet));
    for (const kind of ["LockMerged", "LockUnlocked", "Transfer", "AutoMaxSet"]) {
      expect(kinds.get(kind) ?? 0, `${kind} logs of the generated activity`).toBeGreaterThanOrEqual(runs);
    }
    expect(kinds.get("MetadataUpdate") ?? 0, "listings and unlistings").toBeGreaterThanOrEqual(2 * runs);
  });

  it("an account's lockEvents pages hold their block while its new events are mined and indexed", async () => {
    const alice = DEVNET_ACCOUNTS.alice;
    for (const [i, s] of served.entries()) {
      const { rows } = await expectLockEventPagesHoldBlock(s.post, {
        account: getAddress(alice.address),
        between: async (page) => {
          // A new lock of the account itself (its list grows at the top), and random activity.
          const create: LockOp = { kind: "create", actor: "alice", amount: 1_000n, days: 30n, autoMax: false };
          await applyLockOps(chain.devnet, [create, ...fc.sample(lockOpArb, { numRuns: 2, seed: 10 * i + page })]);
          await waitForGraphqlBlock(s.post, await headBlock(chain.devnet), { processes: s.processes });
        },
      });
      expect(rows, s.name).toBeGreaterThan(6);
    }
  });
});
