import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Abi, Hex } from "viem";

/** The deployable devnet contracts (the names solc gives them). */
export const DEVNET_CONTRACTS = [
  "AssetToken",
  "LpToken",
  "VeLockNFT",
  "FurnaceQuoter",
  "Furnace",
  "ShareholderRoyalties",
  "LpStakingVault7D",
  "ClaimAllHelper",
  "LaunchController",
  "MineCore",
] as const;
export type DevnetContractName = (typeof DEVNET_CONTRACTS)[number];

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
}
export type Artifacts = Record<DevnetContractName, Artifact>;

const DEVNET_DIR = path.dirname(fileURLToPath(import.meta.url));
export const CONTRACTS_DIR = path.join(DEVNET_DIR, "contracts");
export const OUT_DIR = path.join(DEVNET_DIR, "out");

const SETTINGS = {
  evmVersion: "cancun",
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
} as const;

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}
interface Solc {
  version(): string;
  compile(input: string): string;
}

let memo: { key: string; artifacts: Artifacts } | undefined;

/**
 * Compiles devnet/contracts/*.sol with the npm solc (cancun, optimizer on). The result is cached in memory and
 * under devnet/out/ keyed by a hash of compiler version + settings + sources, because solc-js takes seconds and
 * every test file deploys.
 */
export function compileDevnet(): Artifacts {
  const files = readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith(".sol"))
    .sort();
  const sources: Record<string, { content: string }> = {};
  for (const f of files) sources[f] = { content: readFileSync(path.join(CONTRACTS_DIR, f), "utf8") };

  const solc = createRequire(import.meta.url)("solc") as Solc;
  const key = createHash("sha256")
    .update(JSON.stringify({ solc: solc.version(), settings: SETTINGS, sources }))
    .digest("hex")
    .slice(0, 16);
  if (memo?.key === key) return memo.artifacts;

  const cacheFile = path.join(OUT_DIR, `artifacts-${key}.json`);
  try {
    const artifacts = JSON.parse(readFileSync(cacheFile, "utf8")) as Artifacts;
    memo = { key, artifacts };
    return artifacts;
  } catch {
    // no cache yet (or unreadable): compile below
  }

  const output = JSON.parse(
    solc.compile(JSON.stringify({ language: "Solidity", sources, settings: SETTINGS })),
  ) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join("\n")}`);

  const artifacts = {} as Artifacts;
  for (const name of DEVNET_CONTRACTS) {
    const found = Object.values(output.contracts ?? {}).find((byName) => byName[name])?.[name];
    if (!found) throw new Error(`solc output lacks contract ${name}`);
    artifacts[name] = { abi: found.abi, bytecode: `0x${found.evm.bytecode.object}` };
  }

  // Write-then-rename so a concurrent reader never sees a half-written cache file.
  mkdirSync(OUT_DIR, { recursive: true });
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(artifacts));
  renameSync(tmp, cacheFile);
  // Keep only the current cache: older entries belong to sources that no longer exist.
  for (const old of readdirSync(OUT_DIR)) {
    if (old.startsWith("artifacts-") && old.endsWith(".json") && old !== path.basename(cacheFile)) {
      rmSync(path.join(OUT_DIR, old), { force: true });
    }
  }
  memo = { key, artifacts };
  return artifacts;
}
