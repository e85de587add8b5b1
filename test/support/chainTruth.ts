import { type Address, getAddress } from "viem";
import { DEVNET_ABIS } from "../../devnet/deploy";
import type { ReadsDevnet } from "./readsDevnet";

/**
 * What the chain itself says at one block, read straight from anvil (not through the proxy): every minted
 * token id's owner and getLockInfo, and the user's balances. The state answer must equal this at its block.
 */
export async function chainLocksAt(d: ReadsDevnet, user: Address, blockNumber: bigint) {
  const { publicClient } = d.chain;
  const ve = d.deployment.addresses.VeLockNFT;
  const next = await publicClient.readContract({
    address: ve,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName: "nextTokenId",
    blockNumber,
  });
  const ids = Array.from({ length: Number(next) - 1 }, (_, i) => BigInt(i + 1));
  const rows = await Promise.all(
    ids.map(async (tokenId) => {
      const owner = await publicClient
        .readContract({
          address: ve,
          abi: DEVNET_ABIS.VeLockNFT,
          functionName: "ownerOf",
          args: [tokenId],
          blockNumber,
        })
        .catch(() => null); // burned: ownerOf reverts
      if (!owner || getAddress(owner) !== getAddress(user)) return null;
      const [amount, lockEnd, autoMax] = await publicClient.readContract({
        address: ve,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "getLockInfo",
        args: [tokenId],
        blockNumber,
      });
      return { tokenId: String(tokenId), amountWei: String(amount), lockEnd: String(lockEnd), autoMax };
    }),
  );
  return rows.filter((r): r is NonNullable<typeof r> => r !== null && BigInt(r.amountWei) > 0n);
}

/** The balances of the state answer, read one by one at `blockNumber`. */
export async function chainBalancesAt(d: ReadsDevnet, user: Address, blockNumber: bigint) {
  const { publicClient } = d.chain;
  const a = d.deployment.addresses;
  const read = (address: Address, abi: readonly unknown[], functionName: string) =>
    publicClient.readContract({
      address,
      abi: abi as never,
      functionName,
      args: [user],
      blockNumber,
    } as never) as Promise<bigint>;
  return {
    claimBalanceWei: String(await read(a.AssetToken, DEVNET_ABIS.AssetToken, "balanceOf")),
    lpStakedWei: String(await read(a.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "stakedBalance")),
    pendingRoyaltiesEthWei: String(
      await read(a.ShareholderRoyalties, DEVNET_ABIS.ShareholderRoyalties, "claimableEth"),
    ),
    pendingLpRewardsWei: String(await read(a.LpStakingVault7D, DEVNET_ABIS.LpStakingVault7D, "earned")),
    veBalanceWei: String(await read(a.VeLockNFT, DEVNET_ABIS.VeLockNFT, "veBalanceOf")),
  };
}

/** The supply figures straight from anvil (not through the proxy), both at the current head block. */
export async function chainSupplyAt(d: ReadsDevnet) {
  const pc = d.chain.publicClient;
  const blockNumber = await pc.getBlockNumber({ cacheTime: 0 });
  const [total, locked] = await Promise.all([
    pc.readContract({
      address: d.deployment.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "totalSupply",
      blockNumber,
    }),
    pc.readContract({
      address: d.deployment.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "totalLockedClaim",
      blockNumber,
    }),
  ]);
  return { total, locked, circulating: total - locked, blockNumber };
}
