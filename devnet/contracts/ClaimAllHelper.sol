// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";
import {IDevToken, IFurnace, ILpStakingVault7D, IShareholderRoyalties} from "./Interfaces.sol";

/// @notice Collects royalties and LP rewards of msg.sender in one call. Mode 0 pays the ETH and the reward tokens
/// to the user; mode 1 gathers the swapped royalties and the rewards here and makes ONE Furnace entry for the
/// user with the given lock arguments. Nothing to collect is a no-op.
contract ClaimAllHelper {
    IDevToken public immutable token;
    IShareholderRoyalties public immutable royalties;
    ILpStakingVault7D public immutable vault;
    IFurnace public immutable furnace;

    event CollectedAll(address indexed user, uint8 mode, uint256 royaltiesPaid, uint256 rewardsPaid, uint256 tokenIdUsed);


    constructor(IDevToken token_, IShareholderRoyalties royalties_, ILpStakingVault7D vault_, IFurnace furnace_) {
        token = token_;
        royalties = royalties_;
        vault = vault_;
        furnace = furnace_;
        token_.approve(address(furnace_), type(uint256).max);
    }

    function claimAll(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)
        external
    {
        if (mode > 1) revert Errors.InvalidMode();
        if (mode == 1 && minVeOut == 0) revert Errors.MinVeOutRequired();
        if (mode == 0) {
            uint256 eth = royalties.claimShareholderFor(msg.sender, 0);
            uint256 rewards = vault.claimRewardsFor(msg.sender, msg.sender);
            emit CollectedAll(msg.sender, 0, eth, rewards, 0);
            return;
        }
        uint256 fromRoyalties = royalties.claimShareholderFor(msg.sender, 1);
        uint256 fromRewards = vault.claimRewardsFor(msg.sender, address(this));
        uint256 total = fromRoyalties + fromRewards;
        if (total == 0) return;
        uint256 tokenId = furnace.enterWithClaimFor(msg.sender, total, targetTokenId, durationSeconds, createAutoMax, minVeOut);
        emit CollectedAll(msg.sender, 1, fromRoyalties, fromRewards, tokenId);
    }
}
