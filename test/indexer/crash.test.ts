/**
 * Crash safety: an indexer killed with SIGKILL in the middle of its backfill, then restarted on the same
 * database, ends with tables identical (row for row, column for column) to a run that was never interrupted.
 * Runs on PGlite, or on Postgres when DATABASE_URL is set.
 *
 * PGlite is not crash-safe under Ponder 0.17.7 (docs/limitations.md): it runs a batch's statements without a
 * transaction, so a kill inside a batch leaves rows past the checkpoint. On PGlite the test therefore looks at
 * the killed folder first (test/support/pgliteTornBatch.ts): at a batch boundary the restart must end identical,
 * as on Postgres; inside a batch the documented recovery is checked instead (delete the folder, index again).
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SeedResult } from "../../devnet/seed";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { bulkTopUps, dumpIndex, expectIndexMatchesChain, headBlock } from "../support/lockChain";
import { findTornBatch } from "../support/pgliteTornBatch";
import {
  createTestDatabase,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../support/ponder";
import { type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const backend = process.env.DATABASE_URL ? "postgres" : "pglite";
/** Ponder (0.16, 0.17) treats the newest 30 blocks of an unknown chain as unfinalized: backfill stops 30 blocks short. */
const FINALITY = 30n;

describe(`crash recovery (${backend})`, () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let proxy: RpcProxy;
  let crashed: TestDatabase;
  let clean: TestDatabase;
  let manifestFile: string;
  const processes: PonderProcess[] = [];

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    // 60 blocks × 25 real top-ups (1,500 events) on top of the seed: a backfill with several commits to die in.
    await bulkTopUps(devnet, { blocks: 60, perBlock: 25, tokenIds: devnet.seed.tokenIds.capped.slice(1) });
    // Empty blocks on top, so every event is in the backfill and the realtime tail is quick.
    await devnet.clients.testClient.mine({ blocks: Number(FINALITY) + 2 });
    proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
    [crashed, clean] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    manifestFile = writeManifest(devnet.deployment.manifest);
  });

  afterAll(async () => {
    for (const p of processes) await p.stop();
    await proxy?.stop();
    await devnet?.stop();
    await crashed?.drop();
    await clean?.drop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });

  it("SIGKILL mid-backfill, then a restart, ends identical to an uninterrupted run", async ({ annotate }) => {
    const head = await headBlock(devnet);
    const firstEventBlock = BigInt(devnet.deployment.manifest.contracts.VeLockNFT?.startBlock ?? 0) + 1n;
    // Slow block fetches down for the run to be killed, so its backfill spans seconds of partial commits.
    proxy.setFault({ kind: "delay", ms: 40, match: (method) => method === "eth_getBlockByNumber" });

    const start = (rpcUrl: string, database: TestDatabase, logLevel: "warn" | "info" = "warn") => {
      const p = startPonder({ rpcUrl, manifestFile, database: database.forPonder(), logLevel });
      void p.then((started) => processes.push(started));
      return p;
    };
    const [victim, reference] = await Promise.all([start(proxy.url, crashed), start(devnet.rpcUrl, clean)]);

    // Kill once some events are committed but the backfill (which ends FINALITY blocks short of the head) is not.
    let progress: bigint | null = null;
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      progress = await victim.indexedBlock();
      if (progress !== null && progress >= firstEventBlock) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await victim.kill();
    expect(progress).not.toBeNull();
    expect(progress).toBeGreaterThanOrEqual(firstEventBlock);
    expect(progress).toBeLessThan(head - FINALITY);
    expect((await victim.exited).signal).toBe("SIGKILL");
    proxy.setFault(null);

    const folder = crashed.forPonder();
    const pgliteDir = folder.kind === "pglite" ? folder.dir : null;
    const torn = pgliteDir === null ? null : await findTornBatch(pgliteDir, victim.schema);
    let restarted: PonderProcess;
    if (pgliteDir !== null && torn !== null && Object.keys(torn.rowsPastCheckpoint).length > 0) {
      // Killed inside a batch on PGlite: Ponder would replay it over its own rows (docs/limitations.md), so no
      // restart on this folder is expected to be right. What operators are told to do instead must be.
      await annotate(
        `PGlite: killed inside a batch, rows past the checkpoint ${JSON.stringify(torn.rowsPastCheckpoint)}; checked the rebuild instead`,
      );
      rmSync(pgliteDir, { recursive: true, force: true });
      restarted = await start(proxy.url, crashed, "info");
      await Promise.all([restarted.waitForBlock(head, 120_000), reference.waitForBlock(head, 120_000)]);
      expect(restarted.output()).not.toContain("Detected crash recovery");
    } else {
      // Ponder waits for the dead app's heartbeat to expire (25 s in 0.16 and 0.17), then recovers from its checkpoint.
      restarted = await start(proxy.url, crashed, "info");
      await Promise.all([restarted.waitForBlock(head, 120_000), reference.waitForBlock(head, 120_000)]);
      expect(restarted.output()).toContain("Detected crash recovery");
      // docs/limitations.md: it resumed only once the dead app's last heartbeat was 25 s old
      // ("… last_active=25ss", Ponder's own spelling; "1m 02ss" past a minute).
      const lastActive = restarted.output().match(/Detected crash recovery.*last_active=(?:(\d+)m )?(\d+)s/);
      expect(lastActive, restarted.output()).not.toBeNull();
      expect(Number(lastActive![1] ?? 0) * 60 + Number(lastActive![2])).toBeGreaterThanOrEqual(25);
    }

    const [a, b] = await Promise.all([restarted.openDb(), reference.openDb()]);
    try {
      const [recovered, uninterrupted] = await Promise.all([dumpIndex(a), dumpIndex(b)]);
      expect(recovered.locks.length).toBe(devnet.seed.liveTokenIds.length + devnet.seed.burnedTokenIds.length);
      expect(recovered.events.length).toBeGreaterThan(1_500);
      expect(recovered).toEqual(uninterrupted);
      await expectIndexMatchesChain(devnet, a);
    } finally {
      await a.close();
      await b.close();
    }
  }, 180_000);
});
