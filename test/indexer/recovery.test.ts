/**
 * The indexer recovers from a node outage: `ponder start` (Postgres) behind the fault proxy on a devnet that keeps
 * mining; for OUTAGE_MS the proxy answers nothing well (connection resets, 502/503, 429, JSON-RPC errors, answers
 * held past Ponder's 10 s timeout, malformed results, in turns); then it forwards again and the time until the
 * index's block (Ponder's /status) reaches the chain's head is measured. Issue 24 item 7: ≤ 30 s.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { headBlock } from "../support/lockChain";
import {
  createTestDatabase,
  type PonderProcess,
  startPonder,
  type TestDatabase,
  writeManifest,
} from "../support/ponder";
import { type RpcFault, type RpcProxy, startRpcProxy } from "../support/rpcProxy";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const OUTAGE_MS = Number(process.env.RECOVERY_OUTAGE_MS ?? 60_000);
/** Issue 24 item 7. */
const RECOVERY_BOUND_MS = 30_000;

/** The outage's faults, each for a few seconds, in turn: what a failing provider or its gateway answers. */
const MIXED: readonly RpcFault[] = [
  { kind: "down" },
  { kind: "http", status: 503 },
  { kind: "delay", ms: 30_000 },
  { kind: "http", status: 429 },
  { kind: "rpcError", code: -32603, message: "internal error" },
  { kind: "http", status: 502 },
  { kind: "result", value: null },
  { kind: "rpcError", code: 429, message: "rate limited" },
];
const FAULT_TURN_MS = 4_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("indexer recovery after a node outage", () => {
  let devnet: TestDevnet;
  let proxy: RpcProxy;
  let database: TestDatabase;
  let manifestFile: string;
  let ponder: PonderProcess | undefined;
  let mining: { stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    await devnet.clients.testClient.mine({ blocks: 32 });
    proxy = await startRpcProxy({ upstream: devnet.rpcUrl });
    database = await createTestDatabase(PG_URL);
    manifestFile = writeManifest(devnet.deployment.manifest);
  });

  afterAll(async () => {
    await mining?.stop();
    await ponder?.stop();
    await database?.drop();
    await proxy?.stop();
    await devnet?.stop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });

  /** A block every `everyMs` (Base makes one every 2 s), until stopped. */
  function mineEvery(everyMs: number) {
    let on = true;
    const loop = (async () => {
      while (on) {
        await devnet.clients.testClient.mine({ blocks: 1 });
        await sleep(everyMs);
      }
    })();
    return {
      stop: async () => {
        on = false;
        await loop;
      },
    };
  }

  it(
    `is at the chain's head within ${RECOVERY_BOUND_MS / 1000} s of the node coming back after a ${OUTAGE_MS / 1000} s outage of mixed faults`,
    async () => {
      ponder = await startPonder({ rpcUrl: proxy.url, manifestFile, database: database.forPonder("recovery") });
      await ponder.waitForReady(120_000);
      await ponder.waitForBlock(await headBlock(devnet), 60_000);
      // Blocks keep coming through the outage and after it, faster than Base: 1 a second.
      mining = mineEvery(1_000);

      const outageStart = performance.now();
      let turn = 0;
      while (performance.now() - outageStart < OUTAGE_MS) {
        proxy.setFault(MIXED[turn++ % MIXED.length]!);
        await sleep(Math.min(FAULT_TURN_MS, OUTAGE_MS - (performance.now() - outageStart)));
      }
      proxy.setFault(null);
      const restored = performance.now();
      const target = await headBlock(devnet);
      const behind = target - ((await ponder.indexedBlock()) ?? 0n);

      let indexed = (await ponder.indexedBlock()) ?? 0n;
      while (indexed < target && performance.now() - restored < 300_000) {
        await sleep(200);
        indexed = (await ponder.indexedBlock()) ?? indexed;
      }
      const recoveryMs = performance.now() - restored;
      console.log(
        `indexer recovery: ${(recoveryMs / 1000).toFixed(1)} s after a ${OUTAGE_MS / 1000} s outage ` +
          `(${behind} blocks behind at restore; head ${target}, indexed ${indexed})`,
      );
      expect(indexed).toBeGreaterThanOrEqual(target);
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
    },
    OUTAGE_MS + 480_000,
  );
});
