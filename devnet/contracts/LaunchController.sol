// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";

/// @notice The genesis gate. On the devnet the owner sets the status bitmask directly; deployed FINALIZED
/// (0x7FE: every readiness bit set, bit 0 "genesis NOT finalized" clear). requiredSeedEth follows protocol.md §1.
contract LaunchController {
    uint256 public statusBitmask;
    uint256 public accrualDuration;
    address public immutable owner;


    constructor(uint256 statusBitmask_, uint256 accrualDuration_) {
        statusBitmask = statusBitmask_;
        accrualDuration = accrualDuration_;
        owner = msg.sender;
    }

    function preflight() external view returns (uint256, uint256) {
        return (statusBitmask, (50 ether * accrualDuration) / 10 days);
    }

    /// @notice Devnet only (the published bit 0 never sets again once cleared; here tests may flip it).
    function setStatusBitmask(uint256 statusBitmask_) external {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        statusBitmask = statusBitmask_;
    }

    /// @notice Devnet only.
    function setAccrualDuration(uint256 accrualDuration_) external {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        accrualDuration = accrualDuration_;
    }
}
