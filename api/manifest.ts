import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type Address, getAddress, zeroAddress } from "viem";
import { z } from "zod";

/** Contracts a manifest may name, with the spec's names (protocol.md: AssetToken = ClaimToken, VeLockNFT = VeClaimNFT). */
export const CONTRACT_NAMES = [
  "AssetToken",
  "VeLockNFT",
  "LaunchController",
  "Furnace",
  "FurnaceQuoter",
  "ClaimAllHelper",
  "ShareholderRoyalties",
  "LpStakingVault7D",
  "MineCore",
] as const;
export type ContractName = (typeof CONTRACT_NAMES)[number];
/** Everything an action can need: the contracts plus the LP token, which the manifest keeps under its own key. */
export type DeployableName = ContractName | "LpToken";

export const NETWORKS = { local: 31337, base: 8453, "base-sepolia": 84532 } as const;
export type Network = keyof typeof NETWORKS;

const eip55Address = z.string().refine(
  (value) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return false;
    return getAddress(value) === value;
  },
  { message: "not an EIP-55 checksummed address (0x + 40 hex, checksum case)" },
);

const deployment = z
  .object({
    address: eip55Address,
    startBlock: z.number().int().nonnegative().optional(),
  })
  .strict();

export const manifestSchema = z
  .object({
    name: z.string().min(1),
    version: z.string().min(1),
    chain: z.string().regex(/^[a-z0-9-]+$/, "a lower-case chain label such as base"),
    chainId: z.number().int().positive(),
    contracts: z.object(Object.fromEntries(CONTRACT_NAMES.map((n) => [n, deployment.optional()]))).strict(),
    lpToken: deployment.optional(),
  })
  .strict();

export type Deployment = z.infer<typeof deployment>;
export type Manifest = Omit<z.infer<typeof manifestSchema>, "contracts"> & {
  contracts: Partial<Record<ContractName, Deployment>>;
};

export class ManifestError extends Error {
  override name = "ManifestError";
}

/** Validates a parsed manifest; `file` only names the source in the error. */
export function parseManifest(raw: unknown, file: string, expectedChainId?: number): Manifest {
  const result = manifestSchema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new ManifestError(`invalid deployment manifest ${file}: ${issues.join("; ")}`);
  }
  const manifest = result.data as Manifest;
  if (expectedChainId !== undefined && manifest.chainId !== expectedChainId) {
    throw new ManifestError(
      `invalid deployment manifest ${file}: chainId: expected ${expectedChainId}, found ${manifest.chainId}`,
    );
  }
  return manifest;
}

export const DEPLOYMENTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "deployments");

/** Reads and validates `deployments/<network>.json`. Start-up calls this, so a broken file stops the process. */
export function loadManifest(network: Network, file = path.join(DEPLOYMENTS_DIR, `${network}.json`)): Manifest {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ManifestError(`cannot read deployment manifest ${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(`deployment manifest ${file} is not valid JSON: ${(error as Error).message}`);
  }
  return parseManifest(raw, file, NETWORKS[network]);
}

/** The address of a deployed contract, or null when the manifest lacks it or holds the zero address. */
export function deployedAddress(manifest: Manifest, name: DeployableName): Address | null {
  const entry = name === "LpToken" ? manifest.lpToken : manifest.contracts[name];
  if (!entry || entry.address === zeroAddress) return null;
  return entry.address as Address;
}
