/**
 * The custom errors of the published contracts' `Errors` library (protocol.md §8) that a user of this
 * API can meet. All take no arguments. Declared here so a revert from the published contracts is named
 * even where the devnet contracts still use other names. `InvalidToken`: a Furnace top-up or quote whose
 * target id was never minted or is burned (FurnaceQuoter, FurnaceGuardHelper).
 */
const NAMES = [
  "NotAuthorized",
  "InvalidDuration",
  "LockExpired",
  "LockListedOrFrozen",
  "AutoMaxMismatch",
  "TooManyVeNFTs",
  "AmountZero",
  "AmountTooSmall",
  "AmountTooLarge",
  "MinLockAmountNotMet",
  "MinVeOutRequired",
  "MinVeOutNotMet",
  "InvalidMode",
  "LockingPaused",
  "TradingPaused",
  "TakeoversPaused",
  "CheckpointStale",
  "VeCheckpointStale",
  "WiringMismatch",
  "ShareholderRoyaltiesNotSet",
  "OnlyMineMarket",
  "MarketMustTransferToFurnace",
  "TransfersRestricted",
  "InsufficientStake",
  "TooManyUnbonds",
  "InsufficientTokenBalance",
  "InsufficientTokenAllowance",
  "InsufficientEthBalance",
  "EthTransferFailed",
  "PriceExceeded",
  "DeadlineExpired",
  "ZeroAddress",
  "InvariantViolation",
  "GenesisAlreadyFinalized",
  "GenesisWindowNotEnded",
  "CompoundQuoteFailed",
  "QuoteCallFailed",
  "CadenceNotMet",
  "InvalidToken",
] as const;

export type PublishedErrorName = (typeof NAMES)[number];

export const PUBLISHED_ERROR_NAMES: readonly PublishedErrorName[] = NAMES;

export const ErrorsAbi = NAMES.map((name) => ({ type: "error" as const, name, inputs: [] as const }));

/**
 * Errors a published contract declares itself rather than in the Errors library, which a user of this API can
 * meet: LpStakingVault7D's `LockCooldown()` (claimRewardsAndLock again within a day of the last one). No
 * arguments; the revert decoder (api/chain/revert.ts) knows them alongside the library's.
 */
const LOCAL_NAMES = ["LockCooldown"] as const;

export type PublishedLocalErrorName = (typeof LOCAL_NAMES)[number];

export const PUBLISHED_LOCAL_ERROR_NAMES: readonly PublishedLocalErrorName[] = LOCAL_NAMES;

export const LocalErrorsAbi = LOCAL_NAMES.map((name) => ({ type: "error" as const, name, inputs: [] as const }));

/**
 * The published token's own errors: the protocol token is an OpenZeppelin v5 ERC20 (ERC-6093), so a transferFrom
 * with too little allowance reverts `ERC20InsufficientAllowance(spender, allowance, needed)` (checked first) and one
 * with too little balance `ERC20InsufficientBalance(sender, balance, needed)`. Every Furnace entry pulls the token
 * from the wallet first (published Furnace.enterWithClaim), so a short wallet meets these, bubbled up, not the
 * library's InsufficientTokenAllowance / InsufficientTokenBalance. (The LP token, an OpenZeppelin 4.x Aerodrome pool,
 * reverts reason strings instead: `Error(string)`, which viem decodes without a declaration.)
 */
export const TokenErrorsAbi = [
  {
    type: "error",
    name: "ERC20InsufficientBalance",
    inputs: [
      { type: "address", name: "sender" },
      { type: "uint256", name: "balance" },
      { type: "uint256", name: "needed" },
    ],
  },
  {
    type: "error",
    name: "ERC20InsufficientAllowance",
    inputs: [
      { type: "address", name: "spender" },
      { type: "uint256", name: "allowance" },
      { type: "uint256", name: "needed" },
    ],
  },
] as const;

export type PublishedTokenErrorName = (typeof TokenErrorsAbi)[number]["name"];

export const PUBLISHED_TOKEN_ERROR_NAMES: readonly PublishedTokenErrorName[] = TokenErrorsAbi.map((e) => e.name);
