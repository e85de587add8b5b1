/**
 * How soon each change reaches an open stream (issue 32 item 5: "a lock created on the devnet reaches an open stream
 * ≤ 1 block after the index commits it, p99 over 200 blocks"), per topic kind. The production shape: the seeded
 * devnet, one indexer (`ponder start --views-schema`, Postgres) and one API process (dist/server/main.js).
 * One stream follows `stats`, the creators' `account`s, the `furnace-claim` 24 h board and the `furnace-enter`
 * activity: a lock entered through the Furnace changes all four in its block (new accounts create the locks, 30 each). LOCKS (default 200) locks are created,
 * one per block, one every INTERVAL_MS (default 400 ms: faster than Base's 2 s, so a slow stream falls behind and it
 * shows), without waiting for the events; at most DEADLINE_S (default 180) seconds of creating. For each block and
 * topic: the time from the index's commit (the bench LISTENs on the channel the API process does: Postgres delivers
 * the NOTIFY at commit) to the event's arrival, and the block distance — how many later blocks the index had
 * committed by then (0: it arrived before the next block's commit).
 * Usage: npx tsx bench/stream-latency.ts   (LOCKS=n INTERVAL_MS=n DEADLINE_S=n)
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { maxUint256 } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DEVNET_ABIS } from "../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../devnet/seed";
import { buildOnce } from "../test/support/build";
import { send } from "../test/support/devnet";
import { startSeededChain } from "../test/support/indexChain";
import { createTestDatabase } from "../test/support/ponder";
import { spawnService } from "../test/support/replica";
import { readSse } from "../test/support/sseReader";

const LOCKS = Number(process.env.LOCKS ?? 200);
const INTERVAL_MS = Number(process.env.INTERVAL_MS ?? 400);
const DEADLINE_S = Number(process.env.DEADLINE_S ?? 180);
const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const BASE_BLOCK_MS = 2_000;
const LOCKS_PER_ACCOUNT = 30;
const LOCK_AMOUNT = 1_000n * 10n ** 18n;
const TOPICS = ["stats", "account", "board", "activity"] as const;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};

buildOnce();
const chain = await startSeededChain();
await chain.devnet.clients.testClient.mine({ blocks: 32 });
const database = await createTestDatabase(PG_URL);
const databaseUrl = (database.forPonder("latency_v1") as { url: string }).url;
const common = {
  rpcUrl: chain.devnet.rpcUrl,
  manifestFile: chain.manifestFile,
  databaseUrl,
  env: { REDIS_URL: "", LOG_LEVEL: "warn", INDEXER_POLLING_MS: "200" },
};
const indexer = await spawnService({ ...common, command: "start", schema: "latency_v1", viewsSchema: "latency" });
const listener = new pg.Client({ connectionString: databaseUrl });
const abort = new AbortController();
try {
  await indexer.waitFor200("/ready", 180_000);
  const api = await spawnService({ ...common, command: "api", schema: "latency_v1", viewsSchema: "latency" });
  await api.waitFor200("/ready", 60_000);

  // The index's commits, as the API process hears them.
  await listener.connect();
  const committed = new Map<bigint, number>();
  listener.on("notification", (m) => {
    const b = BigInt(m.payload!.slice(26, 42));
    if (!committed.has(b)) committed.set(b, performance.now());
  });
  await listener.query(`LISTEN "latency_block"`);

  // New accounts, each creating at most LOCKS_PER_ACCOUNT locks (an account holds at most 32 lock NFTs): ETH from
  // anvil, tokens minted by the deployer (each lock takes the minimum, 1,000), the Furnace approved.
  const { testClient } = chain.devnet.clients;
  const creators = Array.from({ length: Math.ceil(LOCKS / LOCKS_PER_ACCOUNT) }, () => {
    const privateKey = generatePrivateKey();
    return { privateKey, address: privateKeyToAccount(privateKey).address };
  });
  for (const who of creators) {
    await testClient.setBalance({ address: who.address, value: 10n ** 20n });
    await send(chain.devnet, DEVNET_ACCOUNTS.deployer.privateKey, {
      address: chain.devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [who.address, BigInt(LOCKS_PER_ACCOUNT) * LOCK_AMOUNT],
    });
    await send(chain.devnet, who.privateKey, {
      address: chain.devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "approve",
      args: [chain.devnet.addresses.Furnace, maxUint256],
    });
  }
  const accounts = creators.map((c) => `account=${c.address}`).join("&");
  const query = `stats&${accounts}&board=furnace-claim:24h&activity&kind=furnace-enter`;
  const res = await fetch(`${api.url}/api/index/v1/stream?${query}`, { signal: abort.signal });
  if (res.status !== 200) throw new Error(`stream: ${res.status} ${await res.text()}`);
  const stream = readSse(res);
  await new Promise((r) => setTimeout(r, 1_000));

  const blocks: bigint[] = [];
  const start = Date.now();
  for (let i = 0; i < LOCKS && Date.now() - start < DEADLINE_S * 1000; i++) {
    const t0 = Date.now();
    const receipt = await send(chain.devnet, creators[Math.floor(i / LOCKS_PER_ACCOUNT)]!.privateKey, {
      address: chain.devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [LOCK_AMOUNT, 0n, 30n * 86_400n, false, 1n],
    });
    blocks.push(receipt.blockNumber);
    await new Promise((r) => setTimeout(r, Math.max(0, INTERVAL_MS - (Date.now() - t0))));
  }
  const last = blocks.at(-1)!.toString();
  await Promise.all(TOPICS.map((t) => stream.until((e) => e.id === last && e.event === t, 20_000).catch(() => null)));
  // Each block's event per topic, when it first arrived.
  const arrived = new Map<string, number>();
  for (const e of stream.events) if (!arrived.has(`${e.id}:${e.event}`)) arrived.set(`${e.id}:${e.event}`, e.at);
  // A commit may carry several blocks (Ponder's realtime batch; the NOTIFY names the newest): a block is committed at
  // the first notification of a head at or past it.
  const heads = [...committed.entries()].sort((x, y) => x[1] - y[1]);
  const commitOf = (b: bigint) => heads.find(([h]) => h >= b)?.[1];
  const commits = heads.map(([, t]) => t);
  const batched = blocks.filter((b) => !committed.has(b)).length;
  const lines: string[] = [];
  let worst = { p99: 0, distance: 0 };
  for (const topic of TOPICS) {
    const ms: number[] = [];
    const distance: number[] = [];
    for (const b of blocks) {
      const at = arrived.get(`${b}:${topic}`);
      const c = commitOf(b);
      if (at === undefined || c === undefined) continue;
      ms.push(at - c);
      distance.push(commits.filter((x) => x > c && x < at).length);
    }
    const p99 = quantile(ms, 0.99);
    const d99 = quantile(distance, 0.99);
    if (p99 > worst.p99) worst = { p99, distance: d99 };
    lines.push(
      `${topic}: ${ms.length}/${blocks.length} blocks (${blocks.length - ms.length} missing), commit → event p50 ${quantile(ms, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (max ${Math.max(...ms).toFixed(1)}); blocks committed meanwhile p50 ${quantile(distance, 0.5)}, p99 ${d99}, max ${Math.max(...distance)}`,
    );
  }
  console.log(
    `${blocks.length} locks, one a block every ${INTERVAL_MS} ms, in ${((Date.now() - start) / 1000).toFixed(0)} s (load ${load()}); ${committed.size} notifications, ${batched} lock blocks committed with a later one; measured: the API process (dist/server/main.js) serving one stream of ${TOPICS.length} topics`,
  );
  for (const l of lines) console.log(l);
  const missed = blocks.filter((b) => TOPICS.some((t) => !arrived.has(`${b}:${t}`)));
  if (missed.length > 0) {
    console.log(`blocks without every event: ${missed.join(", ")}; the API process said:\n${api.log().slice(-3000)}`);
  }
  console.log(
    `stream-latency: ${blocks.length} blocks, worst topic p99 ${worst.p99.toFixed(1)} ms = ${(worst.p99 / BASE_BLOCK_MS).toFixed(3)} Base blocks after the index's commit, ${worst.distance} blocks committed meanwhile`,
  );
  abort.abort();
  await api.stop();
} finally {
  abort.abort();
  await listener.end().catch(() => {});
  await indexer.stop();
  await database.drop();
  await chain.stop();
}
