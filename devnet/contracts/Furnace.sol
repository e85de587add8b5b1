// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevSwap} from "./DevSwap.sol";
import {Errors} from "./Errors.sol";
import {IDevToken, IFurnaceQuoter, IVeLockNFT} from "./Interfaces.sol";
import {LockMath} from "./LockMath.sol";

/// @notice Locks the token with a bonus. Quotes come from the FurnaceQuoter (same logic for quote and execution);
/// the bonus is minted (the Furnace is an AssetToken minter). The Furnace is the only caller VeLockNFT's *For
/// mutators accept, as on Base. Also the end of the sell-back path (furnaceBurnAndWithdraw).
contract Furnace {
    IDevToken public immutable token;
    IVeLockNFT public immutable ve;
    IFurnaceQuoter public immutable quoter;
    address public immutable owner;
    /// Contracts that may enter on a user's behalf, paying themselves (royalties mode 1, vault compound, ClaimAllHelper).
    address public immutable royalties;
    address public immutable vault;
    address public immutable claimAllHelper;

    /// The published event (protocol.md §9). mode: 0 enter with ETH, 1 enter with the token, 2 a royalty claim
    /// locked through the Furnace; ethIn is 0 for token entries.
    event FurnaceEnter(address indexed user, uint8 mode, uint256 ethIn, uint256 principalClaim, uint256 bonusClaim, uint256 tokenId);
    event SellBackSettled(uint256 indexed tokenId, uint256 amountBurned);

    uint8 internal constant MODE_ETH = 0;
    uint8 internal constant MODE_TOKEN = 1;
    uint8 internal constant MODE_ROYALTY_LOCK = 2;
    /// Devnet swap rate for ETH entries, the same fixed rate ShareholderRoyalties uses (no pool on the devnet).
    uint256 public constant TOKENS_PER_ETH = DevSwap.TOKENS_PER_ETH;


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
        return _enter(msg.sender, msg.sender, MODE_TOKEN, 0, claimAmount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet stand-in for the published ETH entry: the ETH stays here and is "swapped" by minting
    /// TOKENS_PER_ETH tokens per ETH, which are locked for msg.sender (FurnaceEnter mode 0, ethIn = msg.value).
    function enterWithEth(uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)
        external
        payable
        returns (uint256 tokenIdUsed)
    {
        uint256 tokens = msg.value * TOKENS_PER_ETH;
        if (tokens > 0) token.mint(address(this), tokens);
        return _enter(address(this), msg.sender, MODE_ETH, msg.value, tokens, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet: ShareholderRoyalties locks a user's royalty ETH, already swapped into tokens it holds
    /// (FurnaceEnter mode 2, ethIn = the royalty ETH), as the published royalty claim in mode 1 does.
    function enterWithRoyaltyFor(
        address user,
        uint256 ethIn,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) external returns (uint256 tokenIdUsed) {
        if (msg.sender != royalties) revert Errors.NotAuthorized();
        return _enter(msg.sender, user, MODE_ROYALTY_LOCK, ethIn, claimAmount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet: a trusted contract locks tokens it holds for `user` (FurnaceEnter mode 1).
    function enterWithClaimFor(
        address user,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) external returns (uint256 tokenIdUsed) {
        if (msg.sender != royalties && msg.sender != vault && msg.sender != claimAllHelper) revert Errors.NotAuthorized();
        return _enter(msg.sender, user, MODE_TOKEN, 0, claimAmount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
    }

    /// @notice Devnet sell-back settlement: burns a lock the market moved here with VeLockNFT.furnaceBurnAndWithdraw
    /// (Transfer(Furnace → 0), LockUnlocked(Furnace, …)) and burns the returned principal. The seller is not paid
    /// on the devnet.
    function settleSellBack(uint256 tokenId) external returns (uint256 amount) {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        amount = ve.furnaceBurnAndWithdraw(tokenId, address(this));
        token.burn(amount);
        emit SellBackSettled(tokenId, amount);
    }

    /// @notice Devnet entry for VeLockNFT.extendLockToFor (Furnace-only there): extends msg.sender's lock.
    /// protocol.md does not give the published route to an extension; this one keeps LockExtended reachable.
    function extendLock(uint256 tokenId, uint256 newEnd) external {
        ve.extendLockToFor(msg.sender, tokenId, newEnd);
    }

    /// @notice Devnet entry for VeLockNFT.mergeLocksFor (Furnace-only there): merges two of msg.sender's locks.
    function mergeLocks(uint256 fromTokenId, uint256 intoTokenId) external {
        ve.mergeLocksFor(msg.sender, fromTokenId, intoTokenId);
    }

    function _enter(
        address payer,
        address user,
        uint8 mode,
        uint256 ethIn,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) internal returns (uint256 tokenIdUsed) {
        if (claimAmount == 0) revert Errors.AmountZero();
        // The tokens are pulled first, as published (enterWithClaim: AmountZero, config, pull, then
        // _enterAfterPrincipal's MinVeOutRequired and destination checks): a wallet short of allowance or
        // balance meets the token's own error whatever else is wrong with the entry.
        if (payer != address(this)) token.transferFrom(payer, address(this), claimAmount);
        if (minVeOut == 0) revert Errors.MinVeOutRequired();
        // The quoter applies the published destination rules (its reverts bubble up, as the published
        // FurnaceGuardHelper's do); a new lock gets the clamped duration. The principal is claimAmount.
        (uint256 principal, uint256 bonus, uint256 veOut,) =
            quoter.quoteEnterWithClaim(user, claimAmount, targetTokenId, durationSeconds, createAutoMax);
        if (bonus > 0) token.mint(address(this), bonus);
        // As published, a failure of the NFT itself (TooManyVeNFTs at create, below 1e18 at a top-up) surfaces
        // as InvariantViolation: the published Furnace reaches the NFT through a helper's delegatecall and
        // replaces its revert data. createAutoMax is ignored for a top-up.
        if (targetTokenId == 0) {
            try ve.createLockFor(user, principal + bonus, LockMath.clampDuration(durationSeconds), createAutoMax) returns (
                uint256 id
            ) {
                tokenIdUsed = id;
            } catch {
                revert Errors.InvariantViolation();
            }
        } else {
            try ve.addToLockFor(user, targetTokenId, principal + bonus) {
                tokenIdUsed = targetTokenId;
            } catch {
                revert Errors.InvariantViolation();
            }
        }
        // Checked after the lock, as published (the transaction reverts as a whole all the same).
        if (veOut < minVeOut) revert Errors.MinVeOutNotMet();
        emit FurnaceEnter(user, mode, ethIn, principal, bonus, tokenIdUsed);
    }
}
