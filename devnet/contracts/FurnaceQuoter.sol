// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

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

    /// @dev New lock (targetTokenId == 0): duration in [7d, 365d], AutoMax only with 365d, principal+bonus ≥ 1000e18,
    /// fewer than 32 live locks. Top-up: `user` owns the lock, unlisted, unexpired, principal+bonus ≥ 1e18;
    /// durationSeconds is ignored and createAutoMax must be false (AutoMax is only for a new 365-day lock).
    function quoteEnterWithClaim(address user, uint256 claimIn, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax)
        external
        view
        returns (uint256 principalClaim, uint256 bonusClaim, uint256 veOut, uint256 routeTokenId)
    {
        if (claimIn == 0) revert Errors.AmountZero();
        uint256 effective;
        if (targetTokenId == 0) {
            if (durationSeconds < LockMath.MIN_LOCK_DURATION || durationSeconds > LockMath.MAX_LOCK_DURATION) {
                revert Errors.InvalidDuration();
            }
            if (createAutoMax && durationSeconds != LockMath.MAX_LOCK_DURATION) revert Errors.AutoMaxMismatch();
            if (ve.balanceOf(user) >= LockMath.MAX_LOCKS_PER_USER) revert Errors.TooManyVeNFTs();
            effective = createAutoMax ? LockMath.MAX_LOCK_DURATION : durationSeconds;
        } else {
            if (createAutoMax) revert Errors.AutoMaxMismatch();
            if (_ownerOrZero(targetTokenId) != user || user == address(0)) revert Errors.NotAuthorized();
            (, uint256 lockEnd, bool autoMax, bool listed) = ve.getLockInfo(targetTokenId);
            if (listed) revert Errors.LockListedOrFrozen();
            if (autoMax) {
                effective = LockMath.MAX_LOCK_DURATION;
            } else {
                if (lockEnd <= block.timestamp) revert Errors.LockExpired();
                effective = lockEnd - block.timestamp;
            }
        }

        principalClaim = claimIn;
        uint256 weightBps = LockMath.durationWeight(effective) / LockMath.WEIGHT_PRECISION;
        bonusClaim = (principalClaim * (weightBps - 100)) / BONUS_DIVISOR;
        uint256 total = principalClaim + bonusClaim;
        if (targetTokenId == 0 && total < LockMath.MIN_LOCK_AMOUNT) revert Errors.MinLockAmountNotMet();
        if (targetTokenId != 0 && total < LockMath.MIN_TOPUP_AMOUNT) revert Errors.AmountTooSmall();
        veOut = (total * effective) / LockMath.MAX_LOCK_DURATION;
        routeTokenId = targetTokenId;
    }

    function _ownerOrZero(uint256 tokenId) internal view returns (address) {
        try ve.ownerOf(tokenId) returns (address owner) {
            return owner;
        } catch {
            return address(0);
        }
    }
}
