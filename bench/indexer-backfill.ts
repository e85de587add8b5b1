/**
 * Backfill throughput of the lock indexer: ≥ 20,000 real VeLockNFT events on a devnet (bench/lockActivity.ts),
 * indexed by `ponder start` with the real handlers (bench/ponderRoots/real) and, as the baseline in the same
 * run, with empty handlers for the same events (bench/ponderRoots/noop: same logs, no work). The window is
 * Ponder's own, from its "Started backfill indexing" to its "Completed backfill indexing" log lines; 32 empty
 * blocks on top put every event inside the backfill. Two modes, runs alternating within each round:
 * - cold: a fresh database per run, logs and blocks fetched from anvil over JSON-RPC — a real backfill (against
 *   the fastest RPC there is, so handlers weigh more here than against a remote node). The figure, target ≥ 0.7.
 * - warm: one database whose RPC cache (ponder_sync) a first run filled, a fresh Ponder schema per run
 *   (INDEXER_DISABLE_CACHE=false): the indexer's own work only (read, decode, handlers, writes) — how much the
 *   handlers and their writes cost next to Ponder's pipeline alone; printed beside the figure.
 * Database: PGlite, or Postgres when DATABASE_URL is set. Medians over rounds.
 * Usage: npx tsx bench/indexer-backfill.ts [rounds=3]
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { startAnvil } from "../devnet/anvil";
import { DEVNET_ABIS, deployDevnet, devnetClients } from "../devnet/deploy";
import { createTestDatabase, openIndexDb, REPO_ROOT, startPonder, writeManifest } from "../test/support/ponder";
import { generateLockActivity } from "./lockActivity";

const ROUNDS = Math.min(Math.max(Number(process.argv[2] ?? 3), 1), 5);
const ROOTS = {
  noop: path.join(REPO_ROOT, "bench", "ponderRoots", "noop"),
  real: path.join(REPO_ROOT, "bench", "ponderRoots", "real"),
};

/** "03:50:26.908 INFO  Started backfill …" → ms since midnight of that log line. */
function logTime(output: string, message: string): number {
  const line = output.split("\n").find((l) => l.includes(message));
  const m = line?.match(/^(\d\d):(\d\d):(\d\d)\.(\d{3})/);
  if (!m) throw new Error(`no "${message}" line in Ponder's output:\n${output.slice(-3000)}`);
  const [, h, min, s, ms] = m.map(Number) as [number, number, number, number, number];
  return ((h * 60 + min) * 60 + s) * 1000 + ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const anvil = await startAnvil();
try {
  const t0 = Date.now();
  const deployment = await deployDevnet({ rpcUrl: anvil.rpcUrl });
  const activity = await generateLockActivity({
    rpcUrl: anvil.rpcUrl,
    addresses: deployment.addresses,
    deployer: deployment.deployer,
    users: 400,
    locksPerUser: 10,
    topUpsPerLock: 1,
  });
  const clients = devnetClients(anvil.rpcUrl, deployment.chainId);
  await clients.testClient.mine({ blocks: 32 });
  const head = await clients.publicClient.getBlockNumber({ cacheTime: 0 });
  const ve = { address: deployment.addresses.VeLockNFT, abi: DEVNET_ABIS.VeLockNFT } as const;
  const [nextTokenId, totalLocked] = await Promise.all([
    clients.publicClient.readContract({ ...ve, functionName: "nextTokenId" }),
    clients.publicClient.readContract({ ...ve, functionName: "totalLockedClaim" }),
  ]);
  console.log(
    `devnet: ${activity.events} VeLockNFT events from ${activity.txs} transactions, head block ${head} ` +
      `(${((Date.now() - t0) / 1000).toFixed(1)} s to generate)`,
  );
  if (activity.events < 20_000) throw new Error(`only ${activity.events} events generated`);
  const manifestFile = writeManifest(deployment.manifest);

  type Mode = "cold" | "warm" | "fill";
  const shared = await createTestDatabase();
  let runs = 0;
  const runOnce = async (variant: keyof typeof ROOTS, mode: Mode) => {
    const schema = `${variant}_${++runs}`;
    const database = mode === "cold" ? await createTestDatabase() : shared;
    const started = Date.now();
    const ponder = await startPonder({
      rpcUrl: anvil.rpcUrl,
      manifestFile,
      database: database.forPonder(schema),
      root: ROOTS[variant],
      logLevel: "info",
      // cold: the local default (cache off, and the database is new anyway); warm/fill: the shared cache.
      extraEnv: { INDEXER_DISABLE_CACHE: mode === "cold" ? undefined : "false" },
    });
    try {
      await ponder.waitForBlock(head, 600_000);
      const wallMs = Date.now() - started;
      const output = ponder.output();
      const backfillMs = logTime(output, "Completed backfill indexing") - logTime(output, "Started backfill indexing");
      const cacheRate = output.match(/cache_rate=([\d.]+%)/)?.[1] ?? "?";
      if (variant === "real") {
        // The measured run must also be right: one row per token, live amounts summing to totalLockedClaim.
        await ponder.stop();
        const idx = await openIndexDb(database.forPonder(schema));
        try {
          const [row] = await idx.query<{ n: string; live: string | null }>(
            `SELECT count(*)::text AS n, sum(amount) FILTER (WHERE NOT burned)::text AS live FROM ${idx.table("lock")}`,
          );
          if (BigInt(row?.n ?? -1) !== nextTokenId - 1n || BigInt(row?.live ?? -1) !== totalLocked) {
            throw new Error(
              `index mismatch: ${JSON.stringify(row)} vs ${nextTokenId - 1n} locks, ${totalLocked} locked`,
            );
          }
        } finally {
          await idx.close();
        }
      }
      const eps = activity.events / (backfillMs / 1000);
      console.log(
        `${mode === "fill" ? "fill" : mode} ${variant.padEnd(4)} backfill ${(backfillMs / 1000).toFixed(2)} s = ` +
          `${eps.toFixed(0).padStart(5)} events/s (RPC cache hits ${cacheRate}; spawn → indexed head ` +
          `${(wallMs / 1000).toFixed(1)} s, ${database.kind})`,
      );
      return eps;
    } finally {
      await ponder.stop();
      if (database !== shared) await database.drop();
    }
  };
  await runOnce("noop", "fill");

  const results = { cold: { noop: [] as number[], real: [] as number[], ratio: [] as number[] } };
  const warm = { noop: [] as number[], real: [] as number[], ratio: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so neither variant always runs on a warmer machine.
    const order: (keyof typeof ROOTS)[] = round % 2 === 0 ? ["noop", "real"] : ["real", "noop"];
    for (const [mode, into] of [
      ["cold", results.cold],
      ["warm", warm],
    ] as const) {
      const eps: Record<string, number> = {};
      for (const variant of order) eps[variant] = await runOnce(variant, mode);
      into.noop.push(eps.noop as number);
      into.real.push(eps.real as number);
      into.ratio.push((eps.real as number) / (eps.noop as number));
    }
  }
  rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  await shared.drop();
  const cold = results.cold;
  console.log(
    `warm RPC cache (indexer work only): real ${median(warm.real).toFixed(0)} events/s vs empty ` +
      `${median(warm.noop).toFixed(0)} events/s → ratio ${median(warm.ratio).toFixed(2)}`,
  );
  console.log(
    `indexer backfill, ${activity.events} events (${shared.kind}): real handlers ${median(cold.real).toFixed(0)} ` +
      `events/s vs empty handlers ${median(cold.noop).toFixed(0)} events/s → ratio ${median(cold.ratio).toFixed(2)} ` +
      `(target ≥ 0.7; warm-cache ratio ${median(warm.ratio).toFixed(2)})`,
  );
} finally {
  await anvil.stop();
}
