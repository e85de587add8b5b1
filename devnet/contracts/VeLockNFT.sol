// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IDevToken} from "./Interfaces.sol";
import {LockMath} from "./LockMath.sol";

/// @notice Vote-escrow lock NFT (published as VeClaimNFT "veCLAIM"), following protocol.md §1–2 and §7:
/// - the *For mutators accept the Furnace or the user acting for themself (devnet divergence, §7);
/// - tokens are pulled from msg.sender, so a user acting for themself approves this contract;
/// - the only transfer is user → Furnace (sell-back); the Furnace later burns the lock;
/// - burned tokens: ownerOf reverts (like OpenZeppelin), getLockInfo reads all zeros.
/// There is deliberately no public enumeration of a user's token ids: that is the indexer's job.
contract VeLockNFT {
    struct Lock {
        uint256 amount;
        uint256 lockEnd;
        uint256 start;
        bool autoMax;
        bool listed;
    }

    string public constant name = "Vote-escrowed Asset";
    string public constant symbol = "veASSET";

    IDevToken public immutable token;
    address public immutable furnace;

    uint256 public nextTokenId = 1;
    uint256 public totalLockedClaim;

    mapping(uint256 => Lock) internal _locks;
    mapping(uint256 => address) internal _owners;
    // Private per-owner index, only so veBalanceOf and balanceOf can be computed on-chain.
    mapping(address => uint256[]) internal _owned;
    mapping(uint256 => uint256) internal _ownedIndex;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event LockCreated(address indexed user, uint256 indexed tokenId, uint256 amount, uint256 lockEnd, bool autoMax);
    event LockAmountIncreased(address indexed user, uint256 indexed tokenId, uint256 amountAdded);
    event LockExtended(address indexed user, uint256 indexed tokenId, uint256 oldEnd, uint256 newEnd);
    event LockMerged(address indexed user, uint256 indexed fromTokenId, uint256 indexed intoTokenId, uint256 amountMoved);
    event LockUnlocked(address indexed user, uint256 indexed tokenId, uint256 amountReturned);
    event AutoMaxSet(address indexed user, uint256 indexed tokenId, bool autoMax);

    error MinLockAmountNotMet();
    error InvalidDuration();
    error TooManyVeNFTs();
    error NotAuthorized();
    error TransfersRestricted();
    error LockExpired();
    error LockNotExpired();
    error LockListed();
    error NotLockOwner();
    error InvalidLockEnd();
    error AutoMaxLock();
    /// Devnet extras.
    error ERC721NonexistentToken(uint256 tokenId);
    error SameLock();
    error TokenTransferFailed();

    constructor(IDevToken token_, address furnace_) {
        token = token_;
        furnace = furnace_;
    }

    // ---------------------------------------------------------------- mutators (Furnace or self)

    modifier onlyFurnaceOrSelf(address user) {
        if (msg.sender != furnace && msg.sender != user) revert NotAuthorized();
        _;
    }

    function createLockFor(address user, uint256 amount, uint256 duration, bool autoMax)
        external
        onlyFurnaceOrSelf(user)
        returns (uint256 tokenId)
    {
        if (amount < LockMath.MIN_LOCK_AMOUNT) revert MinLockAmountNotMet();
        if (duration < LockMath.MIN_LOCK_DURATION || duration > LockMath.MAX_LOCK_DURATION) revert InvalidDuration();
        if (autoMax && duration != LockMath.MAX_LOCK_DURATION) revert InvalidDuration();
        if (_owned[user].length >= LockMath.MAX_LOCKS_PER_USER) revert TooManyVeNFTs();
        _pull(amount);

        tokenId = nextTokenId++;
        uint256 lockEnd = block.timestamp + duration;
        _locks[tokenId] = Lock({amount: amount, lockEnd: lockEnd, start: block.timestamp, autoMax: autoMax, listed: false});
        totalLockedClaim += amount;
        _mint(user, tokenId);
        emit LockCreated(user, tokenId, amount, lockEnd, autoMax);
    }

    function addToLockFor(address user, uint256 tokenId, uint256 amount) external onlyFurnaceOrSelf(user) {
        if (amount < LockMath.MIN_TOPUP_AMOUNT) revert MinLockAmountNotMet();
        Lock storage l = _usableLock(user, tokenId);
        _pull(amount);
        l.amount += amount;
        totalLockedClaim += amount;
        // AutoMax: the end silently moves to now + 365d; the event does not carry it (protocol.md §2).
        if (l.autoMax) l.lockEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        emit LockAmountIncreased(user, tokenId, amount);
    }

    function extendLockToFor(address user, uint256 tokenId, uint256 newEnd) external onlyFurnaceOrSelf(user) {
        Lock storage l = _usableLock(user, tokenId);
        uint256 oldEnd = l.lockEnd;
        uint256 maxEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        uint256 actualEnd;
        if (l.autoMax) {
            actualEnd = maxEnd; // newEnd ignored on AutoMax; the event carries the end actually set
        } else {
            if (newEnd <= oldEnd || newEnd > maxEnd) revert InvalidLockEnd();
            actualEnd = newEnd;
        }
        l.lockEnd = actualEnd;
        emit LockExtended(user, tokenId, oldEnd, actualEnd);
    }

    /// @dev Both locks must be owned by `user`, unlisted and unexpired (choice: an expired lock can only be unlocked).
    function mergeLocksFor(address user, uint256 fromTokenId, uint256 intoTokenId) external onlyFurnaceOrSelf(user) {
        if (fromTokenId == intoTokenId) revert SameLock();
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

    /// @dev Either direction (and a true→true refresh) sets lockEnd = now + 365d. An expired plain lock can't be revived.
    function setAutoMax(uint256 tokenId, bool enabled) external {
        Lock storage l = _usableLock(msg.sender, tokenId);
        l.autoMax = enabled;
        l.lockEnd = block.timestamp + LockMath.MAX_LOCK_DURATION;
        emit AutoMaxSet(msg.sender, tokenId, enabled);
    }

    function unlock(uint256 tokenId) external {
        if (_owners[tokenId] != msg.sender) revert NotLockOwner();
        Lock memory l = _locks[tokenId];
        if (l.listed) revert LockListed();
        if (l.autoMax) revert AutoMaxLock();
        if (l.lockEnd > block.timestamp) revert LockNotExpired();
        _release(msg.sender, tokenId, l.amount);
    }

    /// @notice Devnet only: the Furnace burns a lock that was sold back to it; the principal goes to the Furnace.
    /// Emits Transfer(Furnace → 0) then LockUnlocked(Furnace, id, amount), as protocol.md §2 says.
    function burnFromFurnace(uint256 tokenId) external returns (uint256 amount) {
        if (msg.sender != furnace) revert NotAuthorized();
        if (_owners[tokenId] != furnace) revert NotLockOwner();
        amount = _locks[tokenId].amount;
        _release(furnace, tokenId, amount);
    }

    /// @notice Devnet only: the owner marks a lock as listed on a marketplace, which freezes it (LockListed).
    function setListed(uint256 tokenId, bool listed) external {
        if (_owners[tokenId] != msg.sender) revert NotLockOwner();
        _locks[tokenId].listed = listed;
    }

    // ---------------------------------------------------------------- restricted ERC-721 surface

    /// @dev The only transfer: the owner sells the lock back to the Furnace.
    function transferFrom(address from, address to, uint256 tokenId) public {
        if (to != furnace || msg.sender != from || _owners[tokenId] != from || from == address(0)) revert TransfersRestricted();
        if (_locks[tokenId].listed) revert LockListed();
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
        revert TransfersRestricted();
    }

    function setApprovalForAll(address, bool) external pure {
        revert TransfersRestricted();
    }

    function getApproved(uint256) external pure returns (address) {
        return address(0);
    }

    function isApprovedForAll(address, address) external pure returns (bool) {
        return false;
    }

    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x80ac58cd || interfaceId == 0x01ffc9a7; // ERC-721, ERC-165
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

    function getLockInfo(uint256 tokenId) external view returns (uint256 amount, uint256 lockEnd, bool autoMax, bool listed) {
        Lock storage l = _locks[tokenId];
        return (l.amount, l.lockEnd, l.autoMax, l.listed);
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
        if (_owners[tokenId] != user || user == address(0)) revert NotLockOwner();
        l = _locks[tokenId];
        if (l.listed) revert LockListed();
        if (!l.autoMax && l.lockEnd <= block.timestamp) revert LockExpired();
    }

    function _pull(uint256 amount) internal {
        if (!token.transferFrom(msg.sender, address(this), amount)) revert TokenTransferFailed();
    }

    function _release(address owner, uint256 tokenId, uint256 amount) internal {
        delete _locks[tokenId];
        totalLockedClaim -= amount;
        _burn(tokenId);
        emit LockUnlocked(owner, tokenId, amount);
        if (!token.transfer(owner, amount)) revert TokenTransferFailed();
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
