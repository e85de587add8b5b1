import { type Address, decodeEventLog, type Hash, type Log, parseEventLogs, toEventSelector, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi } from "../../abis";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type SeedAction, type SeedResult } from "../../devnet/seed";
import { BOARDS, chainEntries, rank } from "../support/boardTruth";
import { startDevnet, type TestDevnet } from "../support/devnet";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const YEAR = 365n * DAY;
// topic0 literals from protocol.md §2
const TOPIC = {
  Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  LockCreated: "0xf2e434b25dc0642557c78f33e890ff32142d8b2266063fa31604f80607fc3629",
  LockAmountIncreased: "0xce4b949c4a850bbc2397d4e496669b3970be305a53d62ef5cd4e7b43ce4b0c5b",
  LockExtended: "0x2880f4fc08dec6bc3c61687b882e88598cb950c1dbff72d4a2d20223174215b4",
  LockMerged: "0xeda5347add04fd32e9c77f9b1d459a737490432c6721b1a98270c826d0ac0034",
  LockUnlocked: "0xb8467a67892a3eb9ca0a54a00960a7bb14970dc16c3b3da0803ca776c1e47a43",
  AutoMaxSet: "0x3c127c07e0311e24c89bf90ee72e70c354a009a75a989c7b1daf61d375902468",
  // ERC-4906 (the indexer reads listed at its block) and the delegation session's (ignored), protocol.md §8.
  MetadataUpdate: "0xf8e1a15aba9398e019f0b49df1a4fde98ee17ae345cb5f6b5e2c27f5033e8ce7",
  // Published src/lib/Events.sol: DelegationSessionUsed(address indexed user, address indexed delegate,
  // uint8 indexed actionType, uint256 permsUsed, uint256 refId, uint256 timestamp).
  DelegationSessionUsed: "0x83ceff143ad4e2ae1ae6bf3b78fe2ce43d6807db4596779f3834741c795375af",
} as const;
const { alice, bob, carol, dave, deployer } = DEVNET_ACCOUNTS;

interface Emitted {
  name: string;
  args: Record<string, unknown>;
  topics: number;
}

describe("VeLockNFT events of each lifecycle action, in protocol.md §2 order", () => {
  let devnet: TestDevnet & { seed: SeedResult };
  let seed: SeedResult;

  /** The VeLockNFT logs of a seed action's receipt, decoded, in log order; also the block timestamp. */
  async function emitted(action: SeedAction): Promise<{ events: Emitted[]; timestamp: bigint }> {
    const { publicClient } = devnet.clients;
    const receipt = await publicClient.getTransactionReceipt({ hash: seed.txs[action] as Hash });
    const block = await publicClient.getBlock({ blockNumber: receipt.blockNumber });
    const logs = receipt.logs.filter((l) => l.address.toLowerCase() === devnet.addresses.VeLockNFT.toLowerCase());
    const indexes = logs.map((l) => l.logIndex);
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    return {
      timestamp: block.timestamp,
      events: logs.map((log: Log) => {
        const topic0 = log.topics[0];
        expect(Object.values(TOPIC)).toContain(topic0);
        const decoded = decodeEventLog({ abi: DEVNET_ABIS.VeLockNFT, data: log.data, topics: log.topics });
        return { name: decoded.eventName, args: decoded.args as Record<string, unknown>, topics: log.topics.length };
      }),
    };
  }

  beforeAll(async () => {
    devnet = await startDevnet({ seed: true });
    seed = devnet.seed;
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  it("create: Transfer(0 → user, id) (4 topics) then LockCreated with lockEnd = block time + duration", async () => {
    const id = seed.tokenIds.alicePlain;
    const { events, timestamp } = await emitted("createPlain");
    expect(events).toEqual([
      { name: "Transfer", args: { from: zeroAddress, to: alice.address, tokenId: id }, topics: 4 },
      {
        name: "LockCreated",
        args: {
          user: alice.address,
          tokenId: id,
          amount: 5_020n * E18, // through the Furnace: 30 days → 500 bps → bonus 5000 × 400 / 100000
          lockEnd: timestamp + 30n * DAY,
          autoMax: false,
        },
        topics: 3,
      },
    ]);
    const auto = await emitted("createAutoMax");
    expect(auto.events.map((e) => e.name)).toEqual(["Transfer", "LockCreated"]);
    expect(auto.events[1]?.args).toMatchObject({ lockEnd: auto.timestamp + YEAR, autoMax: true });
  });

  it("top-up: LockAmountIncreased only (plain and AutoMax), principal + bonus", async () => {
    const plain = (await emitted("topUpPlain")).events;
    expect(plain).toEqual([
      {
        name: "LockAmountIncreased",
        args: { user: alice.address, tokenId: seed.tokenIds.alicePlain, amountAdded: expect.any(BigInt) },
        topics: 3,
      },
    ]);
    // ≤ 30 days left: at most 500 bps, a bonus of at most 2 (exactly 2 when mined in the second of the create)
    const added = plain[0]?.args.amountAdded as bigint;
    expect(added >= 501n * E18 && added <= 502n * E18).toBe(true);
    expect((await emitted("topUpAutoMax")).events).toEqual([
      {
        name: "LockAmountIncreased",
        args: { user: alice.address, tokenId: seed.tokenIds.aliceAutoMax, amountAdded: 1_099n * E18 },
        topics: 3,
      },
    ]);
  });

  it("extend: LockExtended(oldEnd, newEnd); on AutoMax newEnd is the end actually set (now + 365d)", async () => {
    const plain = await emitted("extendPlain");
    expect(plain.events).toHaveLength(1);
    expect(plain.events[0]?.name).toBe("LockExtended");
    const { oldEnd, newEnd } = plain.events[0]!.args as { oldEnd: bigint; newEnd: bigint };
    expect(newEnd).toBeGreaterThan(oldEnd);
    const auto = await emitted("extendAutoMax");
    expect(auto.events).toEqual([
      {
        name: "LockExtended",
        args: {
          user: alice.address,
          tokenId: seed.tokenIds.aliceAutoMax,
          oldEnd: expect.any(BigInt),
          newEnd: auto.timestamp + YEAR,
        },
        topics: 3,
      },
    ]);
  });

  it("merge: Transfer(user → 0, from) then LockMerged(user, from, into, amountMoved)", async () => {
    const { bobMergedFrom: from, bobMergedInto: into } = seed.tokenIds;
    expect((await emitted("merge")).events).toEqual([
      { name: "Transfer", args: { from: bob.address, to: zeroAddress, tokenId: from }, topics: 4 },
      {
        name: "LockMerged",
        // 60 days → 1000 bps → bonus 3000 × 900 / 100000 = 27
        args: { user: bob.address, fromTokenId: from, intoTokenId: into, amountMoved: 3_027n * E18 },
        topics: 4,
      },
    ]);
  });

  it("unlock: Transfer(owner → 0, id) then LockUnlocked(owner, id, amountReturned)", async () => {
    const id = seed.tokenIds.aliceUnlocked;
    expect((await emitted("unlock")).events).toEqual([
      { name: "Transfer", args: { from: alice.address, to: zeroAddress, tokenId: id }, topics: 4 },
      { name: "LockUnlocked", args: { user: alice.address, tokenId: id, amountReturned: 2_000n * E18 }, topics: 3 },
    ]);
  });

  it("sell-back: listed (MetadataUpdate), delisted (MetadataUpdate) then Transfer(user → Furnace) by the market; later Transfer(Furnace → 0) then LockUnlocked(Furnace, id, amount)", async () => {
    const id = seed.tokenIds.bobSoldBack;
    const furnace: Address = devnet.addresses.Furnace;
    expect((await emitted("listed")).events).toEqual([{ name: "MetadataUpdate", args: { _tokenId: id }, topics: 1 }]);
    // As the published market sells: the listing is cleared (setListed false) before the transfer.
    expect((await emitted("sellBackUnlist")).events).toEqual([
      { name: "MetadataUpdate", args: { _tokenId: id }, topics: 1 },
    ]);
    const sold = await emitted("sellBackTransfer");
    const burned = await emitted("sellBackBurn");
    expect(sold.events).toEqual([
      { name: "Transfer", args: { from: bob.address, to: furnace, tokenId: id }, topics: 4 },
    ]);
    expect(burned.events).toEqual([
      { name: "Transfer", args: { from: furnace, to: zeroAddress, tokenId: id }, topics: 4 },
      // 14 days → 175 bps → bonus 1500 × 75 / 100000 = 1.125
      {
        name: "LockUnlocked",
        args: { user: furnace, tokenId: id, amountReturned: 1_501_125n * 10n ** 15n },
        topics: 3,
      },
    ]);
    expect(burned.timestamp).toBeGreaterThan(sold.timestamp);
  });

  it("setAutoMax: a switch is AutoMaxSet then MetadataUpdate; a refresh only AutoMaxSet; false on a plain lock nothing", async () => {
    const id = seed.tokenIds.bobMergedInto;
    expect((await emitted("autoMaxOn")).events).toEqual([
      { name: "AutoMaxSet", args: { user: bob.address, tokenId: id, autoMax: true }, topics: 3 },
      { name: "MetadataUpdate", args: { _tokenId: id }, topics: 1 },
    ]);
    expect((await emitted("autoMaxOff")).events).toEqual([
      { name: "AutoMaxSet", args: { user: bob.address, tokenId: id, autoMax: false }, topics: 3 },
      { name: "MetadataUpdate", args: { _tokenId: id }, topics: 1 },
    ]);
    expect((await emitted("autoMaxRefresh")).events).toEqual([
      {
        name: "AutoMaxSet",
        args: { user: alice.address, tokenId: seed.tokenIds.aliceAutoMax, autoMax: true },
        topics: 3,
      },
    ]);
    expect((await emitted("autoMaxNoop")).events).toEqual([]);
  });

  it("delegated unlock: Transfer(user → 0), LockUnlocked(user, …), DelegationSessionUsed as published", async () => {
    const id = seed.tokenIds.daveDelegatedUnlock;
    const { events, timestamp } = await emitted("delegatedUnlock");
    expect(events).toEqual([
      { name: "Transfer", args: { from: dave.address, to: zeroAddress, tokenId: id }, topics: 4 },
      { name: "LockUnlocked", args: { user: dave.address, tokenId: id, amountReturned: 1_200n * E18 }, topics: 3 },
      {
        name: "DelegationSessionUsed",
        // VE_UNLOCK_EXPIRED_FOR = 32, P_VE_UNLOCK_EXPIRED_FOR = 1 << 14 (DelegationActionTypes / DelegationPermissions)
        args: {
          user: dave.address,
          delegate: deployer.address,
          actionType: 32,
          permsUsed: 1n << 14n,
          refId: id,
          timestamp,
        },
        topics: 4,
      },
    ]);
  });

  it("the market delisting a lock emits only MetadataUpdate", async () => {
    expect((await emitted("delisted")).events).toEqual([
      { name: "MetadataUpdate", args: { _tokenId: seed.tokenIds.carolFurnace }, topics: 1 },
    ]);
  });

  it("Furnace entries: a new lock is Transfer then LockCreated for the user (principal + bonus); a top-up is LockAmountIncreased", async () => {
    const id = seed.tokenIds.carolFurnace;
    const created = await emitted("furnaceNew");
    expect(created.events.map((e) => [e.name, e.args.tokenId])).toEqual([
      ["Transfer", id],
      ["LockCreated", id],
    ]);
    expect(created.events[0]?.args).toMatchObject({ from: zeroAddress, to: carol.address });
    // 180 days: weight 4000 bps → bonus = 2000 × (4000 − 100) / 100000 = 78
    expect(created.events[1]?.args).toMatchObject({
      user: carol.address,
      amount: 2_078n * E18,
      lockEnd: created.timestamp + 180n * DAY,
      autoMax: false,
    });
    const topUp = await emitted("furnaceTopUp");
    expect(topUp.events.map((e) => [e.name, e.args.user, e.args.tokenId])).toEqual([
      ["LockAmountIncreased", carol.address, id],
    ]);
  });

  it("royalties mode 1 and the vault compound lock through the Furnace with the same events", async () => {
    const mode1 = await emitted("royaltiesMode1");
    expect(mode1.events.map((e) => [e.name, e.args.user, e.args.tokenId])).toEqual([
      ["LockAmountIncreased", bob.address, seed.tokenIds.bobMergedInto],
    ]);
    const compound = await emitted("compound");
    expect(compound.events.map((e) => e.name)).toEqual(["Transfer", "LockCreated"]);
    expect(compound.events[1]?.args).toMatchObject({
      user: dave.address,
      tokenId: seed.tokenIds.daveCompound,
      amount: 1_099n * E18,
      lockEnd: compound.timestamp + YEAR,
      autoMax: true,
    });
  });

  it("actions that do not touch locks emit no VeLockNFT event", async () => {
    for (const action of ["stake", "beginUnbond", "withdrawMatured", "royaltiesMode0", "claimAllMode0"] as const) {
      expect((await emitted(action)).events, action).toEqual([]);
    }
  });

  // --- the official leaderboards' inputs (protocol.md §9): the published topics, the seed's four windows.
  const BOARD_TOPIC = {
    Takeover: "0x9e8ea9ebe1eff3171e76905f1ded95f86073dde0bf181d85612dead42f2e430c",
    ReignFinalized: "0xea7e05e0c6823091a35698259c587e00a391487084bdb9f1c9028c1272f70ef6",
    FurnaceEnter: "0x7f7f0de17f3500a1420b9cdc65ea622e20871e0abe71d5192560052b4999961f",
    ShareholderClaim: "0x974ae5737335021d786c060217f1afc742be2cde3661beebbc87875bc8a75ecd",
  } as const;

  it("MineCore, Furnace and ShareholderRoyalties emit only the published board events (topic0 literals), decoded by abis/", async () => {
    const { publicClient } = devnet.clients;
    const at = devnet.addresses;
    const logs = await publicClient.getLogs({
      address: [at.MineCore, at.Furnace, at.ShareholderRoyalties],
      fromBlock: 0n,
    });
    const seen = new Set(logs.map((l) => l.topics[0]));
    // Besides the four, only the devnet's own bookkeeping (accruals, sell-back settlement) — never a board's input.
    const devnetOnly = [
      toEventSelector("RoyaltiesAccrued(address,uint256)"),
      toEventSelector("SellBackSettled(uint256,uint256)"),
    ];
    for (const topic of seen) expect([...Object.values(BOARD_TOPIC), ...devnetOnly]).toContain(topic);
    for (const topic of Object.values(BOARD_TOPIC)) expect(seen).toContain(topic);
    const decoded = parseEventLogs({
      abi: [...MineCoreAbi, ...FurnaceAbi, ...ShareholderRoyaltiesAbi],
      logs,
      strict: true,
    });
    expect(decoded.length).toBe(logs.filter((l) => Object.values(BOARD_TOPIC).includes(l.topics[0] as never)).length);
  });

  it("every board has events inside 24 h, inside 7 d, inside 30 d and older, from several accounts: every window differs", async () => {
    const { publicClient } = devnet.clients;
    const head = await publicClient.getBlock({ blockTag: "latest" });
    const entries = await chainEntries(publicClient as never, devnet.addresses, head.number);
    for (const board of BOARDS) {
      const ages = entries.filter((e) => e.board === board).map((e) => head.timestamp - e.time);
      expect(
        ages.some((a) => a < DAY),
        `${board} 24h`,
      ).toBe(true);
      expect(
        ages.some((a) => a > DAY && a < 7n * DAY),
        `${board} 7d`,
      ).toBe(true);
      expect(
        ages.some((a) => a > 7n * DAY && a < 30n * DAY),
        `${board} 30d`,
      ).toBe(true);
      expect(
        ages.some((a) => a > 30n * DAY),
        `${board} older`,
      ).toBe(true);
      expect(new Set(entries.filter((e) => e.board === board).map((e) => e.account)).size).toBeGreaterThanOrEqual(3);
      const shown = (["24h", "7d", "30d", "lifetime"] as const).map((w) =>
        JSON.stringify(rank(entries, board, w, head.timestamp)),
      );
      expect(new Set(shown).size, board).toBe(4);
    }
  });

  it("a takeover: pricePaid is the price (the excess sent is refunded), the dethroned king's reign is finalized first", async () => {
    const { publicClient } = devnet.clients;
    const logs = parseEventLogs({
      abi: MineCoreAbi,
      logs: await publicClient.getLogs({ address: devnet.addresses.MineCore, fromBlock: 0n }),
    });
    const takeovers = logs.filter((l) => l.eventName === "Takeover");
    const finals = logs.filter((l) => l.eventName === "ReignFinalized");
    expect(takeovers.length).toBe(8);
    expect(finals.length).toBe(7); // the current king's reign is not finalized
    expect(takeovers[0]?.args.previousKing).toBe(zeroAddress);
    for (const [i, t] of takeovers.entries()) {
      const tx = await publicClient.getTransaction({ hash: t.transactionHash });
      expect(tx.value).toBeGreaterThan(t.args.pricePaid);
      expect(t.args.reignId).toBe(BigInt(i + 1));
      if (i === 0) continue;
      const f = finals[i - 1];
      expect(f?.transactionHash).toBe(t.transactionHash);
      expect(f?.logIndex).toBeLessThan(t.logIndex);
      expect(f?.args.king).toBe(t.args.previousKing);
      expect(f?.args.startTime).toBe(takeovers[i - 1]?.args.timestamp);
      expect(f?.args.endTime).toBe(t.args.timestamp);
    }
  });
});
