import { type Address, parseEther, parseEventLogs, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOYER_PRIVATE_KEY, DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedResult } from "../../devnet/seed";
import {
  type DevCall,
  revertName,
  revertNameFrom,
  send,
  sendAs,
  startDevnet,
  type TestDevnet,
} from "../support/devnet";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 365n * DAY;
const { alice, bob, carol, dave, fresh } = DEVNET_ACCOUNTS;

describe("royalties, LP vault and ClaimAllHelper", () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let at: TestDevnet["addresses"];
  const royalties = (functionName: string, args: readonly unknown[], value?: bigint): DevCall => ({
    address: at.ShareholderRoyalties,
    abi: DEVNET_ABIS.ShareholderRoyalties,
    functionName,
    args,
    value,
  });
  const vault = (functionName: string, args: readonly unknown[] = []): DevCall => ({
    address: at.LpStakingVault7D,
    abi: DEVNET_ABIS.LpStakingVault7D,
    functionName,
    args,
  });
  const claimAll = (args: readonly unknown[]): DevCall => ({
    address: at.ClaimAllHelper,
    abi: DEVNET_ABIS.ClaimAllHelper,
    functionName: "claimAll",
    args,
  });
  const read = <T>(call: DevCall) => devnet.clients.publicClient.readContract(call as never) as Promise<T>;
  const tokenBalance = (token: Address, who: Address) =>
    read<bigint>({ address: token, abi: DEVNET_ABIS.AssetToken, functionName: "balanceOf", args: [who] });
  const created = (receipt: TransactionReceipt) =>
    parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs })[0]!.args;
  const gasCost = (r: TransactionReceipt) => r.gasUsed * r.effectiveGasPrice;

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    at = devnet.addresses;
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  it("InvalidMode for any mode but 0 and 1 (royalties and claimAll)", async () => {
    for (const mode of [2, 3, 255]) {
      expect(await revertName(devnet, alice.privateKey, royalties("claimShareholder", [mode, 0n, 0n, false, 1n]))).toBe(
        "InvalidMode",
      );
      expect(await revertName(devnet, alice.privateKey, claimAll([mode, 0n, 0n, false, 1n]))).toBe("InvalidMode");
    }
  });

  it("MinVeOutRequired when locking with minVeOut 0 (royalties mode 1, claimAll mode 1, vault compound)", async () => {
    expect(await revertName(devnet, alice.privateKey, royalties("claimShareholder", [1, 0n, YEAR, true, 0n]))).toBe(
      "MinVeOutRequired",
    );
    expect(await revertName(devnet, alice.privateKey, claimAll([1, 0n, YEAR, true, 0n]))).toBe("MinVeOutRequired");
    expect(await revertName(devnet, carol.privateKey, vault("claimRewardsAndLock", [0n, YEAR, true, 0n]))).toBe(
      "MinVeOutRequired",
    );
  });

  it("the *For variants and accruals are restricted (NotAuthorized)", async () => {
    expect(await revertName(devnet, alice.privateKey, royalties("claimShareholderFor", [alice.address, 0]))).toBe(
      "NotAuthorized",
    );
    expect(await revertName(devnet, alice.privateKey, vault("claimRewardsFor", [alice.address, alice.address]))).toBe(
      "NotAuthorized",
    );
    expect(await revertName(devnet, alice.privateKey, royalties("accrue", [alice.address], 1n))).toBe("NotAuthorized");
    expect(await revertName(devnet, alice.privateKey, vault("accrueRewards", [alice.address, 1n]))).toBe(
      "NotAuthorized",
    );
  });

  it("royalties mode 1 converts at 10,000 tokens per ETH and locks through the Furnace (new AutoMax lock)", async () => {
    // bob has 0.1 ETH pending → 1,000 tokens + 9.9 % bonus
    const receipt = await send(devnet, bob.privateKey, royalties("claimShareholder", [1, 0n, YEAR, true, 1n]));
    expect(created(receipt)).toMatchObject({ user: bob.address, amount: 1_099n * E18, autoMax: true });
    expect(await read(royalties("claimableEth", [bob.address]))).toBe(0n);
  });

  it("claimAll mode 1 locks royalties and LP rewards together in ONE Furnace entry", async () => {
    await send(devnet, DEPLOYER_PRIVATE_KEY, royalties("accrue", [carol.address], parseEther("0.2")));
    // 0.2 ETH → 2,000 tokens, + carol's 40 reward tokens = 2,040; 30 days: 500 bps → bonus 2,040 × 400 / 100,000
    const receipt = await send(devnet, carol.privateKey, claimAll([1, 0n, 30n * DAY, false, 1n]));
    const block = await devnet.clients.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    expect(created(receipt)).toMatchObject({
      user: carol.address,
      amount: 2_040n * E18 + (2_040n * E18 * 400n) / 100_000n,
      lockEnd: block.timestamp + 30n * DAY,
    });
    expect(await read(royalties("claimableEth", [carol.address]))).toBe(0n);
    expect(await read(vault("earned", [carol.address]))).toBe(0n);
  });

  it("claimAll mode 0 pays the ETH and the reward tokens to the user", async () => {
    await send(devnet, DEPLOYER_PRIVATE_KEY, royalties("accrue", [dave.address], parseEther("0.3")));
    const { publicClient } = devnet.clients;
    const ethBefore = await publicClient.getBalance({ address: dave.address });
    const tokensBefore = await tokenBalance(at.AssetToken, dave.address);
    const receipt = await send(devnet, dave.privateKey, claimAll([0, 0n, 0n, false, 0n]));
    expect(await publicClient.getBalance({ address: dave.address })).toBe(
      ethBefore + parseEther("0.3") - gasCost(receipt),
    );
    expect((await tokenBalance(at.AssetToken, dave.address)) - tokensBefore).toBe(25n * E18);
  });

  it("mode 0 forwards at most 200,000 gas with the ETH (published ethPushGasCap): a heavy receive() fails", async () => {
    // Contract wallets whose receive() writes n fresh slots (22,100 gas each): 12 need ~265k, 6 ~133k.
    const wallet = async (address: Address, slots: number) => {
      let code = "0x";
      for (let i = 1; i <= slots; i++) code += `600160${i.toString(16).padStart(2, "0")}55`;
      await devnet.clients.testClient.setCode({ address, bytecode: `${code}00` as `0x${string}` });
      await send(devnet, DEPLOYER_PRIVATE_KEY, royalties("accrue", [address], parseEther("0.01")));
    };
    const heavy: Address = "0x00000000000000000000000000000000000C0111";
    const light: Address = "0x00000000000000000000000000000000000C0112";
    await wallet(heavy, 12);
    await wallet(light, 6);
    const collect = royalties("claimShareholder", [0, 0n, 0n, false, 0n]);
    expect(await revertNameFrom(devnet, heavy, collect)).toBe("EthTransferFailed");
    await sendAs(devnet, light, collect);
    expect(await read<bigint>(royalties("claimableEth", [light]))).toBe(0n);
  });

  it("nothing to collect is a no-op in both modes", async () => {
    const receipt = await send(devnet, fresh.privateKey, claimAll([1, 0n, YEAR, true, 1n]));
    expect(parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, logs: receipt.logs })).toEqual([]);
    await send(devnet, fresh.privateKey, royalties("claimShareholder", [0, 0n, 0n, false, 0n]));
  });

  describe("LP vault", () => {
    beforeAll(async () => {
      await send(devnet, fresh.privateKey, {
        address: at.LpToken,
        abi: DEVNET_ABIS.LpToken,
        functionName: "approve",
        args: [at.LpStakingVault7D, 2n ** 256n - 1n],
      });
    });

    it("stake: AmountZero, AmountTooSmall below 1e15; 1e15 is accepted", async () => {
      expect(await revertName(devnet, fresh.privateKey, vault("stake", [0n]))).toBe("AmountZero");
      expect(await revertName(devnet, fresh.privateKey, vault("stake", [10n ** 15n - 1n]))).toBe("AmountTooSmall");
      await send(devnet, fresh.privateKey, vault("stake", [10n ** 15n]));
      expect(await read(vault("stakedBalance", [fresh.address]))).toBe(10n ** 15n);
    });

    it("beginUnbond: InsufficientStake, then at most 25 open unbonds (TooManyUnbonds)", async () => {
      await send(devnet, fresh.privateKey, vault("stake", [100n * E18]));
      expect(await revertName(devnet, fresh.privateKey, vault("beginUnbond", [200n * E18]))).toBe("InsufficientStake");
      for (let i = 0; i < 25; i++) await send(devnet, fresh.privateKey, vault("beginUnbond", [E18]));
      expect(await read(vault("getUnbondCount", [fresh.address]))).toBe(25n);
      expect(await revertName(devnet, fresh.privateKey, vault("beginUnbond", [E18]))).toBe("TooManyUnbonds");
      const [firstId, amount] = await read<readonly [bigint, bigint, bigint]>(
        vault("getUnbondByIndex", [fresh.address, 0n]),
      );
      const [lastId] = await read<readonly [bigint, bigint, bigint]>(vault("getUnbondByIndex", [fresh.address, 24n]));
      expect(amount).toBe(E18);
      expect(lastId - firstId).toBe(24n);
    });

    it("withdrawMatured returns without a transfer before 7 days (as published), then pays every matured unbond", async () => {
      for (const who of [fresh, dave]) {
        const lpBefore = await tokenBalance(at.LpToken, who.address);
        const count = await read(vault("getUnbondCount", [who.address]));
        const receipt = await send(devnet, who.privateKey, vault("withdrawMatured"));
        expect(receipt.status).toBe("success");
        expect(receipt.logs).toEqual([]);
        expect(await tokenBalance(at.LpToken, who.address)).toBe(lpBefore);
        expect(await read(vault("getUnbondCount", [who.address]))).toBe(count);
      }
      await devnet.clients.testClient.increaseTime({ seconds: Number(7n * DAY) });
      await devnet.clients.testClient.mine({ blocks: 1 });
      const before = await tokenBalance(at.LpToken, fresh.address);
      await send(devnet, fresh.privateKey, vault("withdrawMatured"));
      expect((await tokenBalance(at.LpToken, fresh.address)) - before).toBe(25n * E18);
      expect(await read(vault("getUnbondCount", [fresh.address]))).toBe(0n);
      await send(devnet, dave.privateKey, vault("withdrawMatured")); // the seed's open unbond (20 LP)
      expect(await read(vault("getUnbondCount", [dave.address]))).toBe(0n);
    });

    it("claimRewardsAndLock: duration rules for every target, AutoMax only for a new 365-day lock, LockCooldown", async () => {
      // nothing earned: returns without a transfer whatever the arguments (as published)
      expect(await read(vault("earned", [fresh.address]))).toBe(0n);
      const idle = await send(devnet, fresh.privateKey, vault("claimRewardsAndLock", [0n, 0n, true, 0n]));
      expect(idle.logs).toEqual([]);
      await send(devnet, DEPLOYER_PRIVATE_KEY, vault("accrueRewards", [fresh.address, 2_000n * E18]));
      const key = fresh.privateKey;
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [0n, 14n * DAY, false, 0n]))).toBe(
        "MinVeOutRequired",
      );
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [0n, 6n * DAY, false, 1n]))).toBe(
        "InvalidDuration",
      );
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [0n, 366n * DAY, false, 1n]))).toBe(
        "InvalidDuration",
      );
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [0n, 100n * DAY, true, 1n]))).toBe(
        "InvalidDuration",
      );
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [1n, YEAR, true, 1n]))).toBe("AutoMaxMismatch");
      // the duration is checked for a top-up too (the lock's own time left is what counts afterwards)
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [1n, 0n, false, 1n]))).toBe("InvalidDuration");
      const receipt = await send(devnet, key, vault("claimRewardsAndLock", [0n, 14n * DAY, false, 1n]));
      expect(created(receipt)).toMatchObject({ user: fresh.address, amount: 2_001_500n * 10n ** 15n }); // 175 bps → bonus 2000 × 75 / 100000 = 1.5

      await send(devnet, DEPLOYER_PRIVATE_KEY, vault("accrueRewards", [fresh.address, 1_000n * E18]));
      // the published vault's own error, not the Errors library's CadenceNotMet
      expect(await revertName(devnet, key, vault("claimRewardsAndLock", [0n, 14n * DAY, false, 1n]))).toBe(
        "LockCooldown",
      );
      await devnet.clients.testClient.increaseTime({ seconds: Number(DAY) });
      await devnet.clients.testClient.mine({ blocks: 1 });
      await send(devnet, key, vault("claimRewardsAndLock", [0n, 7n * DAY, false, 1n]));
    });

    it("claimRewards pays the accrued tokens", async () => {
      await send(devnet, DEPLOYER_PRIVATE_KEY, vault("accrueRewards", [alice.address, 7n * E18]));
      const before = await tokenBalance(at.AssetToken, alice.address);
      await send(devnet, alice.privateKey, vault("claimRewards"));
      expect((await tokenBalance(at.AssetToken, alice.address)) - before).toBe(7n * E18);
      expect(await read(vault("earned", [alice.address]))).toBe(0n);
    });
  });
});
