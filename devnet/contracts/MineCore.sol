// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";

/// @notice Devnet stand-in for the published MineCore: models only what the official leaderboards read (docs/protocol.md
/// §9). One king at a time; anyone takes the throne by paying the current price. A takeover finalizes the reign it
/// ends (ReignFinalized, its king paid 90 % of the price) and starts the next one (Takeover). The token a reign
/// "mines" is a fixed rate per second of the reign, reported in ReignFinalized and not minted. Left out: the
/// genesis accrual, price decay, the mining schedule, the market, pausing.
contract MineCore {
    /// Token mined per second of a reign (18 decimals): reported, never minted (the devnet supply stays fixed).
    uint256 public constant CLAIM_PER_SECOND = 1e16;
    /// Each takeover raises the price by 10 %; the first costs START_PRICE.
    uint256 public constant START_PRICE = 0.01 ether;

    event Takeover(
        uint256 indexed reignId,
        address indexed previousKing,
        address indexed newKing,
        uint256 pricePaid,
        uint256 referencePrice,
        uint256 timestamp
    );
    event ReignFinalized(
        uint256 indexed reignId,
        address indexed king,
        uint256 startTime,
        uint256 endTime,
        uint256 totalClaimMined,
        uint256 totalEthToKing
    );

    /// The reign in progress (0 before the first takeover).
    uint256 public reignId;
    address public king;
    uint256 public reignStart;
    uint256 public price = START_PRICE;

    /// @notice Takes the throne at the current price; whatever is sent above it is refunded, so pricePaid is the
    /// price, never the transaction's value. Reverts PriceExceeded when the price is above maxPrice.
    function takeover(uint256 maxPrice) external payable {
        uint256 paid = price;
        if (paid > maxPrice) revert Errors.PriceExceeded();
        if (msg.value < paid) revert Errors.InsufficientEthBalance();
        address previous = king;
        if (previous != address(0)) {
            uint256 toKing = (paid * 9) / 10;
            emit ReignFinalized(
                reignId, previous, reignStart, block.timestamp, (block.timestamp - reignStart) * CLAIM_PER_SECOND, toKing
            );
            _send(previous, toKing);
        }
        reignId += 1;
        king = msg.sender;
        reignStart = block.timestamp;
        price = paid + paid / 10;
        emit Takeover(reignId, previous, msg.sender, paid, paid, block.timestamp);
        if (msg.value > paid) _send(msg.sender, msg.value - paid);
    }

    function _send(address to, uint256 amount) internal {
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert Errors.EthTransferFailed();
    }
}
