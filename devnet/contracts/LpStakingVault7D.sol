// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";
import {IDevToken, IFurnace} from "./Interfaces.sol";
import {LockMath} from "./LockMath.sol";

/// @notice LP staking with a 7-day unbond. Rewards are in AssetToken; on the devnet the owner credits them
/// (`accrueRewards`) and they are minted when paid. As on the published vault, `withdrawMatured` with nothing
/// matured, `claimRewards` and `claimRewardsAndLock` with nothing earned return without a transfer (no revert).
contract LpStakingVault7D {
    /// The published vault's own error (declared in the vault, not in the Errors library): a second
    /// claimRewardsAndLock within a day of the last one.
    error LockCooldown();

    uint256 public constant MIN_STAKE = 1e15;
    uint256 public constant UNBOND_PERIOD = 7 days;
    uint256 public constant MAX_OPEN_UNBONDS = 25;
    uint256 public constant COMPOUND_COOLDOWN = 1 days;

    struct Unbond {
        uint256 id;
        uint256 amount;
        uint256 unlockTime;
    }

    IDevToken public immutable lp;
    IDevToken public immutable token;
    IFurnace public immutable furnace;
    address public immutable claimAllHelper;
    address public immutable owner;

    uint256 public nextUnbondId = 1;
    uint256 public totalStaked;
    mapping(address => uint256) public stakedBalance;
    mapping(address => uint256) public earned;
    mapping(address => uint256) public lastCompoundAt;
    mapping(address => Unbond[]) internal _unbonds;

    event Staked(address indexed user, uint256 amount);
    event UnbondStarted(address indexed user, uint256 indexed unbondId, uint256 amount, uint256 unlockTime);
    event Withdrawn(address indexed user, uint256 amount, uint256 count);
    event RewardsAccrued(address indexed user, uint256 amount);
    event RewardsPaid(address indexed user, address indexed to, uint256 amount);
    event RewardsLocked(address indexed user, uint256 indexed tokenId, uint256 amount);

    constructor(IDevToken lp_, IDevToken token_, IFurnace furnace_, address claimAllHelper_) {
        lp = lp_;
        token = token_;
        furnace = furnace_;
        claimAllHelper = claimAllHelper_;
        owner = msg.sender;
        token_.approve(address(furnace_), type(uint256).max);
    }

    function lpToken() external view returns (address) {
        return address(lp);
    }

    function stake(uint256 amount) external {
        if (amount == 0) revert Errors.AmountZero();
        if (amount < MIN_STAKE) revert Errors.AmountTooSmall();
        lp.transferFrom(msg.sender, address(this), amount);
        stakedBalance[msg.sender] += amount;
        totalStaked += amount;
        emit Staked(msg.sender, amount);
    }

    function beginUnbond(uint256 amount) external {
        if (amount == 0) revert Errors.AmountZero();
        if (amount > stakedBalance[msg.sender]) revert Errors.InsufficientStake();
        Unbond[] storage list = _unbonds[msg.sender];
        if (list.length >= MAX_OPEN_UNBONDS) revert Errors.TooManyUnbonds();
        stakedBalance[msg.sender] -= amount;
        totalStaked -= amount;
        uint256 id = nextUnbondId++;
        uint256 unlockTime = block.timestamp + UNBOND_PERIOD;
        list.push(Unbond({id: id, amount: amount, unlockTime: unlockTime}));
        emit UnbondStarted(msg.sender, id, amount, unlockTime);
    }

    /// @dev Pays every matured unbond; the open ones keep their order.
    function withdrawMatured() external {
        Unbond[] storage list = _unbonds[msg.sender];
        uint256 total;
        uint256 paid;
        uint256 kept;
        uint256 n = list.length;
        for (uint256 i = 0; i < n; i++) {
            Unbond memory u = list[i];
            if (u.unlockTime <= block.timestamp) {
                total += u.amount;
                paid++;
            } else {
                list[kept++] = u;
            }
        }
        if (paid == 0) return; // nothing matured: no transfer, no event
        for (uint256 i = kept; i < n; i++) {
            list.pop();
        }
        lp.transfer(msg.sender, total);
        emit Withdrawn(msg.sender, total, paid);
    }

    function getUnbondCount(address user) external view returns (uint256) {
        return _unbonds[user].length;
    }

    function getUnbondByIndex(address user, uint256 index) external view returns (uint256 unbondId, uint256 amount, uint256 unlockTime) {
        Unbond[] storage list = _unbonds[user];
        if (index >= list.length) revert Errors.InvariantViolation();
        Unbond storage u = list[index];
        return (u.id, u.amount, u.unlockTime);
    }

    /// @notice Devnet only: the owner credits `user` with reward tokens (minted when paid).
    function accrueRewards(address user, uint256 amount) external {
        if (msg.sender != owner) revert Errors.NotAuthorized();
        earned[user] += amount;
        emit RewardsAccrued(user, amount);
    }

    function claimRewards() external {
        _payRewards(msg.sender, msg.sender);
    }

    /// @dev The published order: nothing earned returns quietly; then minVeOut > 0, a duration in [7d, 365d] for
    /// every target (a top-up too), AutoMax only for a new 365-day lock, one call a day (LockCooldown); the
    /// Furnace then applies its own rules to the target (FurnaceQuoter).
    function claimRewardsAndLock(uint256 targetTokenId, uint256 durationSeconds, bool createAutoMax, uint256 minVeOut) external {
        uint256 amount = earned[msg.sender];
        if (amount == 0) return;
        if (minVeOut == 0) revert Errors.MinVeOutRequired();
        if (durationSeconds < LockMath.MIN_LOCK_DURATION || durationSeconds > LockMath.MAX_LOCK_DURATION) {
            revert Errors.InvalidDuration();
        }
        if (createAutoMax) {
            if (targetTokenId != 0) revert Errors.AutoMaxMismatch();
            if (durationSeconds != LockMath.MAX_LOCK_DURATION) revert Errors.InvalidDuration();
        }
        if (block.timestamp < lastCompoundAt[msg.sender] + COMPOUND_COOLDOWN) revert LockCooldown();
        earned[msg.sender] = 0;
        lastCompoundAt[msg.sender] = block.timestamp;
        token.mint(address(this), amount);
        uint256 tokenId =
            furnace.enterWithClaimFor(msg.sender, amount, targetTokenId, durationSeconds, createAutoMax, minVeOut);
        emit RewardsLocked(msg.sender, tokenId, amount);
    }

    /// @notice ClaimAllHelper only: pays `user`'s rewards to `to` (the user in mode 0, the helper in mode 1).
    function claimRewardsFor(address user, address to) external returns (uint256) {
        if (msg.sender != claimAllHelper) revert Errors.NotAuthorized();
        return _payRewards(user, to);
    }

    function _payRewards(address user, address to) internal returns (uint256 amount) {
        amount = earned[user];
        if (amount == 0) return 0;
        earned[user] = 0;
        token.mint(to, amount);
        emit RewardsPaid(user, to, amount);
    }
}
