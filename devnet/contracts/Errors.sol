// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The published contracts declare every custom error once, in one library, with no arguments
/// (protocol.md §8). The devnet reverts only with these names, so a decoded devnet revert is a name Base can
/// return. Not every one is reachable on the devnet (the README lists which are).
library Errors {
    error NotAuthorized();
    error InvalidDuration();
    error LockExpired();
    error LockListedOrFrozen();
    error AutoMaxMismatch();
    error TooManyVeNFTs();
    error AmountZero();
    error AmountTooSmall();
    error AmountTooLarge();
    error MinLockAmountNotMet();
    error MinVeOutRequired();
    error MinVeOutNotMet();
    error InvalidMode();
    error LockingPaused();
    error TradingPaused();
    error TakeoversPaused();
    error CheckpointStale();
    error VeCheckpointStale();
    error WiringMismatch();
    error ShareholderRoyaltiesNotSet();
    error OnlyMineMarket();
    error MarketMustTransferToFurnace();
    error TransfersRestricted();
    error InsufficientStake();
    error TooManyUnbonds();
    error InsufficientTokenBalance();
    error InsufficientTokenAllowance();
    error InsufficientEthBalance();
    error EthTransferFailed();
    error PriceExceeded();
    error DeadlineExpired();
    error ZeroAddress();
    error InvariantViolation();
    error GenesisAlreadyFinalized();
    error GenesisWindowNotEnded();
    error CompoundQuoteFailed();
    error QuoteCallFailed();
    error CadenceNotMet();
    error InvalidToken();
}
