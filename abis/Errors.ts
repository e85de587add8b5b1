/**
 * The custom errors of the published contracts' `Errors` library (protocol.md §8) that a user of this
 * API can meet. All take no arguments. Declared here so a revert from the published contracts is named
 * even where the devnet contracts still use other names.
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
] as const;

export type PublishedErrorName = (typeof NAMES)[number];

export const PUBLISHED_ERROR_NAMES: readonly PublishedErrorName[] = NAMES;

export const ErrorsAbi = NAMES.map((name) => ({ type: "error" as const, name, inputs: [] as const }));
