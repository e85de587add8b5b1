import { type Hex, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedResult } from "../../devnet/seed";
import { type DevCall, revertName, send, startDevnet, type TestDevnet } from "../support/devnet";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 365n * DAY;
const MAX = 2n ** 256n - 1n;
const { alice, bob, carol, capped, fresh, deployer } = DEVNET_ACCOUNTS;

describe("VeLockNFT rules (protocol.md §1–2, §7)", () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let seed: SeedResult;
  const ve = (functionName: string, args: readonly unknown[]): DevCall => ({
    address: devnet.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName,
    args,
  });
  const lockInfo = (id: bigint) =>
    devnet.clients.publicClient.readContract({
      address: devnet.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "getLockInfo",
      args: [id],
    });
  const now = async () => (await devnet.clients.publicClient.getBlock()).timestamp;
  const create = async (key: Hex, user: `0x${string}`, amount: bigint, days: bigint, autoMax = false) => {
    const receipt = await send(devnet, key, ve("createLockFor", [user, amount, days * DAY, autoMax]));
    const [log] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    return { id: log!.args.tokenId, receipt };
  };

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    seed = devnet.seed;
    // fresh acts for itself in these tests, so it approves VeLockNFT like a wallet would
    await send(devnet, fresh.privateKey, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "approve",
      args: [devnet.addresses.VeLockNFT, MAX],
    });
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  describe("createLockFor reverts", () => {
    const lock = (amount: bigint, seconds: bigint, autoMax = false) =>
      ve("createLockFor", [fresh.address, amount, seconds, autoMax]);

    it("MinLockAmountNotMet below 1000e18 (999.999… and 0)", async () => {
      expect(await revertName(devnet, fresh.privateKey, lock(1000n * E18 - 1n, 30n * DAY))).toBe("MinLockAmountNotMet");
      expect(await revertName(devnet, fresh.privateKey, lock(0n, 30n * DAY))).toBe("MinLockAmountNotMet");
    });

    it("InvalidDuration for 6 days, 7 days − 1 s, 366 days and 365 days + 1 s", async () => {
      for (const seconds of [6n * DAY, 7n * DAY - 1n, 366n * DAY, YEAR + 1n]) {
        expect(await revertName(devnet, fresh.privateKey, lock(1000n * E18, seconds)), String(seconds)).toBe(
          "InvalidDuration",
        );
      }
    });

    it("AutoMax with any duration but 365 days reverts InvalidDuration", async () => {
      for (const seconds of [7n * DAY, 364n * DAY, YEAR - 1n]) {
        expect(await revertName(devnet, fresh.privateKey, lock(1000n * E18, seconds, true))).toBe("InvalidDuration");
      }
    });

    it("TooManyVeNFTs for a 33rd lock, also through the Furnace quote", async () => {
      const call = ve("createLockFor", [capped.address, 1000n * E18, 30n * DAY, false]);
      expect(await revertName(devnet, capped.privateKey, call)).toBe("TooManyVeNFTs");
      const quote: DevCall = {
        address: devnet.addresses.FurnaceQuoter,
        abi: DEVNET_ABIS.FurnaceQuoter,
        functionName: "quoteEnterWithClaim",
        args: [capped.address, 1000n * E18, 0n, 30n * DAY, false],
      };
      expect(await revertName(devnet, capped.privateKey, quote)).toBe("TooManyVeNFTs");
    });

    it("NotAuthorized when a third party calls the *For mutators for someone else", async () => {
      const id = seed.tokenIds.alicePlain;
      const end = (await now()) + 200n * DAY;
      expect(
        await revertName(devnet, fresh.privateKey, ve("createLockFor", [alice.address, 1000n * E18, 30n * DAY, false])),
      ).toBe("NotAuthorized");
      expect(await revertName(devnet, fresh.privateKey, ve("addToLockFor", [alice.address, id, E18]))).toBe(
        "NotAuthorized",
      );
      expect(await revertName(devnet, fresh.privateKey, ve("extendLockToFor", [alice.address, id, end]))).toBe(
        "NotAuthorized",
      );
      expect(
        await revertName(
          devnet,
          deployer.privateKey,
          ve("mergeLocksFor", [alice.address, id, seed.tokenIds.aliceAutoMax]),
        ),
      ).toBe("NotAuthorized");
      // the contract owner is no exception, and only the Furnace may burn sold-back locks
      expect(await revertName(devnet, deployer.privateKey, ve("burnFromFurnace", [id]))).toBe("NotAuthorized");
    });

    it("the user acting for themself succeeds (the §7 devnet divergence), pulling tokens from msg.sender", async () => {
      const { id } = await create(fresh.privateKey, fresh.address, 1000n * E18, 7n);
      expect((await lockInfo(id))[0]).toBe(1000n * E18);
    });
  });

  describe("NFT transfers are restricted", () => {
    it("approve, setApprovalForAll and free transfers revert TransfersRestricted", async () => {
      const id = seed.tokenIds.alicePlain;
      expect(await revertName(devnet, alice.privateKey, ve("approve", [bob.address, id]))).toBe("TransfersRestricted");
      expect(await revertName(devnet, alice.privateKey, ve("setApprovalForAll", [bob.address, true]))).toBe(
        "TransfersRestricted",
      );
      expect(await revertName(devnet, alice.privateKey, ve("transferFrom", [alice.address, bob.address, id]))).toBe(
        "TransfersRestricted",
      );
      expect(await revertName(devnet, alice.privateKey, ve("safeTransferFrom", [alice.address, bob.address, id]))).toBe(
        "TransfersRestricted",
      );
      // someone else cannot push alice's lock to the Furnace either
      expect(
        await revertName(devnet, bob.privateKey, ve("transferFrom", [alice.address, devnet.addresses.Furnace, id])),
      ).toBe("TransfersRestricted");
    });
  });

  describe("top-up, extend, unlock, merge reverts", () => {
    it("addToLockFor: below 1e18, burned lock, someone else's lock, expired lock, listed lock", async () => {
      const t = seed.tokenIds;
      expect(
        await revertName(devnet, alice.privateKey, ve("addToLockFor", [alice.address, t.alicePlain, E18 - 1n])),
      ).toBe("MinLockAmountNotMet");
      expect(
        await revertName(devnet, alice.privateKey, ve("addToLockFor", [alice.address, t.aliceUnlocked, E18])),
      ).toBe("NotLockOwner");
      expect(await revertName(devnet, alice.privateKey, ve("addToLockFor", [alice.address, t.carolFurnace, E18]))).toBe(
        "NotLockOwner",
      );
      expect(await revertName(devnet, carol.privateKey, ve("addToLockFor", [carol.address, t.carolExpired, E18]))).toBe(
        "LockExpired",
      );
      const { id } = await create(fresh.privateKey, fresh.address, 1000n * E18, 30n);
      await send(devnet, fresh.privateKey, ve("setListed", [id, true]));
      expect(await revertName(devnet, fresh.privateKey, ve("addToLockFor", [fresh.address, id, E18]))).toBe(
        "LockListed",
      );
      expect(
        await revertName(devnet, fresh.privateKey, ve("transferFrom", [fresh.address, devnet.addresses.Furnace, id])),
      ).toBe("LockListed");
      await send(devnet, fresh.privateKey, ve("setListed", [id, false]));
    });

    it("extendLockToFor: newEnd must satisfy oldEnd < newEnd ≤ now + 365d (InvalidLockEnd)", async () => {
      const id = seed.tokenIds.alicePlain;
      const [, oldEnd] = await lockInfo(id);
      expect(await revertName(devnet, alice.privateKey, ve("extendLockToFor", [alice.address, id, oldEnd]))).toBe(
        "InvalidLockEnd",
      );
      const tooFar = (await now()) + YEAR + 2n;
      expect(await revertName(devnet, alice.privateKey, ve("extendLockToFor", [alice.address, id, tooFar]))).toBe(
        "InvalidLockEnd",
      );
    });

    it("unlock: not expired (LockNotExpired), AutoMax (AutoMaxLock), not the owner (NotLockOwner)", async () => {
      const t = seed.tokenIds;
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.alicePlain]))).toBe("LockNotExpired");
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.aliceAutoMax]))).toBe("AutoMaxLock");
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.carolExpired]))).toBe("NotLockOwner");
    });

    it("setAutoMax on someone else's lock reverts NotLockOwner", async () => {
      expect(await revertName(devnet, bob.privateKey, ve("setAutoMax", [seed.tokenIds.alicePlain, true]))).toBe(
        "NotLockOwner",
      );
    });
  });

  describe("state rules", () => {
    it("a top-up on an AutoMax lock silently moves lockEnd to now + 365d", async () => {
      const id = seed.tokenIds.aliceAutoMax;
      await devnet.clients.testClient.increaseTime({ seconds: 3600 });
      const receipt = await send(devnet, alice.privateKey, ve("addToLockFor", [alice.address, id, 2n * E18]));
      const block = await devnet.clients.publicClient.getBlock({ blockNumber: receipt.blockNumber });
      const [, lockEnd, autoMax] = await lockInfo(id);
      expect([lockEnd, autoMax]).toEqual([block.timestamp + YEAR, true]);
    });

    it("merge: amounts add, autoMax is OR, lockEnd = autoMax ? now + 365d : max(ends); totalLockedClaim unchanged", async () => {
      const totalBefore = await devnet.clients.publicClient.readContract({
        address: devnet.addresses.VeLockNFT,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "totalLockedClaim",
      });
      const short = await create(fresh.privateKey, fresh.address, 1000n * E18, 10n);
      const long = await create(fresh.privateKey, fresh.address, 1500n * E18, 100n);
      const [, longEnd] = await lockInfo(long.id);
      await send(devnet, fresh.privateKey, ve("mergeLocksFor", [fresh.address, long.id, short.id]));
      expect(await lockInfo(short.id)).toEqual([2500n * E18, longEnd, false, false]);
      expect(await lockInfo(long.id)).toEqual([0n, 0n, false, false]);

      const auto = await create(fresh.privateKey, fresh.address, 1000n * E18, 365n, true);
      const receipt = await send(devnet, fresh.privateKey, ve("mergeLocksFor", [fresh.address, short.id, auto.id]));
      const block = await devnet.clients.publicClient.getBlock({ blockNumber: receipt.blockNumber });
      expect(await lockInfo(auto.id)).toEqual([3500n * E18, block.timestamp + YEAR, true, false]);
      const totalAfter = await devnet.clients.publicClient.readContract({
        address: devnet.addresses.VeLockNFT,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "totalLockedClaim",
      });
      expect(totalAfter - totalBefore).toBe(3500n * E18); // only the three creates added tokens
    });

    it("setAutoMax false resets lockEnd to now + 365d; the lock is then plain", async () => {
      const { id } = await create(fresh.privateKey, fresh.address, 1000n * E18, 365n, true);
      const receipt = await send(devnet, fresh.privateKey, ve("setAutoMax", [id, false]));
      const block = await devnet.clients.publicClient.getBlock({ blockNumber: receipt.blockNumber });
      expect(await lockInfo(id)).toEqual([1000n * E18, block.timestamp + YEAR, false, false]);
    });

    it("token ids are never reused: the next lock gets nextTokenId, above every burned id", async () => {
      const next = await devnet.clients.publicClient.readContract({
        address: devnet.addresses.VeLockNFT,
        abi: DEVNET_ABIS.VeLockNFT,
        functionName: "nextTokenId",
      });
      const { id } = await create(fresh.privateKey, fresh.address, 1000n * E18, 7n);
      expect(id).toBe(next);
      for (const burned of seed.burnedTokenIds) expect(id).toBeGreaterThan(burned);
    });

    it("an expired plain lock can be unlocked by its owner, returning the tokens", async () => {
      const id = seed.tokenIds.carolExpired;
      const balance = () =>
        devnet.clients.publicClient.readContract({
          address: devnet.addresses.AssetToken,
          abi: DEVNET_ABIS.AssetToken,
          functionName: "balanceOf",
          args: [carol.address],
        });
      const before = await balance();
      await send(devnet, carol.privateKey, ve("unlock", [id]));
      expect((await balance()) - before).toBe(1000n * E18);
      expect(await lockInfo(id)).toEqual([0n, 0n, false, false]);
    });
  });
});
