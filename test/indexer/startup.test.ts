/**
 * A missing or bad setting stops `ponder start` at start-up with a message naming the variable, file or key
 * (the rules themselves are unit-tested in test/lockIndexerConfig.test.ts; this proves Ponder obeys them), and so
 * does a node that does not answer its first eth_chainId (3 tries, as the API process: docs/configuration.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../devnet/anvil";
import { type PonderProcess, startPonder } from "../support/ponder";

const dir = mkdtempSync(path.join(os.tmpdir(), "indexer-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("indexer start-up", () => {
  it("refuses a manifest without VeLockNFT, and NETWORK=base without an RPC URL", async () => {
    const manifestFile = path.join(dir, "local.json");
    writeFileSync(
      manifestFile,
      JSON.stringify({ name: "asset-protocol", version: "1", chain: "local", chainId: 31337, contracts: {} }),
    );
    const database = { kind: "pglite" as const, dir: path.join(dir, "pglite") };
    // Nothing listens on port 9: the process must stop before it would ever use the RPC.
    const [noContract, noRpc] = await Promise.all([
      startPonder({ rpcUrl: "http://127.0.0.1:9", manifestFile, database }),
      startPonder({
        rpcUrl: "http://127.0.0.1:9",
        manifestFile,
        database,
        extraEnv: { NETWORK: "base", MANIFEST_FILE: undefined, RPC_URL: undefined, PONDER_RPC_URL_8453: undefined },
      }),
    ]);
    const [a, b] = await Promise.all([noContract.exited, noRpc.exited]);
    expect(a.code).toBe(1);
    expect(noContract.output()).toContain(`${manifestFile}: contracts.VeLockNFT is missing or the zero address`);
    expect(b.code).toBe(1);
    expect(noRpc.output()).toContain("RPC_URL: required for NETWORK=base (or set PONDER_RPC_URL_8453)");
  });
});

describe("indexer start-up with a node that does not answer", () => {
  const KEY = "KEYSECRET123";
  const manifest = (name: string) => {
    const file = path.join(dir, `${name}.json`);
    const contracts = { VeLockNFT: { address: "0x000000000000000000000000000000000000dEaD", startBlock: 0 } };
    writeFileSync(
      file,
      JSON.stringify({ name: "asset-protocol", version: "1", chain: "local", chainId: 31337, contracts }),
    );
    return file;
  };
  /** The exit, or null when the process still runs after `ms` (then it is killed). */
  const exitWithin = async (p: PonderProcess, ms: number) => {
    const timer = new Promise<null>((r) => setTimeout(() => r(null), ms));
    const exit = await Promise.race([p.exited, timer]);
    if (exit === null) await p.kill();
    return exit;
  };

  it("refused: exits 1 after 3 tries, one line naming RPC_URL without its key; silent: after 3 × RPC_TIMEOUT_MS", async () => {
    // Refused: a port nothing listens on. Silent: a server that takes the connection and never answers.
    const refusedPort = await freePort();
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const silentPort = (silent.address() as { port: number }).port;
    try {
      const started = performance.now();
      const [refused, quiet] = await Promise.all([
        startPonder({
          rpcUrl: `http://127.0.0.1:${refusedPort}/v2/${KEY}`,
          manifestFile: manifest("refused"),
          database: { kind: "pglite", dir: path.join(dir, "pglite-refused") },
        }),
        startPonder({
          rpcUrl: `http://127.0.0.1:${silentPort}/?apikey=${KEY}`,
          manifestFile: manifest("silent"),
          database: { kind: "pglite", dir: path.join(dir, "pglite-silent") },
          extraEnv: { RPC_TIMEOUT_MS: "1000" },
        }),
      ]);
      const [a, b] = await Promise.all([exitWithin(refused, 45_000), exitWithin(quiet, 45_000)]);
      const seconds = (performance.now() - started) / 1000;
      expect(a, refused.output()).toMatchObject({ code: 1 });
      expect(refused.output()).toContain(
        `invalid configuration: RPC_URL at http://127.0.0.1:${refusedPort}/***: could not read eth_chainId`,
      );
      expect(b, quiet.output()).toMatchObject({ code: 1 });
      expect(quiet.output()).toMatch(
        new RegExp(
          `invalid configuration: RPC_URL at http://127\\.0\\.0\\.1:${silentPort}/\\*\\*\\*: could not read eth_chainId \\(timeout`,
        ),
      );
      for (const p of [refused, quiet]) expect(p.output()).not.toContain(KEY);
      expect(seconds).toBeLessThan(40);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 120_000);
});
