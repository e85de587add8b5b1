// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";

/// @notice Minimal ERC-20 for the devnet: 18 decimals, an owner who can mint, and minters the owner names
/// (the Furnace mints the lock bonus, royalties/vault mint the tokens they pay out). Holders can burn.
/// A short allowance or balance reverts as OpenZeppelin v5's ERC20 does (the published token is one): the
/// ERC-6093 errors below with their arguments, the allowance checked first in transferFrom. A token standing
/// in for a contract built on another ERC20 overrides the two hooks (LpToken: OpenZeppelin 4.x reason strings).
abstract contract DevERC20 {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public immutable owner;

    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public isMinter;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// OpenZeppelin v5 (IERC20Errors, ERC-6093): the names and arguments a wallet meets on Base.
    error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
    error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed);


    constructor(string memory name_, string memory symbol_, address holder, uint256 initialSupply, address[] memory minters) {
        name = name_;
        symbol = symbol_;
        owner = msg.sender;
        for (uint256 i = 0; i < minters.length; i++) {
            isMinter[minters[i]] = true;
        }
        if (initialSupply > 0) _mint(holder, initialSupply);
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < amount) _revertInsufficientAllowance(msg.sender, allowed, amount);
            allowance[from][msg.sender] = allowed - amount;
        }
        _transfer(from, to, amount);
        return true;
    }

    /// @notice Devnet only: the owner or an authorised minter creates tokens.
    function mint(address to, uint256 amount) external {
        if (msg.sender != owner && !isMinter[msg.sender]) revert Errors.NotAuthorized();
        _mint(to, amount);
    }

    /// @notice Devnet only: the owner adds or removes a minter.
    function setMinter(address minter, bool allowed) external {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        isMinter[minter] = allowed;
    }

    /// @notice Devnet only: any holder burns its own tokens (the Furnace burns sold-back principal).
    function burn(uint256 amount) external {
        uint256 bal = balanceOf[msg.sender];
        if (bal < amount) _revertInsufficientBalance(msg.sender, bal, amount);
        balanceOf[msg.sender] = bal - amount;
        totalSupply -= amount;
        emit Transfer(msg.sender, address(0), amount);
    }

    function _transfer(address from, address to, uint256 amount) internal {
        uint256 bal = balanceOf[from];
        if (bal < amount) _revertInsufficientBalance(from, bal, amount);
        balanceOf[from] = bal - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }

    /// @dev Reverts a transferFrom whose allowance is short (an unlimited allowance is never spent).
    function _revertInsufficientAllowance(address spender, uint256 allowed, uint256 needed) internal pure virtual {
        revert ERC20InsufficientAllowance(spender, allowed, needed);
    }

    /// @dev Reverts a transfer or burn larger than the holder's balance.
    function _revertInsufficientBalance(address holder, uint256 balance, uint256 needed) internal pure virtual {
        revert ERC20InsufficientBalance(holder, balance, needed);
    }

    function _mint(address to, uint256 amount) internal {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }
}
