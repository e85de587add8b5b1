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
