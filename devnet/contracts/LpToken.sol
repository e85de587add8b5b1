// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevERC20} from "./DevERC20.sol";

/// @notice Stand-in for the token/WETH pool's LP token: a plain mintable ERC-20 (no pool math on the devnet).
contract LpToken is DevERC20 {
    constructor(address holder, uint256 initialSupply) DevERC20("Asset/WETH LP", "ASSET-LP", holder, initialSupply, new address[](0)) {}
}
