// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevERC20} from "./DevERC20.sol";

/// @notice Stand-in for the token/WETH pool's LP token: a plain mintable ERC-20 (no pool math on the devnet).
/// On Base the LP token is the Aerodrome V2 pool, an OpenZeppelin 4.x ERC20: a short allowance or balance
/// reverts with its reason strings (no custom error), the allowance checked first in transferFrom.
contract LpToken is DevERC20 {
    constructor(address holder, uint256 initialSupply) DevERC20("Asset/WETH LP", "ASSET-LP", holder, initialSupply, new address[](0)) {}

    function _revertInsufficientAllowance(address, uint256, uint256) internal pure override {
        revert("ERC20: insufficient allowance");
    }

    function _revertInsufficientBalance(address, uint256, uint256) internal pure override {
        revert("ERC20: transfer amount exceeds balance");
    }
}
