import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type Abi,
  type Address,
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  getContractAddress,
  type Hex,
  http,
  parseAbi,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  AssetTokenAbi,
  ClaimAllHelperAbi,
  FurnaceAbi,
  FurnaceQuoterAbi,
  LaunchControllerAbi,
  LpStakingVault7DAbi,
  LpTokenAbi,
  MineCoreAbi,
  ShareholderRoyaltiesAbi,
  VeLockNFTAbi,
} from "../abis";
import { ErrorsAbi, LocalErrorsAbi } from "../abis/Errors";
import { type Manifest, parseManifest } from "../api/manifest";
import { type Artifacts, compileDevnet, type DevnetContractName } from "./compile";
import { installMulticall3 } from "./multicall3";

/** Anvil dev account #0: deploys and owns everything on the devnet. */
export const DEPLOYER_PRIVATE_KEY: Hex = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/** Anvil dev account #8: the market role (the published MineMarket): lists locks, moves sold ones to the Furnace. */
export const MARKET_PRIVATE_KEY: Hex = "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97";

export const DEVNET_INITIAL_SUPPLY = 10_000_000n * 10n ** 18n;
export const DEVNET_LP_INITIAL_SUPPLY = 1_000_000n * 10n ** 18n;
/** LaunchController as deployed: finalized (bit 0 clear) with every readiness bit set. */
export const DEVNET_STATUS_BITMASK = 0x7fen;
/** requiredSeedEth = 50 ether × 2 days / 10 days = 10 ether. */
export const DEVNET_ACCRUAL_DURATION = 2n * 86_400n;

export type DevnetAddressName =
  | "AssetToken"
  | "LpToken"
  | "VeLockNFT"
  | "FurnaceQuoter"
  | "Furnace"
  | "ShareholderRoyalties"
  | "LpStakingVault7D"
  | "ClaimAllHelper"
  | "LaunchController"
  | "MineCore";
export type DevnetAddresses = Record<DevnetAddressName, Address>;

export interface DevnetDeployment {
  manifest: Manifest;
  addresses: DevnetAddresses;
  deployer: Address;
  chainId: number;
  /** Block of the last deployment transaction. */
  blockNumber: bigint;
  artifacts: Artifacts;
}

/** Typed ABIs of the devnet: the published subset (abis/) plus the devnet-only functions and events. */
const devToken = parseAbi([
  "function transfer(address to, uint256 amount) returns (bool)",
  "function transferFrom(address from, address to, uint256 amount) returns (bool)",
  "function mint(address to, uint256 amount)",
  "function burn(uint256 amount)",
  "function setMinter(address minter, bool allowed)",
  "function isMinter(address) view returns (bool)",
  "function owner() view returns (address)",
  "function balanceOf(address owner) view returns (uint256)",
]);
const DEVNET_ABIS_WITHOUT_ERRORS = {
  AssetToken: [...AssetTokenAbi, ...devToken],
  LpToken: [...LpTokenAbi, ...devToken],
  VeLockNFT: [
    ...VeLockNFTAbi,
    ...parseAbi([
      "function transferFrom(address from, address to, uint256 tokenId)",
      "function safeTransferFrom(address from, address to, uint256 tokenId)",
      "function approve(address to, uint256 tokenId) pure",
      "function setApprovalForAll(address operator, bool approved) pure",
      "function furnaceBurnAndWithdraw(uint256 tokenId, address to) returns (uint256)",
      "function setListed(uint256 tokenId, bool listed)",
      "function unlockExpiredForUser(address user, uint256 tokenId)",
      "function openDelegationSession(address delegate, uint256 end)",
      "function storedLockEnd(uint256 tokenId) view returns (uint256)",
      "function veOfToken(uint256 tokenId) view returns (uint256)",
      "function furnace() view returns (address)",
      "function market() view returns (address)",
      "event MetadataUpdate(uint256 _tokenId)",
      "event DelegationSessionUsed(address indexed user, address indexed delegate, uint8 indexed actionType, uint256 permsUsed, uint256 refId, uint256 timestamp)",
    ]),
  ],
  FurnaceQuoter: [
    ...FurnaceQuoterAbi,
    ...parseAbi(["function durationWeight(uint256 durationSeconds) pure returns (uint256)"]),
  ],
  Furnace: [
    ...FurnaceAbi,
    ...parseAbi([
      "function settleSellBack(uint256 tokenId) returns (uint256)",
      "function extendLock(uint256 tokenId, uint256 newEnd)",
      "function mergeLocks(uint256 fromTokenId, uint256 intoTokenId)",
      "function enterWithEth(uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut) payable returns (uint256)",
      "function TOKENS_PER_ETH() view returns (uint256)",
      "event SellBackSettled(uint256 indexed tokenId, uint256 amountBurned)",
    ]),
  ],
  ShareholderRoyalties: [
    ...ShareholderRoyaltiesAbi,
    ...parseAbi([
      "function accrue(address user) payable",
      "function claimShareholderFor(address user, uint8 mode) returns (uint256)",
      "function TOKENS_PER_ETH() view returns (uint256)",
      "event RoyaltiesAccrued(address indexed user, uint256 amountEth)",
    ]),
  ],
  LpStakingVault7D: [
    ...LpStakingVault7DAbi,
    ...parseAbi([
      "function accrueRewards(address user, uint256 amount)",
      "function claimRewardsFor(address user, address to) returns (uint256)",
      "function lastCompoundAt(address user) view returns (uint256)",
    ]),
  ],
  ClaimAllHelper: ClaimAllHelperAbi,
  LaunchController: [
    ...LaunchControllerAbi,
    ...parseAbi([
      "function setStatusBitmask(uint256 statusBitmask)",
      "function setAccrualDuration(uint256 accrualDuration)",
    ]),
  ],
  MineCore: [
    ...MineCoreAbi,
    ...parseAbi([
      "function takeover(uint256 maxPrice) payable",
      "function price() view returns (uint256)",
      "function king() view returns (address)",
      "function reignId() view returns (uint256)",
      "function reignStart() view returns (uint256)",
      "function CLAIM_PER_SECOND() view returns (uint256)",
    ]),
  ],
} as const;

/**
 * The devnet contracts revert only with the published Errors library's names (protocol.md §8), which a nested
 * call can bubble up from any of them, the vault's own LockCooldown (as published), plus ERC-721's ownerOf of a
 * burned id: every entry carries them all.
 */
export const DEVNET_ERRORS_ABI = [
  ...ErrorsAbi,
  ...LocalErrorsAbi,
  ...parseAbi(["error ERC721NonexistentToken(uint256 tokenId)"]),
] as const;
type WithErrors<T> = {
  [K in keyof T]: readonly [...(T[K] extends readonly unknown[] ? T[K] : never), ...typeof DEVNET_ERRORS_ABI];
};
export const DEVNET_ABIS = Object.fromEntries(
  Object.entries(DEVNET_ABIS_WITHOUT_ERRORS).map(([name, abi]) => [name, [...abi, ...DEVNET_ERRORS_ABI]]),
) as unknown as WithErrors<typeof DEVNET_ABIS_WITHOUT_ERRORS>;

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** viem clients for a devnet RPC; short polling because anvil automines each transaction instantly. */
export function devnetClients(rpcUrl: string, chainId = 31337) {
  const chain: Chain = defineChain({
    id: chainId,
    name: "Devnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50, cacheTime: 0 });
  const testClient = createTestClient({ chain, transport, mode: "anvil", pollingInterval: 50 });
  const walletFor = (privateKey: Hex) =>
    createWalletClient({ chain, transport, account: privateKeyToAccount(privateKey), pollingInterval: 50 });
  return { chain, publicClient, testClient, walletFor };
}
export type DevnetClients = ReturnType<typeof devnetClients>;

/** One contract call as a transaction; resolves with the mined receipt and throws if it reverted. */
export async function sendTx(
  clients: DevnetClients,
  privateKey: Hex,
  call: { address: Address; abi: Abi; functionName: string; args?: readonly unknown[]; value?: bigint },
): Promise<TransactionReceipt> {
  const wallet = clients.walletFor(privateKey);
  // An exact estimate can fall short when the block that mines the call has a later timestamp than the
  // one it was estimated at: an AutoMax extension estimated in the second its lock end was last set
  // rewrites an unchanged slot (cheap), then mined a second later changes it (+2,900 gas), and reverts
  // out of gas. Headroom makes the seed independent of where the wall clock's second falls.
  // biome-ignore lint/suspicious/noExplicitAny: the call shape is checked by viem at runtime against `abi`
  const request = { ...call, chain: clients.chain, account: wallet.account } as any;
  const estimate = await clients.publicClient.estimateContractGas(request);
  const hash = await wallet.writeContract({ ...request, gas: estimate + estimate / 4n + 30_000n });
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${call.functionName} reverted in ${hash}`);
  return receipt;
}

/**
 * Deploys the devnet from anvil account #0. Constructor arguments carry every cross-reference, with the future
 * addresses precomputed from the deployer's nonce, so the wiring costs no extra transactions and a fresh anvil
 * always yields the same addresses (one block per deployment, nothing else mined).
 */
export async function deployDevnet(opts: { rpcUrl: string; deployerKey?: Hex }): Promise<DevnetDeployment> {
  const artifacts = compileDevnet();
  const deployerKey = opts.deployerKey ?? DEPLOYER_PRIVATE_KEY;
  const deployer = privateKeyToAccount(deployerKey).address;
  const probe = createPublicClient({ transport: http(opts.rpcUrl) });
  const chainId = await probe.getChainId();
  const clients = devnetClients(opts.rpcUrl, chainId);
  const wallet = clients.walletFor(deployerKey);

  const nonce0 = BigInt(await clients.publicClient.getTransactionCount({ address: deployer, blockTag: "pending" }));
  const order: DevnetContractName[] = [
    "AssetToken",
    "LpToken",
    "VeLockNFT",
    "FurnaceQuoter",
    "Furnace",
    "ShareholderRoyalties",
    "LpStakingVault7D",
    "ClaimAllHelper",
    "LaunchController",
    // Last, so every address before it is what it was before MineCore existed.
    "MineCore",
  ];
  const at = Object.fromEntries(
    order.map((name, i) => [name, getContractAddress({ from: deployer, nonce: nonce0 + BigInt(i) })]),
  ) as DevnetAddresses;

  const constructorArgs: Record<DevnetContractName, readonly unknown[]> = {
    AssetToken: [deployer, DEVNET_INITIAL_SUPPLY, [at.Furnace, at.ShareholderRoyalties, at.LpStakingVault7D]],
    LpToken: [deployer, DEVNET_LP_INITIAL_SUPPLY],
    VeLockNFT: [at.AssetToken, at.Furnace, privateKeyToAccount(MARKET_PRIVATE_KEY).address],
    FurnaceQuoter: [at.VeLockNFT],
    Furnace: [
      at.AssetToken,
      at.VeLockNFT,
      at.FurnaceQuoter,
      at.ShareholderRoyalties,
      at.LpStakingVault7D,
      at.ClaimAllHelper,
    ],
    ShareholderRoyalties: [at.AssetToken, at.Furnace, at.ClaimAllHelper],
    LpStakingVault7D: [at.LpToken, at.AssetToken, at.Furnace, at.ClaimAllHelper],
    ClaimAllHelper: [at.AssetToken, at.ShareholderRoyalties, at.LpStakingVault7D, at.Furnace],
    LaunchController: [DEVNET_STATUS_BITMASK, DEVNET_ACCRUAL_DURATION],
    MineCore: [],
  };

  const startBlocks = {} as Record<DevnetContractName, number>;
  let blockNumber = 0n;
  for (const [i, name] of order.entries()) {
    const hash = await wallet.deployContract({
      abi: artifacts[name].abi,
      bytecode: artifacts[name].bytecode,
      args: constructorArgs[name],
      nonce: Number(nonce0) + i,
      chain: clients.chain,
    });
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deploying ${name} failed (${hash})`);
    if (getAddress(receipt.contractAddress) !== at[name]) {
      throw new Error(
        `${name} landed at ${receipt.contractAddress}, expected ${at[name]} (was the nonce used concurrently?)`,
      );
    }
    startBlocks[name] = Number(receipt.blockNumber);
    blockNumber = receipt.blockNumber;
  }

  const entry = (name: DevnetContractName) => ({ address: getAddress(at[name]), startBlock: startBlocks[name] });
  const raw = {
    name: "asset-protocol",
    version: "1.0.0-devnet",
    chain: "local",
    chainId,
    contracts: {
      AssetToken: entry("AssetToken"),
      VeLockNFT: entry("VeLockNFT"),
      Furnace: entry("Furnace"),
      FurnaceQuoter: entry("FurnaceQuoter"),
      ClaimAllHelper: entry("ClaimAllHelper"),
      ShareholderRoyalties: entry("ShareholderRoyalties"),
      LpStakingVault7D: entry("LpStakingVault7D"),
      LaunchController: entry("LaunchController"),
      MineCore: entry("MineCore"),
    },
    lpToken: entry("LpToken"),
  };
  const manifest = parseManifest(raw, "devnet deployment");
  await installMulticall3(opts.rpcUrl);
  return { manifest, addresses: at, deployer, chainId, blockNumber, artifacts };
}

/** Validates and writes the manifest (relative paths are taken from the repository root); returns the path. */
export function writeLocalManifest(manifest: Manifest, file = "deployments/local.json"): string {
  const target = path.resolve(REPO_ROOT, file);
  parseManifest(manifest, target);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(manifest, null, 2)}\n`);
  return target;
}
