// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevERC20} from "./DevERC20.sol";

/// @notice The protocol token (published as ClaimToken "CLAIM"). The ERC-20 surface of abis/AssetToken.ts
/// plus the devnet mint/burn of DevERC20.
contract AssetToken is DevERC20 {
    constructor(address holder, uint256 initialSupply, address[] memory minters)
        DevERC20("Asset Token", "ASSET", holder, initialSupply, minters)
    {}
}
