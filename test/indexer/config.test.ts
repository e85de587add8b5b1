import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { zeroAddress } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, LOCAL_RPC_URL } from "../../api/config";
import { indexerSettings } from "../../indexer/config";
import { REPO_ROOT as REPO } from "../support/ponder";

// Files only (no network, no database): a manifest on disk is the input the indexer config reads.
const dir = mkdtempSync(path.join(os.tmpdir(), "indexer-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const VE = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
function manifestFile(name: string, contracts: Record<string, unknown>, chainId = 31337): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ name: "asset-protocol", version: "1", chain: "local", chainId, contracts }));
  return file;
}
const local = manifestFile("local", { VeLockNFT: { address: VE, startBlock: 3 } });

describe("indexerSettings", () => {
  it("local is the default: manifest address and start block, anvil RPC, fast polling, no sync cache", () => {
    const s = indexerSettings({ MANIFEST_FILE: local });
    expect(s).toEqual({
      network: "local",
      chainId: 31337,
      chainName: "local",
      rpcUrl: LOCAL_RPC_URL,
      rpcUrlVariable: "RPC_URL",
      rpcTimeoutMs: 15_000,
      pollingIntervalMs: 250,
      disableCache: true,
      veLockNFT: { address: VE, startBlock: 3 },
      // A board source the manifest lacks is followed at the zero address, from VeLockNFT's start block.
      boards: {
        MineCore: { address: zeroAddress, startBlock: 3 },
        Furnace: { address: zeroAddress, startBlock: 3 },
        ShareholderRoyalties: { address: zeroAddress, startBlock: 3 },
      },
      database: undefined,
    });
  });

  it("base reads deployments/base.json and needs RPC_URL", () => {
    expect(() => indexerSettings({ NETWORK: "base" })).toThrow(
      new ConfigError("invalid configuration: RPC_URL: required for NETWORK=base (or set PONDER_RPC_URL_8453)"),
    );
    const s = indexerSettings({ NETWORK: "base", RPC_URL: "https://rpc.example/key123" });
    expect(s).toMatchObject({
      chainId: 8453,
      chainName: "base",
      rpcUrl: "https://rpc.example/key123",
      pollingIntervalMs: 1000,
      disableCache: false,
      veLockNFT: { address: "0x876Da22a5bBEe4f8963b791631D2cAC5199389eE", startBlock: 46183959 },
      boards: {
        MineCore: { address: "0xd4755998E3957B48F74bcbA08b842df64451EDa7", startBlock: 46183959 },
        Furnace: { address: "0x5F4dabB335d2609c88D3F77e15D5dB4310270aD6", startBlock: 46183959 },
        ShareholderRoyalties: { address: "0x74eDd39E3B220691364Df5024C3dA4FDC64d2a91", startBlock: 46183959 },
      },
    });
  });

  it("accepts Ponder's PONDER_RPC_URL_<chainId>; RPC_URL wins over it", () => {
    const perChain = indexerSettings({ NETWORK: "base-sepolia", PONDER_RPC_URL_84532: "http://a.example" });
    // The start-up check's messages name the variable the URL came from.
    expect([perChain.rpcUrl, perChain.rpcUrlVariable]).toEqual(["http://a.example", "PONDER_RPC_URL_84532"]);
    expect(
      indexerSettings({
        NETWORK: "base-sepolia",
        RPC_URL: "http://b.example",
        PONDER_RPC_URL_84532: "http://a.example",
      }).rpcUrl,
    ).toBe("http://b.example");
  });

  it("names a bad RPC variable without echoing its value (it may carry an API key)", () => {
    const attempt = () => indexerSettings({ MANIFEST_FILE: local, RPC_URL: "not a url secretkey" });
    expect(attempt).toThrow("RPC_URL: must be a URL (http: or https:)");
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toContain("secretkey");
    }
    expect(() => indexerSettings({ MANIFEST_FILE: local, RPC_URL: "ftp://x.example" })).toThrow(
      "RPC_URL: must be a URL (http: or https:)",
    );
    expect(() => indexerSettings({ NETWORK: "base", PONDER_RPC_URL_8453: "nope secretkey" })).toThrow(
      /PONDER_RPC_URL_8453: must be a URL/,
    );
  });

  it("rejects an unknown NETWORK", () => {
    expect(() => indexerSettings({ NETWORK: "mainnet" })).toThrow(/invalid configuration: NETWORK: /);
  });

  it("stops on a manifest without VeLockNFT, or with the zero address, naming the file and key", () => {
    const none = manifestFile("none", { AssetToken: { address: VE } });
    expect(() => indexerSettings({ MANIFEST_FILE: none })).toThrow(
      `${none}: contracts.VeLockNFT is missing or the zero address; nothing to index`,
    );
    const zero = manifestFile("zero", { VeLockNFT: { address: "0x0000000000000000000000000000000000000000" } });
    expect(() => indexerSettings({ MANIFEST_FILE: zero })).toThrow(
      /contracts\.VeLockNFT is missing or the zero address/,
    );
  });

  it("stops on a missing or malformed manifest file, and on a chain id that does not match NETWORK", () => {
    expect(() => indexerSettings({ MANIFEST_FILE: path.join(dir, "nope.json") })).toThrow(
      /cannot read deployment manifest .*nope\.json.*\(from MANIFEST_FILE\)/,
    );
    const bad = path.join(dir, "bad.json");
    writeFileSync(bad, "{");
    expect(() => indexerSettings({ MANIFEST_FILE: bad })).toThrow(/is not valid JSON/);
    const wrongChain = manifestFile("wrong", { VeLockNFT: { address: VE } }, 8453);
    expect(() => indexerSettings({ MANIFEST_FILE: wrongChain })).toThrow(/chainId: expected 31337, found 8453/);
  });

  it("requires a start block outside the devnet", () => {
    const file = manifestFile("nostart", { VeLockNFT: { address: VE } }, 8453);
    expect(() => indexerSettings({ NETWORK: "base", MANIFEST_FILE: file, RPC_URL: "http://x.example" })).toThrow(
      `${file}: contracts.VeLockNFT.startBlock is required on base`,
    );
    expect(
      indexerSettings({ MANIFEST_FILE: manifestFile("ls", { VeLockNFT: { address: VE } }) }).veLockNFT.startBlock,
    ).toBe(0);
  });

  it("PGLITE_DIR picks the PGlite directory unless a Postgres URL is set (Postgres wins, as in Ponder)", () => {
    expect(indexerSettings({ MANIFEST_FILE: local, PGLITE_DIR: "/tmp/x" }).database).toEqual({
      kind: "pglite",
      directory: "/tmp/x",
    });
    expect(
      indexerSettings({ MANIFEST_FILE: local, PGLITE_DIR: "/tmp/x", DATABASE_URL: "postgresql://h/db" }).database,
    ).toBeUndefined();
  });

  it("INDEXER_DISABLE_CACHE overrides the per-network default (true or false only)", () => {
    expect(indexerSettings({ MANIFEST_FILE: local, INDEXER_DISABLE_CACHE: "false" }).disableCache).toBe(false);
    expect(
      indexerSettings({ NETWORK: "base", RPC_URL: "http://x.example", INDEXER_DISABLE_CACHE: "true" }).disableCache,
    ).toBe(true);
    expect(() => indexerSettings({ MANIFEST_FILE: local, INDEXER_DISABLE_CACHE: "1" })).toThrow(
      "INDEXER_DISABLE_CACHE: must be true or false",
    );
  });

  it("reads the same variables by the same rules as the API: values are trimmed, empty means unset", () => {
    expect(indexerSettings({ MANIFEST_FILE: ` ${local} `, INDEXER_POLLING_MS: " 500 " }).pollingIntervalMs).toBe(500);
    expect(indexerSettings({ MANIFEST_FILE: local, RPC_URL: "  " }).rpcUrl).toBe(LOCAL_RPC_URL);
    // A variable only the API uses still stops the indexer when it is malformed: one config, one verdict.
    expect(() => indexerSettings({ MANIFEST_FILE: local, REDIS_URL: "http://x" })).toThrow(/REDIS_URL/);
  });

  it("INDEXER_POLLING_MS overrides the polling interval within [100, 60000]", () => {
    expect(indexerSettings({ MANIFEST_FILE: local, INDEXER_POLLING_MS: "500" }).pollingIntervalMs).toBe(500);
    for (const bad of ["50", "1e3", "-1", "70000"]) {
      expect(() => indexerSettings({ MANIFEST_FILE: local, INDEXER_POLLING_MS: bad })).toThrow(/INDEXER_POLLING_MS/);
    }
  });
});

describe("ponder start with a bad setting (the indexer's own process)", () => {
  it("stops with exit 1 and one line naming the variable: no stack, no code frame, not twice", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(
      process.execPath,
      [path.join(REPO, "node_modules/ponder/dist/esm/bin/ponder.js"), "start", "--port", "0"],
      {
        cwd: REPO,
        env: {
          ...process.env,
          NETWORK: "local",
          RPC_URL: "http://127.0.0.1:1",
          DATABASE_SCHEMA: "never_made",
          DATABASE_URL: "",
          PONDER_TELEMETRY_DISABLED: "true",
          INDEXER_POLLING_MS: "5",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (out += b));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    const lines = out.split("\n").filter((l) => l.includes("INDEXER_POLLING_MS"));
    expect(lines, out).toEqual(["invalid configuration: INDEXER_POLLING_MS: must be between 100 and 60000"]);
    expect(out).not.toMatch(/\n\s+at |ConfigError|\|/);
  }, 90_000);
});
