/**
 * A reorg on the local stack (`npm start`'s topology: ONE `ponder start` on PGlite serving the API itself on API_PORT,
 * src/api/index.ts), whose new branch Ponder commits past the old head in one step: the API hears the index through
 * the watermark's polls, with no trigger to tell it Ponder's revert, so the answers it kept per block at the replaced
 * heights stayed the orphaned branch's — `/stats?block=` still counted an orphaned lock, with the orphaned block's
 * time, and once final was answered `immutable` (red team rt132/rt133). The signal now reads Ponder's journal with
 * each poll (api/read/indexSignal.ts WatermarkSignal): the answers at the replaced block equal the chain's there.
 * A revert whose orphaned blocks wrote no row of ours deletes no journal entry: it is heard by Ponder's journal
 * triggers, which its transaction drops and creates again (new object ids); so is one whose entries no poll read.
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { type SeededChain, startSeededChain } from "../support/indexChain";
import { lockViaFurnace } from "../support/liveTopology";
import { headBlock } from "../support/lockChain";
import { createTestDatabase, type TestDatabase } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

const BASE = "/api/index/v1";
// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field, each checked by the test.
type Json = Record<string, any>;

let chain: SeededChain;
let database: TestDatabase;
let ponder: ServiceChild;
let url: string;
const alice = getAddress(DEVNET_ACCOUNTS.alice.address);

async function get(path: string): Promise<Json> {
  const res = await fetch(`${url}${BASE}${path}`);
  const body = (await res.json()) as Json;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Waits until the index's head (its stats' block) is at least `block`. */
async function indexAt(block: bigint): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`${url}${BASE}/stats`).catch(() => null);
    const body = res === null ? null : ((await res.json().catch(() => null)) as Json | null);
    if (res?.status === 200 && BigInt(body?.blockNumber) >= block) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the index never reached block ${block}`);
}

/** What the chain says at `block`: its time, the total locked, alice's lock count. */
async function chainAt(block: bigint) {
  const { publicClient } = chain.devnet.clients;
  const address = chain.devnet.addresses.VeLockNFT;
  const abi = DEVNET_ABIS.VeLockNFT;
  const [b, locked, locks] = await Promise.all([
    publicClient.getBlock({ blockNumber: block }),
    publicClient.readContract({ address, abi, functionName: "totalLockedClaim", blockNumber: block }),
    publicClient.readContract({ address, abi, functionName: "balanceOf", args: [alice], blockNumber: block }),
  ]);
  return { time: String(b.timestamp), locked: String(locked), locks: Number(locks) };
}

/** What the API answers at `block`, in the same terms. */
async function apiAt(block: bigint) {
  const [stats, locks] = await Promise.all([
    get(`/stats?block=${block}`),
    get(`/accounts/${alice}/locks?block=${block}`),
  ]);
  return {
    time: String(stats.blockTimestamp),
    locked: String(stats.totalLockedWei),
    locks: (locks.locks as unknown[]).length,
    locksTime: String(locks.blockTimestamp),
  };
}

beforeAll(async () => {
  chain = await startSeededChain();
  database = await createTestDatabase("");
  const apiPort = await freePort();
  ponder = await spawnService({
    command: "start",
    rpcUrl: chain.devnet.rpcUrl,
    manifestFile: chain.manifestFile,
    pgliteDir: (database.forPonder() as { dir: string }).dir,
    schema: "local",
    env: {
      REDIS_URL: "",
      LOG_LEVEL: "warn",
      RATE_LIMIT_MAX: "1000000",
      INDEXER_POLLING_MS: "200",
      API_PORT: String(apiPort),
      HOST: "127.0.0.1",
    },
  });
  url = `http://127.0.0.1:${apiPort}`;
  await indexAt(await headBlock(chain.devnet));
}, 180_000);

afterAll(async () => {
  await ponder?.stop();
  await database?.drop();
  await chain?.stop();
});

describe("the local stack across a reorg it has no trigger for", () => {
  it("answers a replaced block as the new branch has it, after a new branch committed past the old head", async () => {
    const { testClient } = chain.devnet.clients;
    const snapshot = await testClient.snapshot();
    // The old branch: alice's new lock in block E, two blocks more; E's answers read (and kept) by the API.
    const e = (await lockViaFurnace(chain, DEVNET_ACCOUNTS.alice, 1_000n)).blockNumber;
    await testClient.mine({ blocks: 2 });
    await indexAt(e + 2n);
    const old = await apiAt(e);
    const oldChain = await chainAt(e);
    expect({ ...old, locksTime: old.time }).toEqual({ ...oldChain, locksTime: oldChain.time });

    // The new branch: no lock, its blocks later in time, one block past the old head, mined at once.
    await testClient.revert({ id: snapshot });
    await testClient.increaseTime({ seconds: 600 });
    await testClient.mine({ blocks: 4 });
    const head = await headBlock(chain.devnet);
    expect(head).toBe(e + 3n);
    await indexAt(head);
    const truth = await chainAt(e);
    expect(truth.locked).not.toBe(oldChain.locked);
    expect(truth.time).not.toBe(oldChain.time);
    expect(await settledAt(e, truth)).toEqual({ ...truth, locksTime: truth.time });
  }, 120_000);

  it("answers a replaced block as the new branch has it after a reorg whose orphaned blocks wrote no row of ours", async () => {
    const { testClient } = chain.devnet.clients;
    const snapshot = await testClient.snapshot();
    // The old branch: two blocks without an event of ours; the upper one's answers read (and kept) by the API. Its
    // revert deletes no journal entry: heard only by Ponder's journal triggers, made again in the revert.
    await testClient.mine({ blocks: 2 });
    const b = await headBlock(chain.devnet);
    await indexAt(b);
    const old = await apiAt(b);
    const oldChain = await chainAt(b);
    expect({ ...old, locksTime: old.time }).toEqual({ ...oldChain, locksTime: oldChain.time });

    // The new branch: its blocks later in time, one past the old head, mined at once.
    await testClient.revert({ id: snapshot });
    await testClient.increaseTime({ seconds: 600 });
    await testClient.mine({ blocks: 3 });
    expect(await headBlock(chain.devnet)).toBe(b + 1n);
    await indexAt(b + 1n);
    const truth = await chainAt(b);
    expect(truth.time).not.toBe(oldChain.time);
    expect(await settledAt(b, truth)).toEqual({ ...truth, locksTime: truth.time });
  }, 120_000);
});

/**
 * The API's answer at `block` once it equals `truth`, or the last one after 5 s: the signal reads the journal with
 * the watermark's polls (250 ms), and tells a revert seen without a newer checkpoint HELD_POLLS polls later.
 */
async function settledAt(block: bigint, truth: Awaited<ReturnType<typeof chainAt>>) {
  const want = JSON.stringify({ ...truth, locksTime: truth.time });
  let answer = await apiAt(block);
  for (let i = 0; i < 20 && JSON.stringify(answer) !== want; i++) {
    await new Promise((r) => setTimeout(r, 250));
    answer = await apiAt(block);
  }
  return answer;
}
