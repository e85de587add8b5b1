// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IDevToken, IFurnaceQuoter, IVeLockNFT} from "./Interfaces.sol";

/// @notice Locks the token with a bonus. Quotes come from the FurnaceQuoter (same logic for quote and execution);
/// the bonus is minted (the Furnace is an AssetToken minter). Also the devnet end of the sell-back path.
contract Furnace {
    IDevToken public immutable token;
    IVeLockNFT public immutable ve;
    IFurnaceQuoter public immutable quoter;
    address public immutable owner;
    /// Contracts that may enter on a user's behalf, paying themselves (royalties mode 1, vault compound, ClaimAllHelper).
    address public immutable royalties;
    address public immutable vault;
    address public immutable claimAllHelper;

    event FurnaceEntered(address indexed user, uint256 indexed tokenId, uint256 principal, uint256 bonus, uint256 veOut);
    event SellBackSettled(uint256 indexed tokenId, uint256 amountBurned);

    error AmountZero();
    error MinVeOutRequired();
    error SlippageExceeded();
    error MinLockAmountNotMet();
    error InvalidDuration();
    error LockExpired();
    error TooManyVeNFTs();
    error NotLockOwner();
    /// Devnet extras.
    error NotAuthorized();
    error AutoMaxRequiresMaxDuration();

    constructor(
        IDevToken token_,
        IVeLockNFT ve_,
        IFurnaceQuoter quoter_,
        address royalties_,
        address vault_,
        address claimAllHelper_
    ) {
        token = token_;
        ve = ve_;
        quoter = quoter_;
        owner = msg.sender;
        royalties = royalties_;
        vault = vault_;
        claimAllHelper = claimAllHelper_;
        token_.approve(address(ve_), type(uint256).max); // VeLockNFT pulls the locked tokens from msg.sender
    }

    function enterWithClaim(uint256 claimAmount, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)
        external
        returns (uint256 tokenIdUsed)
    {
        return _enter(msg.sender, msg.sender, claimAmount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet: a trusted contract locks tokens it holds for `user`.
    function enterWithClaimFor(
        address user,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) external returns (uint256 tokenIdUsed) {
        if (msg.sender != royalties && msg.sender != vault && msg.sender != claimAllHelper) revert NotAuthorized();
        return _enter(msg.sender, user, claimAmount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet sell-back settlement: burns a lock the Furnace received (Transfer(Furnace → 0), LockUnlocked)
    /// and burns the returned principal. The seller is not paid on the devnet.
    function settleSellBack(uint256 tokenId) external returns (uint256 amount) {
        if (msg.sender != owner) revert NotAuthorized();
        amount = ve.burnFromFurnace(tokenId);
        token.burn(amount);
        emit SellBackSettled(tokenId, amount);
    }

    function _enter(
        address payer,
        address user,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) internal returns (uint256 tokenIdUsed) {
        if (claimAmount == 0) revert AmountZero();
        if (minVeOut == 0) revert MinVeOutRequired();
        (uint256 principal, uint256 bonus, uint256 veOut,) =
            quoter.quoteEnterWithClaim(user, claimAmount, targetTokenId, durationSeconds, createAutoMax);
        if (veOut < minVeOut) revert SlippageExceeded();

        token.transferFrom(payer, address(this), principal);
        if (bonus > 0) token.mint(address(this), bonus);
        if (targetTokenId == 0) {
            tokenIdUsed = ve.createLockFor(user, principal + bonus, durationSeconds, createAutoMax);
        } else {
            ve.addToLockFor(user, targetTokenId, principal + bonus);
            tokenIdUsed = targetTokenId;
        }
        emit FurnaceEntered(user, tokenIdUsed, principal, bonus, veOut);
    }
}
