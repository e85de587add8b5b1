// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @notice protocol.md §3 constants and durationWeight, shared by the NFT and the quoter.
library LockMath {
    uint256 internal constant MIN_LOCK_DURATION = 7 days; // 604_800
    uint256 internal constant MAX_LOCK_DURATION = 365 days; // 31_536_000
    uint256 internal constant MIN_LOCK_AMOUNT = 1000e18;
    uint256 internal constant MIN_TOPUP_AMOUNT = 1e18;
    uint256 internal constant MAX_LOCKS_PER_USER = 32;
    uint256 internal constant WEIGHT_PRECISION = 1e8;

    /// @dev A Furnace entry's duration: below 7 days counts as 7 days, above 365 days as 365 days.
    function clampDuration(uint256 seconds_) internal pure returns (uint256) {
        return seconds_ < MIN_LOCK_DURATION ? MIN_LOCK_DURATION : (seconds_ > MAX_LOCK_DURATION ? MAX_LOCK_DURATION : seconds_);
    }

    /// @dev Weight at 1e8 sub-bp precision: clamp to [7d, 365d], then linear between the breakpoints
    /// (days → bps) 7→100, 14→175, 21→300, 30→500, 90→1500, 180→4000, 270→6500, 365→10000, floored.
    function durationWeight(uint256 seconds_) internal pure returns (uint256) {
        uint256 d = clampDuration(seconds_);
        if (d <= MIN_LOCK_DURATION) return 100 * WEIGHT_PRECISION;
        uint16[8] memory daysAt = [uint16(7), 14, 21, 30, 90, 180, 270, 365];
        uint16[8] memory bpsAt = [uint16(100), 175, 300, 500, 1500, 4000, 6500, 10000];
        for (uint256 i = 1; i < 8; i++) {
            uint256 d1 = uint256(daysAt[i]) * 1 days;
            if (d <= d1) {
                uint256 d0 = uint256(daysAt[i - 1]) * 1 days;
                uint256 w0 = bpsAt[i - 1];
                uint256 w1 = bpsAt[i];
                return w0 * WEIGHT_PRECISION + ((d - d0) * (w1 - w0) * WEIGHT_PRECISION) / (d1 - d0);
            }
        }
        return 10000 * WEIGHT_PRECISION; // unreachable: d <= 365d after the clamp
    }

    /// @dev ve of one lock at time t (protocol.md §2).
    function veOf(uint256 amount, uint256 lockEnd, bool autoMax, uint256 t) internal pure returns (uint256) {
        if (autoMax) return amount;
        if (lockEnd <= t) return 0;
        return (amount * (lockEnd - t)) / MAX_LOCK_DURATION;
    }
}
