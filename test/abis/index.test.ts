import { type Abi, type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from "viem";
import { describe, expect, it } from "vitest";
import * as abis from "../../abis";
import { ErrorsAbi, LocalErrorsAbi, TokenErrorsAbi } from "../../abis/Errors";

// Literal values copied from protocol.md §1–2; the ABIs must reproduce every one of them.
const SELECTORS: Record<string, Record<string, string>> = {
  AssetTokenAbi: {
    totalSupply: "0x18160ddd",
    balanceOf: "0x70a08231",
    allowance: "0xdd62ed3e",
    approve: "0x095ea7b3",
    decimals: "0x313ce567",
  },
  LpTokenAbi: {
    totalSupply: "0x18160ddd",
    balanceOf: "0x70a08231",
    allowance: "0xdd62ed3e",
    approve: "0x095ea7b3",
    decimals: "0x313ce567",
  },
  VeLockNFTAbi: {
    createLockFor: "0xff59ebd1",
    addToLockFor: "0x3bdcb577",
    extendLockToFor: "0x5303e981",
    mergeLocksFor: "0x34b4429b",
    setAutoMax: "0x71275955",
    unlock: "0x6198e339",
    totalLockedClaim: "0x0ff566a7",
    getLockInfo: "0xc9102afd",
    lockStartOf: "0x580ddf60",
    veBalanceOf: "0x9f17f734",
    balanceOf: "0x70a08231",
    ownerOf: "0x6352211e",
    nextTokenId: "0x75794a3c",
  },
  LaunchControllerAbi: { preflight: "0x75106187" },
  FurnaceAbi: { enterWithClaim: "0x72786ee3" },
  FurnaceQuoterAbi: {
    quoteEnterWithEth: "0x7ccd86a9",
    quoteEnterWithClaim: "0xd0334149",
    durationWeightBps: "0x8705950a",
  },
  ClaimAllHelperAbi: { claimAll: "0xc9b6e4db" },
  ShareholderRoyaltiesAbi: { claimShareholder: "0xab7aaaf5", claimableEth: "0x4793dc40" },
  // Events only: the official leaderboards' takeovers and reigns (issue 31); no function is called.
  MineCoreAbi: {},
  LpStakingVault7DAbi: {
    claimRewards: "0x372500ab",
    claimRewardsAndLock: "0x293749ed",
    withdrawMatured: "0x533ebf75",
    stake: "0xa694fc3a",
    beginUnbond: "0x0b7dc3a6",
    earned: "0x008cc262",
    stakedBalance: "0x60217267",
    lpToken: "0x5fcbd285",
    getUnbondCount: "0x99e65a5d",
    getUnbondByIndex: "0x662727d1",
  },
};

const TOPICS: Record<string, string> = {
  LockCreated: "0xf2e434b25dc0642557c78f33e890ff32142d8b2266063fa31604f80607fc3629",
  LockAmountIncreased: "0xce4b949c4a850bbc2397d4e496669b3970be305a53d62ef5cd4e7b43ce4b0c5b",
  LockExtended: "0x2880f4fc08dec6bc3c61687b882e88598cb950c1dbff72d4a2d20223174215b4",
  LockMerged: "0xeda5347add04fd32e9c77f9b1d459a737490432c6721b1a98270c826d0ac0034",
  LockUnlocked: "0xb8467a67892a3eb9ca0a54a00960a7bb14970dc16c3b3da0803ca776c1e47a43",
  AutoMaxSet: "0x3c127c07e0311e24c89bf90ee72e70c354a009a75a989c7b1daf61d375902468",
  Transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  // ERC-4906 MetadataUpdate(uint256): the listing signal of protocol.md §8 (test/devnet/events.test.ts pins it too).
  MetadataUpdate: "0xf8e1a15aba9398e019f0b49df1a4fde98ee17ae345cb5f6b5e2c27f5033e8ce7",
};

/**
 * The published Errors library (protocol.md §8), keccak256("Name()")[0:4]: literal values, computed once outside
 * the code under test. Exactly these, no invented ones (NotLockOwner, LockListed, SlippageExceeded, …).
 */
const ERROR_SELECTORS: Record<string, string> = {
  NotAuthorized: "0xea8e4eb5",
  InvalidDuration: "0x76166401",
  LockExpired: "0xf6fafba0",
  LockListedOrFrozen: "0x4f00e11b",
  AutoMaxMismatch: "0xd579fe33",
  TooManyVeNFTs: "0xd0d88033",
  AmountZero: "0xcbca5aa2",
  AmountTooSmall: "0xc2f5625a",
  AmountTooLarge: "0x06250401",
  MinLockAmountNotMet: "0xacecb5ea",
  MinVeOutRequired: "0x1c7560ee",
  MinVeOutNotMet: "0x7bb0c997",
  InvalidMode: "0xa0042b17",
  LockingPaused: "0x59e55790",
  TradingPaused: "0x02b874a6",
  TakeoversPaused: "0x180bdfce",
  CheckpointStale: "0x33cc1aca",
  VeCheckpointStale: "0x7c739fd5",
  WiringMismatch: "0x2351953c",
  ShareholderRoyaltiesNotSet: "0xb583d90d",
  OnlyMineMarket: "0x7c816e82",
  MarketMustTransferToFurnace: "0x92b39d64",
  TransfersRestricted: "0xf7c0f77a",
  InsufficientStake: "0xf1bc94d2",
  TooManyUnbonds: "0x26baa0fb",
  InsufficientTokenBalance: "0xe4455cae",
  InsufficientTokenAllowance: "0xa085b77b",
  InsufficientEthBalance: "0xb6d6e7d6",
  EthTransferFailed: "0x6d963f88",
  PriceExceeded: "0x07f782c8",
  DeadlineExpired: "0x1ab7da6b",
  ZeroAddress: "0xd92e233d",
  InvariantViolation: "0x302e29cb",
  GenesisAlreadyFinalized: "0xe80d8883",
  GenesisWindowNotEnded: "0x12057690",
  CompoundQuoteFailed: "0x75691ae3",
  QuoteCallFailed: "0x6a7912c1",
  CadenceNotMet: "0x4da6338e",
  InvalidToken: "0xc1ab6dc1",
};

const all = abis as unknown as Record<string, Abi>;

describe("ABIs pin protocol.md selectors", () => {
  it("exports exactly the expected ABI files", () => {
    expect(Object.keys(all).sort()).toEqual(Object.keys(SELECTORS).sort());
  });

  for (const [abiName, expected] of Object.entries(SELECTORS)) {
    it(`${abiName}: functions are exactly protocol.md's, with its selectors`, () => {
      const fns = (all[abiName] ?? []).filter((x): x is AbiFunction => x.type === "function");
      const actual = Object.fromEntries(fns.map((f) => [f.name, toFunctionSelector(f)]));
      expect(actual).toEqual(expected);
    });
  }

  it("VeLockNFT events are exactly protocol.md's, with its topics", () => {
    const events = abis.VeLockNFTAbi.filter((x) => x.type === "event") as readonly AbiEvent[];
    const actual = Object.fromEntries(events.map((e) => [e.name, toEventSelector(e)]));
    expect(actual).toEqual(TOPICS);
  });

  it("Transfer is the ERC-721 form (tokenId indexed: 4 topics)", () => {
    const transfer = abis.VeLockNFTAbi.find((x) => x.type === "event" && x.name === "Transfer") as AbiEvent;
    expect(transfer.inputs.filter((i) => i.indexed)).toHaveLength(3);
  });

  it("the other ABIs declare exactly the published events the leaderboards read (issue 31), with their topics", () => {
    // Published signatures (reference src/lib/Events.sol); their topic0s as test/devnet/events.test.ts pins them.
    const BOARD_EVENTS: Record<string, Record<string, string>> = {
      MineCoreAbi: {
        Takeover: "0x9e8ea9ebe1eff3171e76905f1ded95f86073dde0bf181d85612dead42f2e430c",
        ReignFinalized: "0xea7e05e0c6823091a35698259c587e00a391487084bdb9f1c9028c1272f70ef6",
      },
      FurnaceAbi: { FurnaceEnter: "0x7f7f0de17f3500a1420b9cdc65ea622e20871e0abe71d5192560052b4999961f" },
      ShareholderRoyaltiesAbi: {
        ShareholderClaim: "0x974ae5737335021d786c060217f1afc742be2cde3661beebbc87875bc8a75ecd",
      },
    };
    for (const [name, abi] of Object.entries(all)) {
      if (name === "VeLockNFTAbi") continue;
      const events = abi.filter((x): x is AbiEvent => x.type === "event");
      expect(Object.fromEntries(events.map((e) => [e.name, toEventSelector(e)])), name).toEqual(
        BOARD_EVENTS[name] ?? {},
      );
    }
  });

  it("abis/Errors.ts declares exactly the published errors, no arguments, with their selectors", () => {
    expect(ErrorsAbi.every((e) => e.type === "error" && e.inputs.length === 0)).toBe(true);
    const actual = Object.fromEntries(ErrorsAbi.map((e) => [e.name, toFunctionSelector(`${e.name}()`)]));
    expect(actual).toEqual(ERROR_SELECTORS);
    expect(Object.keys(ERROR_SELECTORS)).toHaveLength(39);
    // LpStakingVault7D declares one error of its own (not in the Errors library): LockCooldown()
    expect(LocalErrorsAbi.map((e) => [e.name, toFunctionSelector(`${e.name}()`), e.inputs.length])).toEqual([
      ["LockCooldown", "0x39be4a63", 0],
    ]);
  });

  it("abis/Errors.ts declares the token's OpenZeppelin v5 errors with their arguments and ERC-6093 selectors", () => {
    expect(
      TokenErrorsAbi.map((e) => [
        `${e.name}(${e.inputs.map((i) => `${i.type} ${i.name}`).join(", ")})`,
        toFunctionSelector(`${e.name}(${e.inputs.map((i) => i.type).join(",")})`),
      ]),
    ).toEqual([
      ["ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)", "0xe450d38c"],
      ["ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)", "0xfb8f41b2"],
    ]);
  });

  it("no contract ABI declares an error of its own (one declaration: abis/Errors.ts)", () => {
    for (const abi of Object.values(all)) expect(abi.filter((x) => x.type === "error")).toEqual([]);
  });
});
