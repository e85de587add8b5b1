// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IDevToken {
    function approve(address spender, uint256 amount) external returns (bool);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function mint(address to, uint256 amount) external;
    function burn(uint256 amount) external;
}

interface IVeLockNFT {
    function createLockFor(address user, uint256 amount, uint256 duration, bool autoMax) external returns (uint256);
    function addToLockFor(address user, uint256 tokenId, uint256 amount) external;
    function getLockInfo(uint256 tokenId) external view returns (uint256 amount, uint256 lockEnd, bool autoMax, bool listed);
    function ownerOf(uint256 tokenId) external view returns (address);
    function balanceOf(address owner) external view returns (uint256);
    function extendLockToFor(address user, uint256 tokenId, uint256 newEnd) external;
    function mergeLocksFor(address user, uint256 fromTokenId, uint256 intoTokenId) external;
    function furnaceBurnAndWithdraw(uint256 tokenId, address to) external returns (uint256);
}

interface IFurnaceQuoter {
    function quoteEnterWithClaim(address user, uint256 claimIn, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax)
        external
        view
        returns (uint256 principalClaim, uint256 bonusClaim, uint256 veOut, uint256 routeTokenId);
}

interface IFurnace {
    function enterWithClaimFor(
        address user,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) external returns (uint256);
    function enterWithRoyaltyFor(
        address user,
        uint256 ethIn,
        uint256 claimAmount,
        uint256 targetTokenId,
        uint256 durationSeconds,
        bool createAutoMax,
        uint256 minVeOut
    ) external returns (uint256);
}

interface IShareholderRoyalties {
    function claimShareholderFor(address user, uint8 mode) external returns (uint256);
}

interface ILpStakingVault7D {
    function claimRewardsFor(address user, address to) external returns (uint256);
}
