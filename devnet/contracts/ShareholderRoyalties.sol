// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {DevSwap} from "./DevSwap.sol";
import {Errors} from "./Errors.sol";
import {IDevToken, IFurnace} from "./Interfaces.sol";

/// @notice ETH royalties. On the devnet the owner accrues ETH per user (`accrue`); mode 1 "swaps" at a fixed
/// rate by minting TOKENS_PER_ETH tokens per ETH (the ETH stays here) and locks them through the Furnace.
/// Collecting with nothing accrued is a no-op.
contract ShareholderRoyalties {
    uint256 public constant TOKENS_PER_ETH = DevSwap.TOKENS_PER_ETH;

    IDevToken public immutable token;
    IFurnace public immutable furnace;
    address public immutable claimAllHelper;
    address public immutable owner;

    mapping(address => uint256) public claimableEth;
    /// The gas forwarded with an ETH payment (mode 0): the published default (`ethPushGasCap`, settable there).
    uint256 public constant ethPushGasCap = 200_000;

    event RoyaltiesAccrued(address indexed user, uint256 amountEth);
    /// The published event (protocol.md §9): mode 0 paid in ETH, 1 locked through the Furnace.
    event ShareholderClaim(address indexed user, uint8 mode, uint256 amountEth);


    constructor(IDevToken token_, IFurnace furnace_, address claimAllHelper_) {
        token = token_;
        furnace = furnace_;
        claimAllHelper = claimAllHelper_;
        owner = msg.sender;
        token_.approve(address(furnace_), type(uint256).max);
    }

    /// @notice Devnet only: the owner credits `user` with msg.value of royalties.
    function accrue(address user) external payable {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        claimableEth[user] += msg.value;
        emit RoyaltiesAccrued(user, msg.value);
    }

    function claimShareholder(uint8 mode, uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut)
        external
    {
        if (mode > 1) revert Errors.InvalidMode();
        if (mode == 1 && minVeOut == 0) revert Errors.MinVeOutRequired();
        uint256 eth = claimableEth[msg.sender];
        if (eth == 0) return;
        claimableEth[msg.sender] = 0;
        if (mode == 0) {
            _sendEth(msg.sender, eth);
        } else {
            uint256 tokens = eth * TOKENS_PER_ETH;
            token.mint(address(this), tokens);
            furnace.enterWithRoyaltyFor(msg.sender, eth, tokens, targetTokenId, durationSeconds, createAutoMax, minVeOut);
        }
        emit ShareholderClaim(msg.sender, mode, eth);
    }

    /// @notice ClaimAllHelper only. Mode 0 pays the ETH to `user`; mode 1 mints the swapped tokens to the helper,
    /// which locks them together with the LP rewards. Returns the ETH paid (mode 0) or the tokens minted (mode 1).
    function claimShareholderFor(address user, uint8 mode) external returns (uint256) {
        if (msg.sender != claimAllHelper) revert Errors.NotAuthorized();
        if (mode > 1) revert Errors.InvalidMode();
        uint256 eth = claimableEth[user];
        if (eth == 0) return 0;
        claimableEth[user] = 0;
        emit ShareholderClaim(user, mode, eth);
        if (mode == 0) {
            _sendEth(user, eth);
            return eth;
        }
        uint256 tokens = eth * TOKENS_PER_ETH;
        token.mint(msg.sender, tokens);
        return tokens;
    }

    /// @dev As published (ShareholderRoyalties._callWithValueNoReturndata): at most `ethPushGasCap` gas goes with the
    /// ETH and no return data is copied, so a wallet whose receive() needs more fails (EthTransferFailed).
    function _sendEth(address to, uint256 amount) internal {
        uint256 cap = ethPushGasCap;
        bool ok;
        assembly {
            ok := call(cap, to, amount, 0, 0, 0, 0)
        }
        if (!ok) revert Errors.EthTransferFailed();
    }
}
