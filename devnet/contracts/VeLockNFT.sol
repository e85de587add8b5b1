// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Errors} from "./Errors.sol";
import {IDevToken} from "./Interfaces.sol";
import {LockMath} from "./LockMath.sol";

/// @notice Vote-escrow lock NFT (published as VeClaimNFT "veCLAIM"). Behaves like the published Solidity where
/// this service reads, indexes or encodes (protocol.md §1, §2, §8):
/// - createLockFor / addToLockFor / extendLockToFor / mergeLocksFor accept only the Furnace (NotAuthorized);
/// - getLockInfo returns the effective end: now + 365 days for a live AutoMax lock;
/// - only the market role moves a lock, and only to the Furnace; owners cannot transfer or approve;
/// - the market lists/unlists (only MetadataUpdate); a listed lock is frozen (LockListedOrFrozen);
/// - the Furnace burns a sold-back lock with furnaceBurnAndWithdraw; a delegate unlocks with unlockExpiredForUser;
/// - every revert is a name of the published Errors library (ownerOf of a burned id: ERC-721's nonexistent token).
/// There is deliberately no public enumeration of a user's token ids: that is the indexer's job.
contract VeLockNFT {
    struct Lock {
        uint256 amount;
        uint256 lockEnd; // the stored end; for AutoMax getLockInfo reports now + 365 days instead
        uint256 start;
        bool autoMax;
        bool listed;
    }

    string public constant name = "Vote-escrowed Asset";
    string public constant symbol = "veASSET";

    IDevToken public immutable token;
    address public immutable furnace;
    /// The market role (the published MineMarket): lists locks and moves sold ones to the Furnace.
    address public immutable market;

    uint256 public nextTokenId = 1;
    uint256 public totalLockedClaim;

    mapping(uint256 => Lock) internal _locks;
    mapping(uint256 => address) internal _owners;
    // Private per-owner index, only so veBalanceOf and balanceOf can be computed on-chain.
    mapping(address => uint256[]) internal _owned;
    mapping(uint256 => uint256) internal _ownedIndex;
    /// Devnet stand-in for the published delegation sessions: user → delegate → session end (unix seconds).
    mapping(address => mapping(address => uint256)) public delegationSessionEnd;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event LockCreated(address indexed user, uint256 indexed tokenId, uint256 amount, uint256 lockEnd, bool autoMax);
    event LockAmountIncreased(address indexed user, uint256 indexed tokenId, uint256 amountAdded);
    event LockExtended(address indexed user, uint256 indexed tokenId, uint256 oldEnd, uint256 newEnd);
    event LockMerged(address indexed user, uint256 indexed fromTokenId, uint256 indexed intoTokenId, uint256 amountMoved);
    event LockUnlocked(address indexed user, uint256 indexed tokenId, uint256 amountReturned);
    event AutoMaxSet(address indexed user, uint256 indexed tokenId, bool autoMax);
    /// ERC-4906.
    event MetadataUpdate(uint256 _tokenId);
    /// As published (Events.sol); actionType 32 = VE_UNLOCK_EXPIRED_FOR, permsUsed 1 << 14 = P_VE_UNLOCK_EXPIRED_FOR.
    event DelegationSessionUsed(
        address indexed user,
        address indexed delegate,
        uint8 indexed actionType,
        uint256 permsUsed,
        uint256 refId,
        uint256 timestamp
    );

    uint8 internal constant VE_UNLOCK_EXPIRED_FOR = 32;
    uint256 internal constant P_VE_UNLOCK_EXPIRED_FOR = 1 << 14;

    /// ERC-721's "nonexistent token" (OpenZeppelin's name): EIP-721 requires ownerOf to throw for a burned id.
    error ERC721NonexistentToken(uint256 tokenId);

    constructor(IDevToken token_, address furnace_, address market_) {
        token = token_;
        furnace = furnace_;
        market = market_;
    }

    // ---------------------------------------------------------------- Furnace-only mutators

    modifier onlyFurnace() {
        if (msg.sender != furnace) revert Errors.NotAuthorized();
        _;
    }

    function createLockFor(address user, uint256 amount, uint256 duration, bool autoMax)
        external
        onlyFurnace
        returns (uint256 tokenId)
    {
        if (user == address(0)) revert Errors.ZeroAddress();
        if (amount < LockMath.MIN_LOCK_AMOUNT) revert Errors.MinLockAmountNotMet();
        if (duration < LockMath.MIN_LOCK_DURATION || duration > LockMath.MAX_LOCK_DURATION) revert Errors.InvalidDuration();
        if (autoMax && duration != LockMath.MAX_LOCK_DURATION) revert Errors.AutoMaxMismatch();
        if (_owned[user].length >= LockMath.MAX_LOCKS_PER_USER) revert Errors.TooManyVeNFTs();
        _pull(amount);

        tokenId = nextTokenId++;
        uint256 lockEnd = block.timestamp + duration;
        _locks[tokenId] = Lock({amount: amount, lockEnd: lockEnd, start: block.timestamp, autoMax: autoMax, listed: false});
        totalLockedClaim += amount;
        _mint(user, tokenId);
        emit LockCreated(user, tokenId, amount, lockEnd, autoMax);
    }

    function addToLockFor(address user, uint256 tokenId, uint256 amount) external onlyFurnace {
        if (amount < LockMath.MIN_TOPUP_AMOUNT) revert Errors.AmountTooSmall();
        Lock storage l = _usableLock(user, tokenId);
        _pull(amount);
        l.amount += amount;
        totalLockedClaim += amount;
        // AutoMax: the end silently moves to now + 365d; the event does not carry it (protocol.md §2).
        if (l.autoMax) l.lockEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        emit LockAmountIncreased(user, tokenId, amount);
    }

    function extendLockToFor(address user, uint256 tokenId, uint256 newEnd) external onlyFurnace {
        Lock storage l = _usableLock(user, tokenId);
        uint256 oldEnd = l.lockEnd;
        uint256 maxEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        uint256 actualEnd;
        if (l.autoMax) {
            actualEnd = maxEnd; // newEnd ignored on AutoMax; the event carries the end actually set
        } else {
            if (newEnd <= oldEnd || newEnd > maxEnd) revert Errors.InvalidDuration();
            actualEnd = newEnd;
        }
        l.lockEnd = actualEnd;
        emit LockExtended(user, tokenId, oldEnd, actualEnd);
    }

    /// @dev Both locks must be owned by `user`, unlisted and unexpired (an expired lock can only be unlocked).
    function mergeLocksFor(address user, uint256 fromTokenId, uint256 intoTokenId) external onlyFurnace {
        if (fromTokenId == intoTokenId) revert Errors.InvariantViolation();
        Lock memory from = _usableLock(user, fromTokenId);
        Lock storage into = _usableLock(user, intoTokenId);

        delete _locks[fromTokenId];
        _burn(fromTokenId);

        into.amount += from.amount;
        into.autoMax = into.autoMax || from.autoMax;
        into.lockEnd = into.autoMax
            ? block.timestamp + LockMath.MAX_LOCK_DURATION
            : (from.lockEnd > into.lockEnd ? from.lockEnd : into.lockEnd);
        // totalLockedClaim is unchanged: the amount only moves between two live locks.
        emit LockMerged(user, fromTokenId, intoTokenId, from.amount);
    }

    // ---------------------------------------------------------------- owner actions

    /// @dev false on a plain lock is a silent no-op (no event). true on an AutoMax lock refreshes the end to
    /// now + 365d (AutoMaxSet only); a real switch either way sets now + 365d, AutoMaxSet then MetadataUpdate.
    function setAutoMax(uint256 tokenId, bool enabled) external {
        if (_owners[tokenId] != msg.sender || msg.sender == address(0)) revert Errors.NotAuthorized();
        Lock storage l = _locks[tokenId];
        if (!enabled && !l.autoMax) return;
        l = _usableLock(msg.sender, tokenId);
        bool switched = l.autoMax != enabled;
        l.autoMax = enabled;
        l.lockEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        emit AutoMaxSet(msg.sender, tokenId, enabled);
        if (switched) emit MetadataUpdate(tokenId);
    }

    function unlock(uint256 tokenId) external {
        _unlockExpired(msg.sender, tokenId);
    }

    /// @notice A delegate with an open session unlocks an expired lock for `user`; the principal goes to `user`.
    function unlockExpiredForUser(address user, uint256 tokenId) external {
        if (delegationSessionEnd[user][msg.sender] < block.timestamp) revert Errors.NotAuthorized();
        _unlockExpired(user, tokenId);
        emit DelegationSessionUsed(
            user, msg.sender, VE_UNLOCK_EXPIRED_FOR, P_VE_UNLOCK_EXPIRED_FOR, tokenId, block.timestamp
        );
    }

    /// @notice Devnet stand-in for the published delegation session set-up: `delegate` may act until `end`.
    function openDelegationSession(address delegate, uint256 end) external {
        if (delegate == address(0)) revert Errors.ZeroAddress();
        delegationSessionEnd[msg.sender][delegate] = end;
    }

    // ---------------------------------------------------------------- Furnace and market

    /// @notice The Furnace burns a lock it holds (a sold-back one) and sends the principal to `to`:
    /// Transfer(Furnace → 0, id) then LockUnlocked(Furnace, id, amount).
    function furnaceBurnAndWithdraw(uint256 tokenId, address to) external onlyFurnace returns (uint256 amount) {
        if (_owners[tokenId] != furnace) revert Errors.NotAuthorized();
        if (to == address(0)) revert Errors.ZeroAddress();
        amount = _locks[tokenId].amount;
        _release(furnace, to, tokenId, amount);
    }

    /// @notice The market lists or delists a lock; a listed lock is frozen. Emits only MetadataUpdate.
    function setListed(uint256 tokenId, bool listed) external {
        if (msg.sender != market) revert Errors.OnlyMineMarket();
        if (_owners[tokenId] == address(0)) revert Errors.NotAuthorized();
        _locks[tokenId].listed = listed;
        emit MetadataUpdate(tokenId);
    }

    /// @dev The only transfer: the market moves a sold lock from its owner to the Furnace (sell-back). As published,
    /// a listed lock does not move (LockListedOrFrozen): the market delists it first (setListed false: MetadataUpdate).
    function transferFrom(address from, address to, uint256 tokenId) public {
        if (msg.sender != market) revert Errors.OnlyMineMarket();
        if (to != furnace) revert Errors.MarketMustTransferToFurnace();
        if (_owners[tokenId] != from || from == address(0)) revert Errors.NotAuthorized();
        if (_locks[tokenId].listed) revert Errors.LockListedOrFrozen();
        // As published: the 32-lock cap holds on every receive path, the Furnace's custody of sold locks included.
        if (_owned[to].length >= LockMath.MAX_LOCKS_PER_USER) revert Errors.TooManyVeNFTs();
        _removeFromOwner(from, tokenId);
        _addToOwner(to, tokenId);
        emit Transfer(from, to, tokenId);
    }

    function safeTransferFrom(address from, address to, uint256 tokenId) external {
        transferFrom(from, to, tokenId);
    }

    function safeTransferFrom(address from, address to, uint256 tokenId, bytes calldata) external {
        transferFrom(from, to, tokenId);
    }

    function approve(address, uint256) external pure {
        revert Errors.TransfersRestricted();
    }

    function setApprovalForAll(address, bool) external pure {
        revert Errors.TransfersRestricted();
    }

    function getApproved(uint256) external pure returns (address) {
        return address(0);
    }

    function isApprovedForAll(address, address) external pure returns (bool) {
        return false;
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        // ERC-721, ERC-165, ERC-4906
        return interfaceId == 0x80ac58cd || interfaceId == 0x01ffc9a7 || interfaceId == 0x49064906;
    }

    // ---------------------------------------------------------------- views

    function ownerOf(uint256 tokenId) external view returns (address owner) {
        owner = _owners[tokenId];
        if (owner == address(0)) revert ERC721NonexistentToken(tokenId);
    }

    /// @notice Live lock count of `owner` (burned and sold-back locks are not counted).
    function balanceOf(address owner) external view returns (uint256) {
        return _owned[owner].length;
    }

    /// @notice The effective lock: a live AutoMax lock always ends 365 days after the block read (protocol.md §8).
    function getLockInfo(uint256 tokenId) external view returns (uint256 amount, uint256 lockEnd, bool autoMax, bool listed) {
        Lock storage l = _locks[tokenId];
        lockEnd = (l.autoMax && l.amount != 0) ? block.timestamp + LockMath.MAX_LOCK_DURATION : l.lockEnd;
        return (l.amount, lockEnd, l.autoMax, l.listed);
    }

    /// @notice Devnet extra: the end as stored (what the events imply and the index holds).
    function storedLockEnd(uint256 tokenId) external view returns (uint256) {
        return _locks[tokenId].lockEnd;
    }

    function lockStartOf(uint256 tokenId) external view returns (uint256) {
        return _locks[tokenId].start;
    }

    function veBalanceOf(address user) external view returns (uint256 total) {
        uint256[] storage ids = _owned[user];
        for (uint256 i = 0; i < ids.length; i++) {
            Lock storage l = _locks[ids[i]];
            total += LockMath.veOf(l.amount, l.lockEnd, l.autoMax, block.timestamp);
        }
    }

    /// @notice Devnet extra: ve of one lock now.
    function veOfToken(uint256 tokenId) external view returns (uint256) {
        Lock storage l = _locks[tokenId];
        return LockMath.veOf(l.amount, l.lockEnd, l.autoMax, block.timestamp);
    }

    // ---------------------------------------------------------------- internals

    /// @dev A lock `user` owns, not listed, not expired (an AutoMax lock never expires).
    function _usableLock(address user, uint256 tokenId) internal view returns (Lock storage l) {
        if (_owners[tokenId] != user || user == address(0)) revert Errors.NotAuthorized();
        l = _locks[tokenId];
        if (l.listed) revert Errors.LockListedOrFrozen();
        if (!l.autoMax && l.lockEnd <= block.timestamp) revert Errors.LockExpired();
    }

    /// @dev unlock's rules: the owner's, unlisted, not AutoMax, expired (InvalidDuration otherwise, as published).
    function _unlockExpired(address user, uint256 tokenId) internal {
        if (_owners[tokenId] != user || user == address(0)) revert Errors.NotAuthorized();
        Lock memory l = _locks[tokenId];
        if (l.listed) revert Errors.LockListedOrFrozen();
        if (l.autoMax) revert Errors.InvalidDuration();
        if (l.lockEnd > block.timestamp) revert Errors.InvalidDuration();
        _release(user, user, tokenId, l.amount);
    }

    function _pull(uint256 amount) internal {
        if (!token.transferFrom(msg.sender, address(this), amount)) revert Errors.InsufficientTokenAllowance();
    }

    function _release(address owner, address to, uint256 tokenId, uint256 amount) internal {
        delete _locks[tokenId];
        totalLockedClaim -= amount;
        _burn(tokenId);
        emit LockUnlocked(owner, tokenId, amount);
        if (!token.transfer(to, amount)) revert Errors.InvariantViolation();
    }

    function _mint(address to, uint256 tokenId) internal {
        _addToOwner(to, tokenId);
        emit Transfer(address(0), to, tokenId);
    }

    function _burn(uint256 tokenId) internal {
        address owner = _owners[tokenId];
        _removeFromOwner(owner, tokenId);
        emit Transfer(owner, address(0), tokenId);
    }

    function _addToOwner(address to, uint256 tokenId) internal {
        _owners[tokenId] = to;
        _ownedIndex[tokenId] = _owned[to].length;
        _owned[to].push(tokenId);
    }

    function _removeFromOwner(address from, uint256 tokenId) internal {
        uint256[] storage ids = _owned[from];
        uint256 idx = _ownedIndex[tokenId];
        uint256 last = ids[ids.length - 1];
        ids[idx] = last;
        _ownedIndex[last] = idx;
        ids.pop();
        delete _ownedIndex[tokenId];
        delete _owners[tokenId];
    }
}
