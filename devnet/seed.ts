import {
  type Address,
  getAddress,
  type Hash,
  type Hex,
  parseEther,
  parseEventLogs,
  type TransactionReceipt,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Manifest } from "../api/manifest";
import { applyMinVeOutClamp } from "../api/math/minVeOut";
import { DEPLOYER_PRIVATE_KEY, DEVNET_ABIS, devnetClients, MARKET_PRIVATE_KEY, sendTx } from "./deploy";

const DAY = 86_400;
const E18 = 10n ** 18n;

function devAccount(privateKey: Hex) {
  return { address: privateKeyToAccount(privateKey).address, privateKey } as const;
}

/**
 * The seeded roles: anvil's standard dev accounts (mnemonic "test … junk"), fixed so tests can import them
 * without seeding. Account #9 is left untouched. Every lock is made, topped up, extended and merged through the
 * Furnace, as on Base, where VeLockNFT's *For functions accept no other caller.
 */
export const DEVNET_ACCOUNTS = {
  /** #0 deploys and owns every contract; accrues royalties and rewards; settles sell-backs; delegate of dave. */
  deployer: devAccount(DEPLOYER_PRIVATE_KEY),
  /** #1 plain + AutoMax locks, top-ups, extensions, one unlock, AutoMax refresh and a no-op off, royalties mode 0. */
  alice: devAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"),
  /** #2 merge, a lock sold back through the market, setAutoMax both ways, royalties mode 1 into an existing lock. */
  bob: devAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"),
  /** #3 Furnace entries (new lock + top-up), an expired-but-not-unlocked lock, LP staker, claimAll mode 0. */
  carol: devAccount("0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6"),
  /** #4 LP staker: unbond withdrawn after 7 days, one open, rewards compounded into an AutoMax lock; a short lock
   * unlocked by a delegate (unlockExpiredForUser). */
  dave: devAccount("0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a"),
  /** #5 exactly 32 live locks: the next lock reverts TooManyVeNFTs. */
  capped: devAccount("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"),
  /** #6 funded with anvil's ETH only; never sends or receives anything. */
  idle: devAccount("0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e"),
  /** #7 holds spare AssetToken and LP but has no locks, no stake and no approvals: a clean user for tests. */
  fresh: devAccount("0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356"),
  /** #8 the market role (the published MineMarket): lists/delists locks, moves a sold lock to the Furnace. */
  market: devAccount(MARKET_PRIVATE_KEY),
} as const;
export type DevnetRole = keyof typeof DEVNET_ACCOUNTS;

/**
 * Three more players for the official leaderboards (not anvil's accounts: the deployer funds them with ETH). They
 * take the throne, enter the Furnace and claim royalties in every window of the boards (see seedBoards below), so
 * the roles above keep exactly the history their tests expect.
 */
export const BOARD_PLAYERS = {
  erin: devAccount("0x00000000000000000000000000000000000000000000000000000000000e0001"),
  frank: devAccount("0x00000000000000000000000000000000000000000000000000000000000e0002"),
  grace: devAccount("0x00000000000000000000000000000000000000000000000000000000000e0003"),
} as const;

/**
 * Chain time of the board phases, counted back from the seed's last block: the "old" phase lies beyond 30 days,
 * "month" between 7 and 30 days, "week" between 1 and 7 days, "day" inside the last 24 hours.
 */
export const SEED_BOARD_PHASES = ["old", "month", "week", "day"] as const;
export type SeedBoardPhase = (typeof SEED_BOARD_PHASES)[number];
/** Time moved forward after the old phase and after the month phase (before the lock history starts). */
export const SEED_OLD_TO_MONTH_SECONDS = 20 * DAY;
export const SEED_MONTH_TO_LOCKS_SECONDS = 5 * DAY;
/** The 8-day time travel is split here: the week phase happens after its first 6 days. */
export const SEED_WEEK_PHASE_AFTER_SECONDS = 6 * DAY;
export type DevnetAccount = (typeof DEVNET_ACCOUNTS)[DevnetRole];

/** Spare balances every active user (and `fresh`) keeps after seeding, at least. */
export const SEED_SPARE_TOKEN = 50_000n * E18;
export const SEED_SPARE_LP = 500n * E18;
/** Chain time is moved forward by this much in the middle of the seed (unlocks, matured unbond). */
export const SEED_TIME_TRAVEL_SECONDS = 8 * DAY;
/** Chain time between two takeovers, at least: a reign lasts a few minutes (two blocks can share a second on anvil). */
const SEED_REIGN_SECONDS = 300;
const SEED_TAKEOVERS = 8;
/**
 * How far the whole seed moves chain time ahead of the wall clock (its `advancedSeconds`). `npm start` starts anvil
 * this far in the past, so after seeding the chain's clock is the wall clock again, as on Base, and an index answer's
 * `indexLagSeconds` / `stale` mean what they say (ahead of the wall clock they read 0 however far the index lags).
 */
export const SEED_CHAIN_ADVANCE_SECONDS =
  DAY +
  SEED_OLD_TO_MONTH_SECONDS +
  SEED_MONTH_TO_LOCKS_SECONDS +
  SEED_TIME_TRAVEL_SECONDS +
  SEED_TAKEOVERS * SEED_REIGN_SECONDS;

export type SeedAction =
  | "createPlain"
  | "createAutoMax"
  | "topUpPlain"
  | "topUpAutoMax"
  | "extendPlain"
  | "extendAutoMax"
  | "merge"
  | "listed"
  | "delisted"
  | "sellBackUnlist"
  | "sellBackTransfer"
  | "sellBackBurn"
  | "autoMaxOn"
  | "autoMaxOff"
  | "autoMaxRefresh"
  | "autoMaxNoop"
  | "delegatedUnlock"
  | "furnaceNew"
  | "furnaceTopUp"
  | "unlock"
  | "stake"
  | "beginUnbond"
  | "withdrawMatured"
  | "royaltiesMode0"
  | "royaltiesMode1"
  | "claimAllMode0"
  | "compound";

export interface SeedResult {
  accounts: typeof DEVNET_ACCOUNTS;
  /** How far the seed moved chain time ahead (time travel): SEED_CHAIN_ADVANCE_SECONDS. */
  advancedSeconds: number;
  tokenIds: {
    alicePlain: bigint;
    aliceAutoMax: bigint;
    /** Unlocked after the time travel (burned). */
    aliceUnlocked: bigint;
    /** Merged into bobMergedInto (burned). */
    bobMergedFrom: bigint;
    /** Plain again after autoMax on → off; topped up by royalties mode 1. */
    bobMergedInto: bigint;
    /** Listed and sold through the market to the Furnace, then burned by it (furnaceBurnAndWithdraw). */
    bobSoldBack: bigint;
    carolFurnace: bigint;
    /** 7-day lock left expired but not unlocked: live, ve 0. */
    carolExpired: bigint;
    /** AutoMax lock created by the vault's claimRewardsAndLock. */
    daveCompound: bigint;
    /** 7-day lock unlocked after the time travel by the deployer, dave's delegate (unlockExpiredForUser). */
    daveDelegatedUnlock: bigint;
    /** The 32 live locks of `capped`, in creation order (the first is AutoMax). */
    capped: bigint[];
  };
  liveTokenIds: bigint[];
  burnedTokenIds: bigint[];
  /** The transaction of each lifecycle action, for tests that check receipts. */
  txs: Record<SeedAction, Hash>;
  /** The block range of each board phase (first and last block holding its transactions). */
  boardPhases: Record<SeedBoardPhase, { fromBlock: bigint; toBlock: bigint }>;
  /** Every transaction the seed sent, in order. */
  txCount: number;
  lastBlock: bigint;
}

/**
 * Creates realistic history from several dev accounts on a freshly deployed devnet (see DEVNET_ACCOUNTS for
 * who does what). Moves chain time forward by SEED_TIME_TRAVEL_SECONDS. Run it once per deployment.
 */
export async function seedDevnet(opts: { rpcUrl: string; manifest: Manifest }): Promise<SeedResult> {
  const { manifest } = opts;
  const clients = devnetClients(opts.rpcUrl, manifest.chainId);
  const need = (entry: { address: string } | undefined, name: string): Address => {
    if (!entry) throw new Error(`manifest lacks ${name}`);
    return getAddress(entry.address);
  };
  const c = {
    token: need(manifest.contracts.AssetToken, "AssetToken"),
    lp: need(manifest.lpToken, "lpToken"),
    ve: need(manifest.contracts.VeLockNFT, "VeLockNFT"),
    furnace: need(manifest.contracts.Furnace, "Furnace"),
    quoter: need(manifest.contracts.FurnaceQuoter, "FurnaceQuoter"),
    royalties: need(manifest.contracts.ShareholderRoyalties, "ShareholderRoyalties"),
    vault: need(manifest.contracts.LpStakingVault7D, "LpStakingVault7D"),
    helper: need(manifest.contracts.ClaimAllHelper, "ClaimAllHelper"),
    mineCore: need(manifest.contracts.MineCore, "MineCore"),
  };
  const { deployer, alice, bob, carol, dave, capped, fresh, market } = DEVNET_ACCOUNTS;
  let txCount = 0;
  const send = (who: DevnetAccount, call: Parameters<typeof sendTx>[2]) => {
    txCount++;
    return sendTx(clients, who.privateKey, call);
  };
  const ve = (who: DevnetAccount, functionName: string, args: readonly unknown[]) =>
    send(who, { address: c.ve, abi: DEVNET_ABIS.VeLockNFT, functionName, args });
  const createdId = (receipt: TransactionReceipt): bigint => {
    const [created] = parseEventLogs({ abi: DEVNET_ABIS.VeLockNFT, eventName: "LockCreated", logs: receipt.logs });
    if (!created) throw new Error(`no LockCreated in ${receipt.transactionHash}`);
    return created.args.tokenId;
  };
  const now = async () => (await clients.publicClient.getBlock({ blockTag: "latest" })).timestamp;
  const quoteMinVeOut = async (user: Address, claimIn: bigint, target: bigint, days: number, autoMax: boolean) => {
    const [, , veOut] = await clients.publicClient.readContract({
      address: c.quoter,
      abi: DEVNET_ABIS.FurnaceQuoter,
      functionName: "quoteEnterWithClaim",
      args: [user, claimIn, target, BigInt(days * DAY), autoMax],
    });
    // minVeOut exactly as the API derives it (protocol.md §3).
    return applyMinVeOutClamp(veOut);
  };
  const furnace = (who: DevnetAccount, functionName: string, args: readonly unknown[]) =>
    send(who, { address: c.furnace, abi: DEVNET_ABIS.Furnace, functionName, args });
  /** A new lock through Furnace.enterWithClaim (the lock holds principal + the devnet bonus). */
  const createLock = async (who: DevnetAccount, amount: bigint, days: number, autoMax = false) => {
    const minVeOut = await quoteMinVeOut(who.address, amount, 0n, days, autoMax);
    const receipt = await furnace(who, "enterWithClaim", [amount, 0n, BigInt(days * DAY), autoMax, minVeOut]);
    return { id: createdId(receipt), receipt };
  };
  /**
   * A Furnace top-up. As on Base, durationSeconds is clamped to [7d, 365d] and an AutoMax target requires the
   * clamped value to be 365 days (InvalidDuration otherwise); a plain target ignores it (its time left counts).
   */
  const topUp = async (who: DevnetAccount, tokenId: bigint, amount: bigint, autoMaxTarget = false) => {
    const days = autoMaxTarget ? 365 : 0;
    return furnace(who, "enterWithClaim", [
      amount,
      tokenId,
      BigInt(days * DAY),
      false,
      await quoteMinVeOut(who.address, amount, tokenId, days, false),
    ]);
  };
  const max = 2n ** 256n - 1n;
  const txs = {} as Record<SeedAction, Hash>;
  const record = (action: SeedAction, receipt: TransactionReceipt) => {
    txs[action] = receipt.transactionHash;
    return receipt;
  };

  // --- the official boards, part 1: takeovers, Furnace entries and royalty claims beyond 30 days and within 30
  // days, by the board players, before any lock of the roles exists (so the roles' token ids stay as they were).
  const { erin, frank, grace } = BOARD_PLAYERS;
  const mine = clients.publicClient;
  const boardPhases = {} as SeedResult["boardPhases"];
  const phase = async (name: SeedBoardPhase, run: () => Promise<unknown>) => {
    const fromBlock = (await mine.getBlockNumber({ cacheTime: 0 })) + 1n;
    await run();
    boardPhases[name] = { fromBlock, toBlock: await mine.getBlockNumber({ cacheTime: 0 }) };
  };
  let advancedSeconds = 0;
  const advance = async (seconds: number) => {
    await clients.testClient.increaseTime({ seconds });
    advancedSeconds += seconds;
  };
  const warp = async (seconds: number) => {
    await advance(seconds);
    await clients.testClient.mine({ blocks: 1 });
  };
  const takeover = async (who: DevnetAccount) => {
    await advance(SEED_REIGN_SECONDS);
    const price = await mine.readContract({ address: c.mineCore, abi: DEVNET_ABIS.MineCore, functionName: "price" });
    // Sends more than the price: the excess is refunded, and pricePaid (the board's figure) is the price alone.
    return send(who, {
      address: c.mineCore,
      abi: DEVNET_ABIS.MineCore,
      functionName: "takeover",
      args: [price],
      value: price + parseEther("0.003"),
    });
  };
  /** `days` is the new lock's duration, or for a top-up 365 on an AutoMax lock (0 on a plain one: ignored). */
  const enterWithEth = async (who: DevnetAccount, eth: string, target: bigint, days: number, autoMax: boolean) => {
    const value = parseEther(eth);
    const tokens = value * 10_000n; // Furnace.TOKENS_PER_ETH
    const minVeOut = await quoteMinVeOut(who.address, tokens, target, days, autoMax);
    return send(who, {
      address: c.furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithEth",
      args: [target, BigInt(days * DAY), autoMax, minVeOut],
      value,
    });
  };
  /** Mode 1 tops up `target`; `days` must be 365 when it is AutoMax (as on Base). */
  const claimRoyalties = async (who: DevnetAccount, eth: string, mode: 0 | 1, target = 0n, days = 0) => {
    await send(deployer, {
      address: c.royalties,
      abi: DEVNET_ABIS.ShareholderRoyalties,
      functionName: "accrue",
      args: [who.address],
      value: parseEther(eth),
    });
    const minVeOut = mode === 0 ? 0n : await quoteMinVeOut(who.address, parseEther(eth) * 10_000n, target, days, false);
    return send(who, {
      address: c.royalties,
      abi: DEVNET_ABIS.ShareholderRoyalties,
      functionName: "claimShareholder",
      args: [mode, target, BigInt(days * DAY), false, minVeOut],
    });
  };
  for (const who of [erin, frank, grace]) {
    txCount++;
    const hash = await clients
      .walletFor(deployer.privateKey)
      .sendTransaction({ to: who.address, value: parseEther("100"), chain: clients.chain });
    await mine.waitForTransactionReceipt({ hash });
  }
  await send(deployer, {
    address: c.token,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [grace.address, 20_000n * E18],
  });
  await send(grace, { address: c.token, abi: DEVNET_ABIS.AssetToken, functionName: "approve", args: [c.furnace, max] });
  let erinLock = 0n;
  let graceLock = 0n;
  let frankLock = 0n;
  await phase("old", async () => {
    await takeover(grace); // the first reign: no previous king, nothing finalized
    await warp(DAY);
    await takeover(frank); // finalizes grace's reign of a day: her longest, only on the lifetime board
    erinLock = createdId(await enterWithEth(erin, "1", 0n, 365, true));
    graceLock = (await createLock(grace, 3_000n * E18, 365, true)).id;
    await claimRoyalties(erin, "0.4", 0);
  });
  await warp(SEED_OLD_TO_MONTH_SECONDS);
  await phase("month", async () => {
    await takeover(grace); // finalizes frank's reign of 20 days: the longest
    await takeover(erin);
    frankLock = createdId(await enterWithEth(frank, "0.5", 0n, 365, true));
    await claimRoyalties(grace, "0.7", 0);
    await topUp(grace, graceLock, 1_500n * E18, true);
  });
  await warp(SEED_MONTH_TO_LOCKS_SECONDS);

  // --- funding: tokens and LP from the deployer; users approve what they will use (fresh approves nothing).
  for (const who of [alice, bob, carol, dave, fresh]) {
    await send(deployer, {
      address: c.token,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [who.address, 100_000n * E18],
    });
    await send(deployer, {
      address: c.lp,
      abi: DEVNET_ABIS.LpToken,
      functionName: "mint",
      args: [who.address, 1_000n * E18],
    });
  }
  await send(deployer, {
    address: c.token,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [capped.address, 32n * 1_000n * E18 + SEED_SPARE_TOKEN],
  });
  for (const who of [alice, bob, carol, dave, capped]) {
    await send(who, { address: c.token, abi: DEVNET_ABIS.AssetToken, functionName: "approve", args: [c.furnace, max] });
  }
  for (const who of [carol, dave]) {
    await send(who, { address: c.lp, abi: DEVNET_ABIS.LpToken, functionName: "approve", args: [c.vault, max] });
  }

  // --- alice: plain + AutoMax locks, top-ups on both, extensions on both, a 7-day lock to unlock later.
  const alicePlain = await createLock(alice, 5_000n * E18, 30);
  record("createPlain", alicePlain.receipt);
  const aliceAutoMax = await createLock(alice, 10_000n * E18, 365, true);
  record("createAutoMax", aliceAutoMax.receipt);
  const aliceShort = await createLock(alice, 2_000n * E18, 7);
  record("topUpPlain", await topUp(alice, alicePlain.id, 500n * E18));
  record("topUpAutoMax", await topUp(alice, aliceAutoMax.id, 1_000n * E18, true));
  record("extendPlain", await furnace(alice, "extendLock", [alicePlain.id, (await now()) + BigInt(90 * DAY)]));
  // On an AutoMax lock the requested end is ignored: the lock goes to now + 365d and the event says so.
  record("extendAutoMax", await furnace(alice, "extendLock", [aliceAutoMax.id, 0n]));
  // setAutoMax(false) on a plain lock is a silent no-op on the published contract; true on AutoMax refreshes.
  record("autoMaxNoop", await ve(alice, "setAutoMax", [alicePlain.id, false]));
  record("autoMaxRefresh", await ve(alice, "setAutoMax", [aliceAutoMax.id, true]));

  // --- bob: merge two locks, sell one through the market to the Furnace, AutoMax on (off after the time travel).
  const bobFrom = await createLock(bob, 3_000n * E18, 60);
  const bobInto = await createLock(bob, 4_000n * E18, 120);
  record("merge", await furnace(bob, "mergeLocks", [bobFrom.id, bobInto.id]));
  const bobSold = await createLock(bob, 1_500n * E18, 14);
  record("listed", await ve(market, "setListed", [bobSold.id, true]));
  // As the published market sells (MarketRouter): the listing is cleared first; a listed lock does not move.
  record("sellBackUnlist", await ve(market, "setListed", [bobSold.id, false]));
  record("sellBackTransfer", await ve(market, "transferFrom", [bob.address, c.furnace, bobSold.id]));
  record("autoMaxOn", await ve(bob, "setAutoMax", [bobInto.id, true]));

  // --- carol: Furnace entry creating a lock, then a Furnace top-up of it; a 7-day lock she never unlocks.
  const carolIn = 2_000n * E18;
  const furnaceNew = await send(carol, {
    address: c.furnace,
    abi: DEVNET_ABIS.Furnace,
    functionName: "enterWithClaim",
    args: [carolIn, 0n, BigInt(180 * DAY), false, await quoteMinVeOut(carol.address, carolIn, 0n, 180, false)],
  });
  record("furnaceNew", furnaceNew);
  const carolFurnace = createdId(furnaceNew);
  record("furnaceTopUp", await topUp(carol, carolFurnace, 500n * E18));
  const carolExpired = await createLock(carol, 1_000n * E18, 7);
  // A listing the indexer follows (MetadataUpdate + getLockInfo): the market lists carol's lock and delists it again.
  await ve(market, "setListed", [carolFurnace, true]);
  record("delisted", await ve(market, "setListed", [carolFurnace, false]));

  // --- dave: a 7-day lock his delegate (the deployer) unlocks for him after the time travel.
  const daveShort = await createLock(dave, 1_200n * E18, 7);
  await ve(dave, "openDelegationSession", [deployer.address, (await now()) + BigInt(30 * DAY)]);

  // --- LP: dave and carol stake; dave starts an unbond that matures during the time travel.
  const vault = (who: DevnetAccount, functionName: string, args: readonly unknown[] = []) =>
    send(who, { address: c.vault, abi: DEVNET_ABIS.LpStakingVault7D, functionName, args });
  record("stake", await vault(dave, "stake", [100n * E18]));
  await vault(carol, "stake", [50n * E18]);
  record("beginUnbond", await vault(dave, "beginUnbond", [30n * E18]));

  // --- accruals by the deployer: royalties in ETH, LP rewards in tokens.
  const accrueEth = (who: DevnetAccount, eth: string) =>
    send(deployer, {
      address: c.royalties,
      abi: DEVNET_ABIS.ShareholderRoyalties,
      functionName: "accrue",
      args: [who.address],
      value: parseEther(eth),
    });
  const accrueRewards = (who: DevnetAccount, amount: bigint) => vault(deployer, "accrueRewards", [who.address, amount]);
  await accrueEth(alice, "2");
  await accrueEth(bob, "1");
  await accrueEth(carol, "0.5");
  await accrueRewards(dave, 1_000n * E18);
  await accrueRewards(carol, 100n * E18);

  // --- capped: exactly MAX_LOCKS_PER_USER live locks, the first AutoMax, the others 30..60 days (outlive the seed).
  const cappedIds: bigint[] = [];
  for (let i = 0; i < 32; i++) {
    const lock =
      i === 0 ? await createLock(capped, 1_000n * E18, 365, true) : await createLock(capped, 1_000n * E18, 30 + i);
    cappedIds.push(lock.id);
  }

  // --- time travel: 7-day locks expire, the first unbond matures. The boards' week phase happens on the way,
  // 2 days before its end, when nothing of the roles has expired or matured yet.
  await warp(SEED_WEEK_PHASE_AFTER_SECONDS);
  await phase("week", async () => {
    await takeover(bob); // finalizes erin's reign of about 11 days
    await takeover(frank);
    await enterWithEth(grace, "0.3", graceLock, 365, false); // AutoMax target: 365 days, as on Base
    await claimRoyalties(frank, "0.2", 1, frankLock, 365); // FurnaceEnter mode 2 (ethIn 0.2), then ShareholderClaim mode 1
    await claimRoyalties(erin, "0.05", 0);
  });
  await warp(SEED_TIME_TRAVEL_SECONDS - SEED_WEEK_PHASE_AFTER_SECONDS);

  record("unlock", await ve(alice, "unlock", [aliceShort.id]));
  record(
    "sellBackBurn",
    await send(deployer, {
      address: c.furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "settleSellBack",
      args: [bobSold.id],
    }),
  );
  record("autoMaxOff", await ve(bob, "setAutoMax", [bobInto.id, false]));
  record("delegatedUnlock", await ve(deployer, "unlockExpiredForUser", [dave.address, daveShort.id]));
  record("withdrawMatured", await vault(dave, "withdrawMatured"));
  await vault(dave, "beginUnbond", [20n * E18]); // stays open: matures 7 days after the seed

  // --- collecting: alice takes ETH (mode 0); bob locks his into his merged lock (mode 1); carol uses claimAll.
  const royalties = (who: DevnetAccount, args: readonly unknown[]) =>
    send(who, { address: c.royalties, abi: DEVNET_ABIS.ShareholderRoyalties, functionName: "claimShareholder", args });
  record("royaltiesMode0", await royalties(alice, [0, 0n, 0n, false, 0n]));
  const bobTokens = parseEther("1") * 10_000n;
  // bobInto is AutoMax by now: a top-up of it must say 365 days (InvalidDuration otherwise, as on Base).
  const bobMin = await quoteMinVeOut(bob.address, bobTokens, bobInto.id, 365, false);
  record("royaltiesMode1", await royalties(bob, [1, bobInto.id, BigInt(365 * DAY), false, bobMin]));
  record(
    "claimAllMode0",
    await send(carol, {
      address: c.helper,
      abi: DEVNET_ABIS.ClaimAllHelper,
      functionName: "claimAll",
      args: [0, 0n, 0n, false, 0n],
    }),
  );
  const daveMin = await quoteMinVeOut(dave.address, 1_000n * E18, 0n, 365, true);
  const compound = await vault(dave, "claimRewardsAndLock", [0n, BigInt(365 * DAY), true, daveMin]);
  record("compound", compound);
  const daveCompound = createdId(compound);

  // --- the boards' day phase: frank's 2-day reign ends; bob's royalty lock and carol's claimAll above count too.
  await phase("day", async () => {
    await takeover(carol);
    await takeover(erin);
    await enterWithEth(frank, "0.25", frankLock, 365, false);
    await enterWithEth(carol, "0.15", carolFurnace, 0, false);
  });

  // --- leave something pending for state reads.
  await accrueEth(alice, "0.25");
  await accrueEth(bob, "0.1");
  await accrueRewards(carol, 40n * E18);
  await accrueRewards(dave, 25n * E18);

  const burnedTokenIds = [aliceShort.id, bobFrom.id, bobSold.id, daveShort.id];
  const liveTokenIds = [
    alicePlain.id,
    aliceAutoMax.id,
    bobInto.id,
    carolFurnace,
    carolExpired.id,
    ...cappedIds,
    daveCompound,
    erinLock,
    graceLock,
    frankLock,
  ].sort((a, b) => (a < b ? -1 : 1));
  return {
    accounts: DEVNET_ACCOUNTS,
    advancedSeconds,
    tokenIds: {
      alicePlain: alicePlain.id,
      aliceAutoMax: aliceAutoMax.id,
      aliceUnlocked: aliceShort.id,
      bobMergedFrom: bobFrom.id,
      bobMergedInto: bobInto.id,
      bobSoldBack: bobSold.id,
      carolFurnace,
      carolExpired: carolExpired.id,
      daveCompound,
      daveDelegatedUnlock: daveShort.id,
      capped: cappedIds,
    },
    liveTokenIds,
    burnedTokenIds,
    txs,
    boardPhases,
    txCount,
    lastBlock: await clients.publicClient.getBlockNumber({ cacheTime: 0 }),
  };
}
