import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { getAddress, parseEther } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTRACT_NAMES, parseManifest } from "../../api/manifest";
import { type AnvilHandle, startAnvil } from "../../devnet/anvil";
import {
  DEPLOYER_PRIVATE_KEY,
  DEVNET_ABIS,
  DEVNET_INITIAL_SUPPLY,
  type DevnetDeployment,
  deployDevnet,
  devnetClients,
  writeLocalManifest,
} from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { revertName, send, type TestDevnet } from "../support/devnet";

describe("deployDevnet", () => {
  let a: AnvilHandle;
  let b: AnvilHandle;
  let first: DevnetDeployment;
  let second: DevnetDeployment;
  let tmp: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([startAnvil(), startAnvil()]);
    [first, second] = await Promise.all([deployDevnet({ rpcUrl: a.rpcUrl }), deployDevnet({ rpcUrl: b.rpcUrl })]);
    tmp = mkdtempSync(path.join(tmpdir(), "devnet-manifest-"));
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("two fresh anvils on different ports get identical manifests (addresses and start blocks)", () => {
    expect(a.port).not.toBe(b.port);
    expect(second.manifest).toEqual(first.manifest);
    expect(second.addresses).toEqual(first.addresses);
  });

  it("the manifest has the published format: local chain 31337, every contract, EIP-55 addresses, start blocks", () => {
    const m = first.manifest;
    expect(m).toMatchObject({ name: "asset-protocol", chain: "local", chainId: 31337 });
    expect(Object.keys(m.contracts).sort()).toEqual([...CONTRACT_NAMES].sort());
    for (const entry of [...Object.values(m.contracts), m.lpToken]) {
      expect(entry?.address).toBe(getAddress(entry!.address));
      expect(entry?.startBlock).toBeGreaterThan(0);
    }
    expect(parseManifest(JSON.parse(JSON.stringify(m)), "roundtrip", 31337)).toEqual(m);
    // Deployment mines one block per contract and nothing else.
    expect(first.blockNumber).toBe(10n);
  });

  it("writeLocalManifest writes a file parseManifest accepts for chain 31337", () => {
    const file = writeLocalManifest(first.manifest, path.join(tmp, "local.json"));
    expect(file).toBe(path.join(tmp, "local.json"));
    const raw = JSON.parse(readFileSync(file, "utf8"));
    expect(raw).toEqual(first.manifest);
    expect(parseManifest(raw, file, 31337)).toEqual(first.manifest);
  });

  it("writeLocalManifest refuses an invalid manifest", () => {
    const bad = { ...first.manifest, contracts: { AssetToken: { address: first.addresses.AssetToken.toLowerCase() } } };
    // a lower-case address with letters is not EIP-55
    expect(() => writeLocalManifest(bad, path.join(tmp, "bad.json"))).toThrow(/EIP-55/);
  });

  it("every manifest address holds code, and the contracts are wired to each other", async () => {
    const { publicClient } = devnetClients(a.rpcUrl);
    const at = first.addresses;
    for (const address of Object.values(at)) {
      expect((await publicClient.getCode({ address }))?.length ?? 0).toBeGreaterThan(2);
    }
    const read = <T>(address: `0x${string}`, abi: readonly unknown[], functionName: string) =>
      publicClient.readContract({ address, abi: abi as never, functionName } as never) as Promise<T>;
    expect(await read(at.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "lpToken")).toBe(at.LpToken);
    expect(await read(at.VeLockNFT, DEVNET_ABIS.VeLockNFT, "furnace")).toBe(at.Furnace);
    expect(await read(at.AssetToken, DEVNET_ABIS.AssetToken, "decimals")).toBe(18);
    expect(await read(at.LpToken, DEVNET_ABIS.LpToken, "decimals")).toBe(18);
    expect(await read(at.AssetToken, DEVNET_ABIS.AssetToken, "totalSupply")).toBe(DEVNET_INITIAL_SUPPLY);
    expect(await read(at.VeLockNFT, DEVNET_ABIS.VeLockNFT, "nextTokenId")).toBe(1n);
    expect(await read(at.VeLockNFT, DEVNET_ABIS.VeLockNFT, "totalLockedClaim")).toBe(0n);
    for (const minter of [at.Furnace, at.ShareholderRoyalties, at.LpStakingVault7D]) {
      const isMinter = await publicClient.readContract({
        address: at.AssetToken,
        abi: DEVNET_ABIS.AssetToken,
        functionName: "isMinter",
        args: [minter],
      });
      expect(isMinter).toBe(true);
    }
  });

  it("LaunchController is deployed finalized (0x7FE) with requiredSeedEth = 50 ETH × 2 days / 10 days", async () => {
    const { publicClient } = devnetClients(a.rpcUrl);
    const [bitmask, seedEth] = await publicClient.readContract({
      address: first.addresses.LaunchController,
      abi: DEVNET_ABIS.LaunchController,
      functionName: "preflight",
    });
    expect(bitmask).toBe(0x7fen);
    expect(bitmask & 1n).toBe(0n);
    expect(seedEth).toBe(parseEther("10"));
  });

  it("the deployer can flip bit 0 to close the gate; anyone else reverts NotAuthorized", async () => {
    const devnet = { clients: devnetClients(b.rpcUrl) } as TestDevnet;
    const call = {
      address: second.addresses.LaunchController,
      abi: DEVNET_ABIS.LaunchController,
      functionName: "setStatusBitmask",
      args: [0x7ffn],
    };
    expect(await revertName(devnet, DEVNET_ACCOUNTS.alice.privateKey, call)).toBe("NotAuthorized");
    await send(devnet, DEPLOYER_PRIVATE_KEY, call);
    const [bitmask] = await devnet.clients.publicClient.readContract({
      address: second.addresses.LaunchController,
      abi: DEVNET_ABIS.LaunchController,
      functionName: "preflight",
    });
    expect(bitmask).toBe(0x7ffn);
  });

  it("startAnvil honours chainId and stop() ends the process", async () => {
    const other = await startAnvil({ chainId: 8453 });
    expect(await devnetClients(other.rpcUrl, 8453).publicClient.getChainId()).toBe(8453);
    await other.stop();
    await expect(fetch(other.rpcUrl, { method: "POST", body: "{}" })).rejects.toThrow();
  });
});
