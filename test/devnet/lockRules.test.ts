import { type Address, parseEventLogs, type TransactionReceipt } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVNET_ABIS } from "../../devnet/deploy";
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
const MAX = 2n ** 256n - 1n;
const { alice, bob, carol, capped, fresh, deployer, market } = DEVNET_ACCOUNTS;

// VeLockNFT as the published Solidity behaves (protocol.md §1, §2, §8): the *For mutators accept only the
// Furnace, so their own rules are checked with the Furnace as caller (eth_call from its address, or an
// impersonated send), and what a wallet can do goes through Furnace.enterWithClaim.
describe("VeLockNFT rules (protocol.md §1–2, §8)", () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let seed: SeedResult;
  let furnace: Address;
  const ve = (functionName: string, args: readonly unknown[]): DevCall => ({
    address: devnet.addresses.VeLockNFT,
    abi: DEVNET_ABIS.VeLockNFT,
    functionName,
    args,
  });
  const viaFurnace = (functionName: string, args: readonly unknown[]): DevCall => ({
    address: devnet.addresses.Furnace,
    abi: DEVNET_ABIS.Furnace,
    functionName,
    args,
  });
  const read = <T>(functionName: string, args: readonly unknown[] = [], blockNumber?: bigint) =>
    devnet.clients.publicClient.readContract({
      address: devnet.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName,
      args,
      blockNumber,
    } as never) as Promise<T>;
  const lockInfo = (id: bigint, blockNumber?: bigint) =>
    read<readonly [bigint, bigint, boolean, boolean]>("getLockInfo", [id], blockNumber);
  const now = async () => (await devnet.clients.publicClient.getBlock()).timestamp;
  const blockTime = async (r: TransactionReceipt) =>
    (await devnet.clients.publicClient.getBlock({ blockNumber: r.blockNumber })).timestamp;
  const eventNames = (r: TransactionReceipt) =>
    parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, logs: r.logs }).map((l) => l.eventName);
  /** A lock of `fresh` through the Furnace (minVeOut 1: these tests are not about slippage). */
  const create = async (days: bigint, autoMax = false, amount = 1000n * E18) => {
    const receipt = await send(
      devnet,
      fresh.privateKey,
      viaFurnace("enterWithClaim", [amount, 0n, days * DAY, autoMax, 1n]),
    );
    const [log] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    return { id: log!.args.tokenId, receipt };
  };

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    seed = devnet.seed;
    furnace = devnet.addresses.Furnace;
    await send(devnet, fresh.privateKey, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "approve",
      args: [furnace, MAX],
    });
    // The Furnace pays the tokens VeLockNFT pulls when a test calls a *For mutator as the Furnace.
    await send(devnet, deployer.privateKey, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [furnace, 100_000n * E18],
    });
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  describe("the *For mutators accept only the Furnace (NotAuthorized from a wallet, as on Base)", () => {
    it("a wallet acting for itself, a third party and the contracts' owner all get NotAuthorized", async () => {
      const id = seed.tokenIds.alicePlain;
      const end = (await now()) + 200n * DAY;
      for (const who of [alice, fresh, deployer]) {
        const calls = [
          ve("createLockFor", [alice.address, 1000n * E18, 30n * DAY, false]),
          ve("addToLockFor", [alice.address, id, E18]),
          ve("extendLockToFor", [alice.address, id, end]),
          ve("mergeLocksFor", [alice.address, id, seed.tokenIds.aliceAutoMax]),
          ve("furnaceBurnAndWithdraw", [id, who.address]),
        ];
        for (const call of calls) {
          expect(await revertName(devnet, who.privateKey, call), `${call.functionName} from ${who.address}`).toBe(
            "NotAuthorized",
          );
        }
      }
    });

    it("the same calls pass from the Furnace's address", async () => {
      const id = seed.tokenIds.alicePlain;
      const [, end] = await lockInfo(id);
      await sendAs(devnet, furnace, ve("extendLockToFor", [alice.address, id, end + DAY]));
      expect((await lockInfo(id))[1]).toBe(end + DAY);
    });
  });

  describe("createLockFor rules (Furnace as caller)", () => {
    const lock = (amount: bigint, seconds: bigint, autoMax = false) =>
      ve("createLockFor", [fresh.address, amount, seconds, autoMax]);

    it("MinLockAmountNotMet below 1000e18 (999.999… and 0)", async () => {
      expect(await revertNameFrom(devnet, furnace, lock(1000n * E18 - 1n, 30n * DAY))).toBe("MinLockAmountNotMet");
      expect(await revertNameFrom(devnet, furnace, lock(0n, 30n * DAY))).toBe("MinLockAmountNotMet");
    });

    it("InvalidDuration for 6 days, 7 days − 1 s, 366 days and 365 days + 1 s", async () => {
      for (const seconds of [6n * DAY, 7n * DAY - 1n, 366n * DAY, YEAR + 1n]) {
        expect(await revertNameFrom(devnet, furnace, lock(1000n * E18, seconds)), String(seconds)).toBe(
          "InvalidDuration",
        );
      }
    });

    it("AutoMax with any duration but 365 days: AutoMaxMismatch at the NFT, InvalidDuration through the Furnace (as published)", async () => {
      for (const seconds of [7n * DAY, 364n * DAY, YEAR - 1n]) {
        expect(await revertNameFrom(devnet, furnace, lock(1000n * E18, seconds, true))).toBe("AutoMaxMismatch");
      }
      expect(
        await revertName(
          devnet,
          fresh.privateKey,
          viaFurnace("enterWithClaim", [1000n * E18, 0n, 30n * DAY, true, 1n]),
        ),
      ).toBe("InvalidDuration");
    });

    it("a 33rd lock: TooManyVeNFTs at the NFT, InvariantViolation through the Furnace, and the quoter does not check", async () => {
      const call = ve("createLockFor", [capped.address, 1000n * E18, 30n * DAY, false]);
      expect(await revertNameFrom(devnet, furnace, call)).toBe("TooManyVeNFTs");
      // Published Furnace._createNewLock replaces the NFT's revert with InvariantViolation.
      expect(
        await revertName(
          devnet,
          capped.privateKey,
          viaFurnace("enterWithClaim", [1000n * E18, 0n, 30n * DAY, false, 1n]),
        ),
      ).toBe("InvariantViolation");
      // Published FurnaceQuoter counts no locks: the quote succeeds.
      const [principal, , veOut] = await devnet.clients.publicClient.readContract({
        address: devnet.addresses.FurnaceQuoter,
        abi: DEVNET_ABIS.FurnaceQuoter,
        functionName: "quoteEnterWithClaim",
        args: [capped.address, 1000n * E18, 0n, 30n * DAY, false],
      });
      expect(principal).toBe(1000n * E18);
      expect(veOut).toBeGreaterThan(0n);
    });

    it("a wallet's lock through Furnace.enterWithClaim holds principal + bonus and pulls only the principal", async () => {
      const balance = () =>
        devnet.clients.publicClient.readContract({
          address: devnet.addresses.AssetToken,
          abi: DEVNET_ABIS.AssetToken,
          functionName: "balanceOf",
          args: [fresh.address],
        });
      const before = await balance();
      const { id } = await create(7n);
      expect((await lockInfo(id))[0]).toBe(1000n * E18); // 7 days: the devnet bonus is 0
      expect(before - (await balance())).toBe(1000n * E18);
      expect(await read<Address>("ownerOf", [id])).toBe(fresh.address);
    });
  });

  describe("NFT transfers: only the market, only to the Furnace", () => {
    it("approve and setApprovalForAll revert TransfersRestricted", async () => {
      const id = seed.tokenIds.alicePlain;
      expect(await revertName(devnet, alice.privateKey, ve("approve", [bob.address, id]))).toBe("TransfersRestricted");
      expect(await revertName(devnet, alice.privateKey, ve("setApprovalForAll", [bob.address, true]))).toBe(
        "TransfersRestricted",
      );
    });

    it("an owner's own transfer (to anyone, the Furnace included) reverts OnlyMineMarket", async () => {
      const id = seed.tokenIds.alicePlain;
      for (const to of [bob.address, furnace]) {
        expect(await revertName(devnet, alice.privateKey, ve("transferFrom", [alice.address, to, id]))).toBe(
          "OnlyMineMarket",
        );
        expect(await revertName(devnet, alice.privateKey, ve("safeTransferFrom", [alice.address, to, id]))).toBe(
          "OnlyMineMarket",
        );
      }
    });

    it("the market moving a lock anywhere but the Furnace reverts MarketMustTransferToFurnace", async () => {
      const id = seed.tokenIds.alicePlain;
      expect(await revertName(devnet, market.privateKey, ve("transferFrom", [alice.address, bob.address, id]))).toBe(
        "MarketMustTransferToFurnace",
      );
      // …and with a `from` that does not own the lock, NotAuthorized
      expect(await revertName(devnet, market.privateKey, ve("transferFrom", [bob.address, furnace, id]))).toBe(
        "NotAuthorized",
      );
    });

    it("listing is the market's (OnlyMineMarket otherwise) and emits only MetadataUpdate", async () => {
      const { id } = await create(30n);
      expect(await revertName(devnet, fresh.privateKey, ve("setListed", [id, true]))).toBe("OnlyMineMarket");
      const listed = await send(devnet, market.privateKey, ve("setListed", [id, true]));
      expect(eventNames(listed)).toEqual(["MetadataUpdate"]);
      expect((await lockInfo(id))[3]).toBe(true);
      const delisted = await send(devnet, market.privateKey, ve("setListed", [id, false]));
      expect(eventNames(delisted)).toEqual(["MetadataUpdate"]);
    });

    it("sell-back: the market moves the lock to the Furnace, which burns it with furnaceBurnAndWithdraw", async () => {
      const { id } = await create(30n);
      const [amount] = await lockInfo(id);
      const moved = await send(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]));
      expect(eventNames(moved)).toEqual(["Transfer"]);
      expect(await read<Address>("ownerOf", [id])).toBe(furnace);
      const settled = await send(devnet, deployer.privateKey, viaFurnace("settleSellBack", [id]));
      const logs = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, logs: settled.logs });
      expect(logs.map((l) => [l.eventName, l.args])).toEqual([
        ["Transfer", { from: furnace, to: "0x0000000000000000000000000000000000000000", tokenId: id }],
        ["LockUnlocked", { user: furnace, tokenId: id, amountReturned: amount }],
      ]);
    });

    it("a listed lock cannot move: the market's transferFrom reverts LockListedOrFrozen until it delists (as published)", async () => {
      const { id } = await create(30n);
      await send(devnet, market.privateKey, ve("setListed", [id, true]));
      expect(await revertName(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]))).toBe(
        "LockListedOrFrozen",
      );
      // The published market's sale: delist (MetadataUpdate), then the transfer to the Furnace.
      const delisted = await send(devnet, market.privateKey, ve("setListed", [id, false]));
      expect(eventNames(delisted)).toEqual(["MetadataUpdate"]);
      const moved = await send(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]));
      expect(eventNames(moved)).toEqual(["Transfer"]);
      await send(devnet, deployer.privateKey, viaFurnace("settleSellBack", [id]));
    });

    it("the Furnace holds at most 32 locks too: a 33rd sell-back reverts TooManyVeNFTs until one is burned", async () => {
      const snapshot = await devnet.clients.testClient.snapshot();
      try {
        const held = async () => read<bigint>("balanceOf", [furnace]);
        const moved: bigint[] = [];
        while ((await held()) < 32n) {
          const { id } = await create(30n);
          await send(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]));
          moved.push(id);
        }
        const { id } = await create(30n);
        expect(await revertName(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]))).toBe(
          "TooManyVeNFTs",
        );
        expect(await read<Address>("ownerOf", [id])).toBe(fresh.address);
        await send(devnet, deployer.privateKey, viaFurnace("settleSellBack", [moved[0]]));
        await send(devnet, market.privateKey, ve("transferFrom", [fresh.address, furnace, id]));
        expect(await read<Address>("ownerOf", [id])).toBe(furnace);
      } finally {
        await devnet.clients.testClient.revert({ id: snapshot });
      }
    });
  });

  describe("top-up, extend, unlock, merge reverts", () => {
    it("addToLockFor: below 1e18 (AmountTooSmall), burned or someone else's lock (NotAuthorized), expired, listed", async () => {
      const t = seed.tokenIds;
      const add = (user: Address, id: bigint, amount: bigint) => ve("addToLockFor", [user, id, amount]);
      expect(await revertNameFrom(devnet, furnace, add(alice.address, t.alicePlain, E18 - 1n))).toBe("AmountTooSmall");
      expect(await revertNameFrom(devnet, furnace, add(alice.address, t.aliceUnlocked, E18))).toBe("NotAuthorized");
      expect(await revertNameFrom(devnet, furnace, add(alice.address, t.carolFurnace, E18))).toBe("NotAuthorized");
      expect(await revertNameFrom(devnet, furnace, add(carol.address, t.carolExpired, E18))).toBe("LockExpired");
      // the same through the Furnace: the quoter names them first
      const topUp = (id: bigint) => viaFurnace("enterWithClaim", [10n * E18, id, 0n, false, 1n]);
      expect(await revertName(devnet, carol.privateKey, topUp(t.carolExpired))).toBe("LockExpired");
      expect(await revertName(devnet, alice.privateKey, topUp(t.carolFurnace))).toBe("NotAuthorized");

      const { id } = await create(30n);
      await send(devnet, market.privateKey, ve("setListed", [id, true]));
      expect(await revertNameFrom(devnet, furnace, add(fresh.address, id, E18))).toBe("LockListedOrFrozen");
      expect(await revertName(devnet, fresh.privateKey, topUp(id))).toBe("LockListedOrFrozen");
      expect(await revertName(devnet, fresh.privateKey, ve("setAutoMax", [id, true]))).toBe("LockListedOrFrozen");
      await send(devnet, market.privateKey, ve("setListed", [id, false]));
    });

    it("Furnace top-ups follow the published destination rules (FurnaceQuoter._resolveDestinationDuration)", async () => {
      const t = seed.tokenIds;
      const topUp = (id: bigint, seconds: bigint, amount = 10n * E18, createAutoMax = false) =>
        viaFurnace("enterWithClaim", [amount, id, seconds, createAutoMax, 1n]);
      const quote = (user: Address, id: bigint, seconds: bigint, createAutoMax = false) =>
        devnet.clients.publicClient.readContract({
          address: devnet.addresses.FurnaceQuoter,
          abi: DEVNET_ABIS.FurnaceQuoter,
          functionName: "quoteEnterWithClaim",
          args: [user, 10n * E18, id, seconds, createAutoMax],
        });
      // a burned (or never-minted) target: InvalidToken
      expect(await revertName(devnet, alice.privateKey, topUp(t.aliceUnlocked, 0n))).toBe("InvalidToken");
      expect(await revertName(devnet, alice.privateKey, topUp(10n ** 9n, 0n))).toBe("InvalidToken");
      // an AutoMax target needs the clamped duration to be 365 days: 0, 30 days and 364 days are refused,
      // 365 days and anything above (clamped) are accepted; veOut counts 365 days
      for (const seconds of [0n, 30n * DAY, YEAR - 1n]) {
        expect(await revertName(devnet, alice.privateKey, topUp(t.aliceAutoMax, seconds)), String(seconds)).toBe(
          "InvalidDuration",
        );
      }
      for (const seconds of [YEAR, 400n * DAY]) {
        const [principal, bonus, veOut] = await quote(alice.address, t.aliceAutoMax, seconds);
        expect(veOut).toBe(principal + bonus);
      }
      // a plain target ignores the duration (its time left counts) and createAutoMax (ignored on a top-up)
      const [p1, b1, ve1] = await quote(alice.address, t.alicePlain, 0n);
      expect(await quote(alice.address, t.alicePlain, YEAR, true)).toEqual([p1, b1, ve1, t.alicePlain]);
      // … but refuses a lock with less than 7 days left
      const { id } = await create(7n);
      await devnet.clients.testClient.increaseTime({ seconds: 2 });
      await send(devnet, fresh.privateKey, viaFurnace("enterWithClaim", [1000n * E18, 0n, 30n * DAY, false, 1n]));
      const [, end] = await lockInfo(id);
      expect(end - (await now())).toBeLessThan(7n * DAY);
      expect(await revertName(devnet, fresh.privateKey, topUp(id, 30n * DAY))).toBe("InvalidDuration");
      // below 1e18: the quoter does not check, the NFT's refusal surfaces as InvariantViolation
      const [small, smallBonus] = await devnet.clients.publicClient.readContract({
        address: devnet.addresses.FurnaceQuoter,
        abi: DEVNET_ABIS.FurnaceQuoter,
        functionName: "quoteEnterWithClaim",
        args: [alice.address, E18 / 2n, t.alicePlain, 0n, false],
      });
      expect(small + smallBonus).toBeLessThan(E18);
      expect(await revertName(devnet, alice.privateKey, topUp(t.alicePlain, 0n, E18 / 2n))).toBe("InvariantViolation");
    });

    it("extendLockToFor: newEnd must satisfy oldEnd < newEnd ≤ now + 365d (InvalidDuration)", async () => {
      const id = seed.tokenIds.alicePlain;
      const [, oldEnd] = await lockInfo(id);
      const extend = (end: bigint) => ve("extendLockToFor", [alice.address, id, end]);
      expect(await revertNameFrom(devnet, furnace, extend(oldEnd))).toBe("InvalidDuration");
      expect(await revertNameFrom(devnet, furnace, extend((await now()) + YEAR + 2n))).toBe("InvalidDuration");
      expect(await revertName(devnet, alice.privateKey, viaFurnace("extendLock", [id, oldEnd]))).toBe(
        "InvalidDuration",
      );
    });

    it("unlock: not expired or AutoMax (InvalidDuration), not the owner (NotAuthorized)", async () => {
      const t = seed.tokenIds;
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.alicePlain]))).toBe("InvalidDuration");
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.aliceAutoMax]))).toBe("InvalidDuration");
      expect(await revertName(devnet, alice.privateKey, ve("unlock", [t.carolExpired]))).toBe("NotAuthorized");
    });

    it("setAutoMax on someone else's lock, and a delegated unlock without a session, revert NotAuthorized", async () => {
      const t = seed.tokenIds;
      expect(await revertName(devnet, bob.privateKey, ve("setAutoMax", [t.alicePlain, true]))).toBe("NotAuthorized");
      expect(
        await revertName(devnet, bob.privateKey, ve("unlockExpiredForUser", [carol.address, t.carolExpired])),
      ).toBe("NotAuthorized");
    });
  });

  describe("state rules", () => {
    it("getLockInfo of an AutoMax lock ends 365 days after the block read, whatever the stored end", async () => {
      const id = seed.tokenIds.aliceAutoMax;
      const stored = await read<bigint>("storedLockEnd", [id]);
      const first = await devnet.clients.publicClient.getBlock();
      await devnet.clients.testClient.increaseTime({ seconds: 5 * 86_400 });
      await devnet.clients.testClient.mine({ blocks: 1 });
      const second = await devnet.clients.publicClient.getBlock();
      expect((await lockInfo(id, first.number))[1]).toBe(first.timestamp + YEAR);
      expect((await lockInfo(id, second.number))[1]).toBe(second.timestamp + YEAR);
      expect(await read<bigint>("storedLockEnd", [id], second.number)).toBe(stored);
      expect(stored).toBeLessThan(second.timestamp + YEAR); // the stored end falls behind; the view does not
    });

    it("a top-up on an AutoMax lock silently moves the stored end to now + 365d", async () => {
      const id = seed.tokenIds.aliceAutoMax;
      await devnet.clients.testClient.increaseTime({ seconds: 3600 });
      // (an AutoMax target needs durationSeconds 365 days, as on Base)
      const receipt = await send(
        devnet,
        alice.privateKey,
        viaFurnace("enterWithClaim", [2n * E18, id, YEAR, false, 1n]),
      );
      expect(eventNames(receipt)).toEqual(["LockAmountIncreased"]);
      expect(await read<bigint>("storedLockEnd", [id])).toBe((await blockTime(receipt)) + YEAR);
    });

    it("merge: amounts add, autoMax is OR, lockEnd = autoMax ? now + 365d : max(ends); totalLockedClaim unchanged", async () => {
      const total = () => read<bigint>("totalLockedClaim");
      const totalBefore = await total();
      const short = await create(10n);
      const long = await create(100n, false, 1500n * E18);
      const [shortAmount] = await lockInfo(short.id);
      const [longAmount, longEnd] = await lockInfo(long.id);
      await send(devnet, fresh.privateKey, viaFurnace("mergeLocks", [long.id, short.id]));
      expect(await lockInfo(short.id)).toEqual([shortAmount + longAmount, longEnd, false, false]);
      expect(await lockInfo(long.id)).toEqual([0n, 0n, false, false]);

      const auto = await create(365n, true);
      const [autoAmount] = await lockInfo(auto.id);
      const receipt = await send(devnet, fresh.privateKey, viaFurnace("mergeLocks", [short.id, auto.id]));
      expect(eventNames(receipt)).toEqual(["Transfer", "LockMerged"]);
      const merged = shortAmount + longAmount + autoAmount;
      expect(await lockInfo(auto.id, receipt.blockNumber)).toEqual([
        merged,
        (await blockTime(receipt)) + YEAR,
        true,
        false,
      ]);
      expect((await total()) - totalBefore).toBe(merged); // only the three creates added tokens
    });

    it("setAutoMax: false on a plain lock is a silent no-op; true on AutoMax refreshes; a switch adds MetadataUpdate", async () => {
      const plain = await create(30n);
      const before = await lockInfo(plain.id);
      await devnet.clients.testClient.increaseTime({ seconds: 3600 });
      const noop = await send(devnet, fresh.privateKey, ve("setAutoMax", [plain.id, false]));
      expect(noop.logs).toEqual([]);
      expect(await lockInfo(plain.id)).toEqual(before);

      const auto = await create(365n, true);
      await devnet.clients.testClient.increaseTime({ seconds: 7200 });
      const refresh = await send(devnet, fresh.privateKey, ve("setAutoMax", [auto.id, true]));
      expect(eventNames(refresh)).toEqual(["AutoMaxSet"]);
      expect(await read<bigint>("storedLockEnd", [auto.id])).toBe((await blockTime(refresh)) + YEAR);

      const off = await send(devnet, fresh.privateKey, ve("setAutoMax", [auto.id, false]));
      expect(eventNames(off)).toEqual(["AutoMaxSet", "MetadataUpdate"]);
      const [amount] = await lockInfo(auto.id);
      expect(await lockInfo(auto.id)).toEqual([amount, (await blockTime(off)) + YEAR, false, false]);
      const on = await send(devnet, fresh.privateKey, ve("setAutoMax", [auto.id, true]));
      expect(eventNames(on)).toEqual(["AutoMaxSet", "MetadataUpdate"]);
    });

    it("token ids are never reused: the next lock gets nextTokenId, above every burned id", async () => {
      const next = await read<bigint>("nextTokenId");
      const { id } = await create(7n);
      expect(id).toBe(next);
      for (const burned of seed.burnedTokenIds) expect(id).toBeGreaterThan(burned);
    });

    it("a delegate with a session unlocks an expired lock for the user; the tokens go to the user", async () => {
      const id = seed.tokenIds.carolExpired;
      const balance = () =>
        devnet.clients.publicClient.readContract({
          address: devnet.addresses.AssetToken,
          abi: DEVNET_ABIS.AssetToken,
          functionName: "balanceOf",
          args: [carol.address],
        });
      const [amount] = await lockInfo(id);
      const before = await balance();
      await send(devnet, carol.privateKey, ve("openDelegationSession", [bob.address, (await now()) + DAY]));
      const receipt = await send(devnet, bob.privateKey, ve("unlockExpiredForUser", [carol.address, id]));
      expect(eventNames(receipt)).toEqual(["Transfer", "LockUnlocked", "DelegationSessionUsed"]);
      const [unlocked] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockUnlocked", logs: receipt.logs });
      expect(unlocked?.args).toEqual({ user: carol.address, tokenId: id, amountReturned: amount });
      expect((await balance()) - before).toBe(amount);
      expect(await lockInfo(id)).toEqual([0n, 0n, false, false]);
    });

    it("an expired plain lock can be unlocked by its owner, returning the tokens", async () => {
      const { id } = await create(7n);
      await devnet.clients.testClient.increaseTime({ seconds: 8 * 86_400 });
      await devnet.clients.testClient.mine({ blocks: 1 });
      const receipt = await send(devnet, fresh.privateKey, ve("unlock", [id]));
      expect(eventNames(receipt)).toEqual(["Transfer", "LockUnlocked"]);
      expect(await lockInfo(id)).toEqual([0n, 0n, false, false]);
    });
  });
});
