/**
 * A missing or bad setting stops `ponder start` at start-up with a message naming the variable, file or key
 * (the rules themselves are unit-tested in test/lockIndexerConfig.test.ts; this proves Ponder obeys them).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startPonder } from "../support/ponder";

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
