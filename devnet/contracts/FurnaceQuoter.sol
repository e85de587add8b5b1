// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevSwap} from "./DevSwap.sol";
import {Errors} from "./Errors.sol";
import {IVeLockNFT} from "./Interfaces.sol";
import {LockMath} from "./LockMath.sol";

/// @notice Read-only quotes for Furnace entries; the Furnace calls it too, so quote and execution never differ.
/// Devnet bonus (the published economics are not reproduced):
///   bonus = principal × (durationWeightBps(effectiveDuration) − 100) / 100_000
/// i.e. a tenth of the weight above the 7-day floor: 0 at 7 days, 9.9 % at 365 days / AutoMax.
contract FurnaceQuoter {
    uint256 public constant BONUS_DIVISOR = 100_000; // BPS (10_000) × 10

    IVeLockNFT public immutable ve;

    constructor(IVeLockNFT ve_) {
        ve = ve_;
    }

    /// @notice protocol.md §3 durationWeight at 1e8 precision (devnet extra).
    function durationWeight(uint256 durationSeconds) external pure returns (uint256) {
        return LockMath.durationWeight(durationSeconds);
    }

    function durationWeightBps(uint256 durationSeconds) external pure returns (uint256) {
        return LockMath.durationWeight(durationSeconds) / LockMath.WEIGHT_PRECISION;
    }

    /// @dev The published destination rules (FurnaceQuoter._resolveDestinationDuration, the same as the Furnace's
    /// FurnaceGuardHelper.resolveEntryDurationAndWeight). durationSeconds is clamped to [7d, 365d] first.
    /// New lock: createAutoMax requires the clamped duration to be 365 days (InvalidDuration); principal + bonus
    /// ≥ 1000e18 (MinLockAmountNotMet). No lock count is checked here: a 33rd lock fails only at execution.
    /// Top-up: a never-minted or burned id is InvalidToken; `user` must own it (NotAuthorized), unlisted,
    /// unexpired; an AutoMax lock needs the clamped duration to be 365 days, a plain lock at least 7 days left
    /// (InvalidDuration); createAutoMax is ignored; no minimum amount is checked here (execution reverts
    /// InvariantViolation below 1e18).
    function quoteEnterWithClaim(address user, uint256 claimIn, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax)
        external
        view
        returns (uint256 principalClaim, uint256 bonusClaim, uint256 veOut, uint256 routeTokenId)
    {
        if (claimIn == 0) revert Errors.AmountZero();
        principalClaim = claimIn;
        (bonusClaim, veOut, routeTokenId) = _quoteAfterPrincipal(user, principalClaim, targetTokenId, durationSeconds, createAutoMax);
    }

    /// @notice The published signature and order: AmountZero on 0 ETH, then the principal the ETH buys, then the
    /// same destination rules as quoteEnterWithClaim. Published, the principal is the pool's WETH→token output
    /// (what `Furnace.lockEthReward` / `enterWithEth` swap at, with amountOutMin 0, so minVeOut is the only guard);
    /// here it is ethIn × DevSwap.TOKENS_PER_ETH, the rate the devnet's royalties and Furnace mint at.
    function quoteEnterWithEth(address user, uint256 ethIn, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax)
        external
        view
        returns (uint256 principalClaim, uint256 bonusClaim, uint256 veOut, uint256 routeTokenId)
    {
        if (ethIn == 0) revert Errors.AmountZero();
        principalClaim = ethIn * DevSwap.TOKENS_PER_ETH;
        (bonusClaim, veOut, routeTokenId) = _quoteAfterPrincipal(user, principalClaim, targetTokenId, durationSeconds, createAutoMax);
    }

    function _quoteAfterPrincipal(address user, uint256 principalClaim, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax)
        internal
        view
        returns (uint256 bonusClaim, uint256 veOut, uint256 routeTokenId)
    {
        uint256 d = LockMath.clampDuration(durationSeconds);
        uint256 effective;
        if (targetTokenId == 0) {
            if (createAutoMax && d != LockMath.MAX_LOCK_DURATION) revert Errors.InvalidDuration();
            effective = d;
        } else {
            address owner;
            try ve.ownerOf(targetTokenId) returns (address o) {
                owner = o;
            } catch {
                revert Errors.InvalidToken();
            }
            if (owner != user) revert Errors.NotAuthorized();
            (, uint256 lockEnd, bool autoMax, bool listed) = ve.getLockInfo(targetTokenId);
            if (listed) revert Errors.LockListedOrFrozen();
            if (lockEnd <= block.timestamp) revert Errors.LockExpired();
            if (autoMax) {
                if (d != LockMath.MAX_LOCK_DURATION) revert Errors.InvalidDuration();
                effective = LockMath.MAX_LOCK_DURATION;
            } else {
                effective = lockEnd - block.timestamp;
                if (effective < LockMath.MIN_LOCK_DURATION) revert Errors.InvalidDuration();
            }
        }

        uint256 weightBps = LockMath.durationWeight(effective) / LockMath.WEIGHT_PRECISION;
        bonusClaim = (principalClaim * (weightBps - 100)) / BONUS_DIVISOR;
        uint256 total = principalClaim + bonusClaim;
        if (targetTokenId == 0 && total < LockMath.MIN_LOCK_AMOUNT) revert Errors.MinLockAmountNotMet();
        veOut = (total * effective) / LockMath.MAX_LOCK_DURATION;
        routeTokenId = targetTokenId;
    }
}
