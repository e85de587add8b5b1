// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice The devnet's ETH→token "swap" (it has no pool): one rate for the Furnace's ETH entry, the royalties'
/// mode 1 and the quoter's quoteEnterWithEth, so a quote and the entry it prices cannot drift apart.
library DevSwap {
    uint256 internal constant TOKENS_PER_ETH = 10_000;
}
