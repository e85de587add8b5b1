import { type Address, parseEther, parseEventLogs, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import {
  DEVNET_ACCOUNTS,
  SEED_CHAIN_ADVANCE_SECONDS,
  SEED_SPARE_LP,
  SEED_SPARE_TOKEN,
  type SeedResult,
} from "../../devnet/seed";
import { revertName, startDevnet, type TestDevnet } from "../support/devnet";

const E18 = 10n ** 18n;
const YEAR = 31_536_000n;
const { alice, bob, carol, dave, capped, idle, fresh } = DEVNET_ACCOUNTS;

describe("seeded devnet: on-chain state", () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let seed: SeedResult;
  let at: TestDevnet["addresses"];

  const ve = <T>(functionName: string, args: readonly unknown[] = [], blockNumber?: bigint) =>
    devnet.clients.publicClient.readContract({
      address: at.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName,
      args,
      blockNumber,
    } as never) as Promise<T>;
  const lockInfo = (id: bigint) => ve<readonly [bigint, bigint, boolean, boolean]>("getLockInfo", [id]);
  const ownerOrZero = async (id: bigint): Promise<Address> => {
    try {
      return await ve<Address>("ownerOf", [id]);
    } catch {
      return zeroAddress;
    }
  };
  const erc20 = (token: Address, functionName: string, args: readonly unknown[]) =>
    devnet.clients.publicClient.readContract({
      address: token,
      abi: DEVNET_ABIS.AssetToken,
      functionName,
      args,
    } as never) as Promise<bigint>;
  const vault = (functionName: string, args: readonly unknown[]) =>
    devnet.clients.publicClient.readContract({
      address: at.LpStakingVault7D,
      abi: DEVNET_ABIS.LpStakingVault7D,
      functionName,
      args,
    } as never) as Promise<bigint>;
  const claimable = (user: Address) =>
    devnet.clients.publicClient.readContract({
      address: at.ShareholderRoyalties,
      abi: DEVNET_ABIS.ShareholderRoyalties,
      functionName: "claimableEth",
      args: [user],
    });

  /** A lock's amount as its events add it up: created + increased + merged in. */
  const amountFromEvents = async (tokenId: bigint) => {
    const logs = await devnet.clients.publicClient.getLogs({ address: at.VeLockNFT, fromBlock: 0n, toBlock: "latest" });
    let sum = 0n;
    for (const l of parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, logs })) {
      if (l.eventName === "LockCreated" && l.args.tokenId === tokenId) sum += l.args.amount;
      if (l.eventName === "LockAmountIncreased" && l.args.tokenId === tokenId) sum += l.args.amountAdded;
      if (l.eventName === "LockMerged" && l.args.intoTokenId === tokenId) sum += l.args.amountMoved;
    }
    return sum;
  };

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    seed = devnet.seed;
    at = devnet.addresses;
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  it("the seed moves chain time ahead by exactly SEED_CHAIN_ADVANCE_SECONDS (npm start starts anvil that far back)", () => {
    expect(seed.advancedSeconds).toBe(SEED_CHAIN_ADVANCE_SECONDS);
  });

  it("token ids run from 1 with no reuse; live and burned partition them", async () => {
    const next = await ve<bigint>("nextTokenId");
    const all = [...seed.liveTokenIds, ...seed.burnedTokenIds].sort((a, b) => (a < b ? -1 : 1));
    expect(all).toEqual(Array.from({ length: Number(next) - 1 }, (_, i) => BigInt(i + 1)));
    expect(seed.liveTokenIds.length).toBe(41); // 38 of the roles, 3 of the board players
    expect(seed.burnedTokenIds.sort()).toEqual(
      [
        seed.tokenIds.aliceUnlocked,
        seed.tokenIds.bobMergedFrom,
        seed.tokenIds.bobSoldBack,
        seed.tokenIds.daveDelegatedUnlock,
      ].sort(),
    );
  });

  it("totalLockedClaim equals the sum of getLockInfo amounts of the live token ids, and the token balance held", async () => {
    let sum = 0n;
    for (const id of seed.liveTokenIds) {
      const [amount] = await lockInfo(id);
      expect(amount).toBeGreaterThanOrEqual(1000n * E18);
      sum += amount;
    }
    expect(await ve<bigint>("totalLockedClaim")).toBe(sum);
    expect(await erc20(at.AssetToken, "balanceOf", [at.VeLockNFT])).toBe(sum);
  });

  it("burned locks have no owner (ownerOf reverts ERC721NonexistentToken) and read amount 0", async () => {
    for (const id of seed.burnedTokenIds) {
      expect(
        await revertName(devnet, alice.privateKey, {
          address: at.VeLockNFT,
          abi: DEVNET_ABIS.VeLockNFT,
          functionName: "ownerOf",
          args: [id],
        }),
      ).toBe("ERC721NonexistentToken");
      expect(await lockInfo(id)).toEqual([0n, 0n, false, false]);
    }
  });

  it("live locks belong to the expected accounts; NFT balances count live locks only", async () => {
    const t = seed.tokenIds;
    const expected: [bigint, Address][] = [
      [t.alicePlain, alice.address],
      [t.aliceAutoMax, alice.address],
      [t.bobMergedInto, bob.address],
      [t.carolFurnace, carol.address],
      [t.carolExpired, carol.address],
      [t.daveCompound, dave.address],
      ...t.capped.map((id): [bigint, Address] => [id, capped.address]),
    ];
    for (const [id, owner] of expected) expect(await ownerOrZero(id)).toBe(owner);
    expect(await ve<bigint>("balanceOf", [alice.address])).toBe(2n);
    expect(await ve<bigint>("balanceOf", [bob.address])).toBe(1n);
    expect(await ve<bigint>("balanceOf", [carol.address])).toBe(2n);
    expect(await ve<bigint>("balanceOf", [dave.address])).toBe(1n);
  });

  it("the capped account holds exactly 32 live locks: a 33rd through the Furnace reverts InvariantViolation", async () => {
    expect(await ve<bigint>("balanceOf", [capped.address])).toBe(32n);
    expect(seed.tokenIds.capped).toHaveLength(32);
    const viaFurnace = {
      address: at.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [1000n * E18, 0n, 30n * 86_400n, false, 1n],
    };
    // As published: the Furnace wraps the NFT's TooManyVeNFTs (Furnace._createNewLock).
    expect(await revertName(devnet, capped.privateKey, viaFurnace)).toBe("InvariantViolation");
    // VeLockNFT.createLockFor from the wallet itself: Furnace-only, as on Base.
    const direct = {
      address: at.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "createLockFor",
      args: [capped.address, 1000n * E18, 30n * 86_400n, false],
    };
    expect(await revertName(devnet, capped.privateKey, direct)).toBe("NotAuthorized");
  });

  it("the idle account has nothing: no transactions, tokens, LP, locks, royalties or rewards", async () => {
    const { publicClient } = devnet.clients;
    expect(await publicClient.getTransactionCount({ address: idle.address })).toBe(0);
    expect(await publicClient.getBalance({ address: idle.address })).toBe(parseEther("10000"));
    expect(await erc20(at.AssetToken, "balanceOf", [idle.address])).toBe(0n);
    expect(await erc20(at.LpToken, "balanceOf", [idle.address])).toBe(0n);
    expect(await ve<bigint>("balanceOf", [idle.address])).toBe(0n);
    expect(await ve<bigint>("veBalanceOf", [idle.address])).toBe(0n);
    expect(await vault("stakedBalance", [idle.address])).toBe(0n);
    expect(await vault("earned", [idle.address])).toBe(0n);
    expect(await vault("getUnbondCount", [idle.address])).toBe(0n);
    expect(await claimable(idle.address)).toBe(0n);
  });

  it("the sell-back lock was transferred to the Furnace and burned by it; the Furnace holds no lock", async () => {
    expect(await ownerOrZero(seed.tokenIds.bobSoldBack)).toBe(zeroAddress);
    expect(await lockInfo(seed.tokenIds.bobSoldBack)).toEqual([0n, 0n, false, false]);
    expect(await ve<bigint>("balanceOf", [at.Furnace])).toBe(0n);
  });

  it("lock states: top-ups, extension, merge, AutoMax off, royalties mode 1 top-up, vault compound", async () => {
    const t = seed.tokenIds;
    // Every lock went through the Furnace: amount = principal + the devnet bonus, as LockCreated/LockAmountIncreased say.
    const [plainAmount, plainEnd, plainAuto] = await lockInfo(t.alicePlain);
    expect(plainAuto).toBe(false);
    expect(plainAmount).toBe(await amountFromEvents(t.alicePlain));
    expect(plainAmount).toBeGreaterThan(5_500n * E18); // 5000 (30 days, +0.4 %) + 500 (~30 days left)
    expect(plainAmount).toBeLessThan(5_530n * E18);
    const plainStart = await ve<bigint>("lockStartOf", [t.alicePlain]);
    expect(plainEnd - plainStart).toBeGreaterThan(89n * 86_400n); // extended from 30 to ~90 days

    // AutoMax entries count 365 days: the 9.9 % bonus on 10000 and on the 1000 top-up.
    const [autoAmount, , autoFlag] = await lockInfo(t.aliceAutoMax);
    expect([autoAmount, autoFlag]).toEqual([12_089n * E18, true]);

    // bob: 3000 merged into 4000 (each with its bonus), AutoMax on then off, then 1 ETH of royalties × 10_000
    // locked with ~365 days left (+~9.9 %).
    const [bobAmount, , bobAuto] = await lockInfo(t.bobMergedInto);
    expect(bobAuto).toBe(false);
    expect(bobAmount).toBe(await amountFromEvents(t.bobMergedInto));
    expect(bobAmount).toBeGreaterThan(17_500n * E18);
    expect(bobAmount).toBeLessThan(18_500n * E18);

    // dave: 1000 tokens of rewards, compounded into a new AutoMax 365-day lock with the 9.9 % bonus.
    expect(await lockInfo(t.daveCompound)).toEqual([1_099n * E18, expect.any(BigInt), true, false]);
  });

  it("veBalanceOf follows protocol.md §2 over the live locks (AutoMax = amount, expired = 0)", async () => {
    const block = await devnet.clients.publicClient.getBlock({ blockTag: "latest" });
    const veOf = ([amount, end, autoMax]: readonly [bigint, bigint, boolean, boolean]) =>
      autoMax ? amount : end <= block.timestamp ? 0n : (amount * (end - block.timestamp)) / YEAR;
    const t = seed.tokenIds;
    const owned: Record<string, bigint[]> = {
      alice: [t.alicePlain, t.aliceAutoMax],
      carol: [t.carolFurnace, t.carolExpired],
      capped: t.capped,
    };
    for (const [role, ids] of Object.entries(owned)) {
      let expected = 0n;
      for (const id of ids) expected += veOf(await lockInfo(id));
      const address = DEVNET_ACCOUNTS[role as keyof typeof DEVNET_ACCOUNTS].address;
      expect(await ve<bigint>("veBalanceOf", [address], block.number), role).toBe(expected);
    }
    expect(veOf(await lockInfo(t.carolExpired))).toBe(0n); // expired but not unlocked: live, no ve
  });

  it("LP: dave's matured unbond was withdrawn, one unbond remains open, stake and balances add up", async () => {
    expect(await vault("stakedBalance", [dave.address])).toBe(50n * E18); // 100 staked − 30 − 20 unbonded
    expect(await vault("getUnbondCount", [dave.address])).toBe(1n);
    const [, amount, unlockTime] = (await devnet.clients.publicClient.readContract({
      address: at.LpStakingVault7D,
      abi: DEVNET_ABIS.LpStakingVault7D,
      functionName: "getUnbondByIndex",
      args: [dave.address, 0n],
    })) as readonly [bigint, bigint, bigint];
    const now = (await devnet.clients.publicClient.getBlock()).timestamp;
    expect(amount).toBe(20n * E18);
    expect(unlockTime).toBeGreaterThan(now);
    expect(await erc20(at.LpToken, "balanceOf", [dave.address])).toBe(930n * E18); // 1000 − 100 + 30 withdrawn
    expect(await vault("stakedBalance", [carol.address])).toBe(50n * E18);
  });

  it("royalties: mode 0 and claimAll paid ETH out, mode 1 kept it; only the later accruals are pending", async () => {
    expect(await claimable(alice.address)).toBe(parseEther("0.25"));
    expect(await claimable(bob.address)).toBe(parseEther("0.1"));
    expect(await claimable(carol.address)).toBe(0n);
    // accrued 2 + 1 + 0.5 + 0.25 + 0.1; paid out 2 (alice) + 0.5 (carol); bob's 1 ETH was "swapped" and stays,
    // and so does frank's 0.2 (the board players' claims in mode 0 are paid out).
    expect(await devnet.clients.publicClient.getBalance({ address: at.ShareholderRoyalties })).toBe(parseEther("1.55"));
    expect(await vault("earned", [carol.address])).toBe(40n * E18);
    expect(await vault("earned", [dave.address])).toBe(25n * E18);
  });

  it("users keep spare AssetToken and LP; fresh has balances but no allowances", async () => {
    for (const who of [alice, bob, carol, dave, capped, fresh]) {
      expect(await erc20(at.AssetToken, "balanceOf", [who.address])).toBeGreaterThanOrEqual(SEED_SPARE_TOKEN);
    }
    for (const who of [alice, bob, carol, dave, fresh]) {
      expect(await erc20(at.LpToken, "balanceOf", [who.address])).toBeGreaterThanOrEqual(SEED_SPARE_LP);
    }
    // carol got 100 reward tokens from claimAll mode 0 on top of what she did not lock
    expect(await erc20(at.AssetToken, "balanceOf", [carol.address])).toBe(
      (100_000n - 2_000n - 500n - 1_000n + 100n) * E18,
    );
    expect(await ve<bigint>("balanceOf", [fresh.address])).toBe(0n);
    expect(await erc20(at.AssetToken, "allowance", [fresh.address, at.VeLockNFT])).toBe(0n);
    expect(await erc20(at.AssetToken, "allowance", [fresh.address, at.Furnace])).toBe(0n);
  });

  it("DEVNET_ACCOUNTS are anvil's funded dev accounts", async () => {
    const accounts = (await devnet.clients.publicClient.request({ method: "eth_accounts" } as never)) as Address[];
    const roles = Object.values(DEVNET_ACCOUNTS).map((a) => a.address.toLowerCase());
    expect(accounts.slice(0, roles.length).map((a) => a.toLowerCase())).toEqual(roles);
  });
});
