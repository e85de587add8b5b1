/**
 * The VeLockNFT state rules of protocol.md §2 as pure functions: (current row, event, block) → next row.
 * The indexing functions in src/index.ts only load rows, call these and store the result, so every rule
 * is unit-tested without a chain (test/indexer/rules.test.ts) and proven against one (test/indexer/).
 */
import { type Address, zeroAddress } from "viem";
import type { lock } from "../ponder.schema";

/** MAX_LOCK_DURATION: an AutoMax lock's end is always refreshed to now + 365 days. */
export const MAX_LOCK_DURATION = 31_536_000n;

/** One row of the `lock` table, as ponder.schema.ts declares it; a burned lock keeps its row, zeroed, with no owner. */
export type LockRow = typeof lock.$inferSelect;

/** The block an event was emitted in: its number and unix time (seconds). */
export type BlockRef = { number: bigint; timestamp: bigint };

/** An event contradicts the indexed state: an event was missed or the start block is wrong. */
export class LockRuleError extends Error {
  override name = "LockRuleError";
}

const sameAddress = (a: Address | null, b: Address) => a !== null && a.toLowerCase() === b.toLowerCase();

function requireLive(row: LockRow, event: string, user?: Address): void {
  if (row.burned) throw new LockRuleError(`${event} on burned lock ${row.tokenId}`);
  if (user !== undefined && !sameAddress(row.owner, user)) {
    throw new LockRuleError(`${event} by ${user} on lock ${row.tokenId} owned by ${row.owner}`);
  }
}

type Changes = {
  owner?: Address | null;
  amount?: bigint;
  lockEnd?: bigint;
  autoMax?: boolean;
  listed?: boolean;
  burned?: boolean;
};

/**
 * The next row: `row` with `changes`, stamped with `block`. Built field by field rather than by spreading `row`:
 * inside Ponder `row` is a copy-on-write Proxy, and a spread walks its keys through traps on every event.
 */
const next = (row: LockRow, block: BlockRef, changes: Changes): LockRow => ({
  tokenId: row.tokenId,
  owner: changes.owner === undefined ? row.owner : changes.owner,
  amount: changes.amount ?? row.amount,
  lockEnd: changes.lockEnd ?? row.lockEnd,
  autoMax: changes.autoMax ?? row.autoMax,
  listed: changes.listed ?? row.listed,
  burned: changes.burned ?? row.burned,
  createdBlock: row.createdBlock,
  createdTime: row.createdTime,
  updatedBlock: block.number,
  updatedTime: block.timestamp,
});

/** The chain's view of a burned token: getLockInfo reads all zeros and ownerOf reverts. */
const burnedAt = (row: LockRow, block: BlockRef): LockRow =>
  next(row, block, { owner: null, amount: 0n, lockEnd: 0n, autoMax: false, listed: false, burned: true });

/** `LockCreated(user, id, amount, lockEnd, autoMax)`: the row is born here (the mint Transfer before it is a no-op). */
export function lockCreated(
  args: { user: Address; tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean },
  block: BlockRef,
): LockRow {
  return {
    tokenId: args.tokenId,
    owner: args.user,
    amount: args.amount,
    lockEnd: args.lockEnd,
    autoMax: args.autoMax,
    listed: false,
    burned: false,
    createdBlock: block.number,
    createdTime: block.timestamp,
    updatedBlock: block.number,
    updatedTime: block.timestamp,
  };
}

/** `LockAmountIncreased`: amount grows; on an AutoMax lock lockEnd silently becomes now + 365 days (not in the event). */
export function lockAmountIncreased(
  row: LockRow,
  args: { user: Address; amountAdded: bigint },
  block: BlockRef,
): LockRow {
  requireLive(row, "LockAmountIncreased", args.user);
  return next(row, block, {
    amount: row.amount + args.amountAdded,
    lockEnd: row.autoMax ? block.timestamp + MAX_LOCK_DURATION : row.lockEnd,
  });
}

/** `LockExtended(user, id, oldEnd, newEnd)`: the event carries the end actually set (on AutoMax: now + 365 days). */
export function lockExtended(
  row: LockRow,
  args: { user: Address; oldEnd: bigint; newEnd: bigint },
  block: BlockRef,
): LockRow {
  requireLive(row, "LockExtended", args.user);
  if (args.oldEnd !== row.lockEnd) {
    throw new LockRuleError(`LockExtended on lock ${row.tokenId}: oldEnd ${args.oldEnd} but indexed ${row.lockEnd}`);
  }
  return next(row, block, { lockEnd: args.newEnd });
}

/**
 * `LockMerged(user, from, into, amountMoved)`: `from` is burned (its Transfer to 0 came first and changed nothing);
 * `into` gets the amount, autoMax = from OR into, lockEnd = autoMax ? now + 365 days : max of both ends.
 */
export function lockMerged(
  from: LockRow,
  into: LockRow,
  args: { user: Address; amountMoved: bigint },
  block: BlockRef,
): { from: LockRow; into: LockRow } {
  requireLive(from, "LockMerged (from)", args.user);
  requireLive(into, "LockMerged (into)", args.user);
  if (from.tokenId === into.tokenId) throw new LockRuleError(`LockMerged of lock ${from.tokenId} into itself`);
  if (args.amountMoved !== from.amount) {
    throw new LockRuleError(
      `LockMerged from lock ${from.tokenId}: moved ${args.amountMoved} but indexed ${from.amount}`,
    );
  }
  const autoMax = from.autoMax || into.autoMax;
  // biome-ignore lint/complexity/useMathMinMax: bigints; Math.max would throw
  const later = from.lockEnd > into.lockEnd ? from.lockEnd : into.lockEnd;
  const lockEnd = autoMax ? block.timestamp + MAX_LOCK_DURATION : later;
  return {
    from: burnedAt(from, block),
    into: next(into, block, { amount: into.amount + args.amountMoved, autoMax, lockEnd }),
  };
}

/** `LockUnlocked(owner, id, amountReturned)`: the principal leaves, the token is burned (also ends a sell-back). */
export function lockUnlocked(row: LockRow, args: { user: Address; amountReturned: bigint }, block: BlockRef): LockRow {
  requireLive(row, "LockUnlocked", args.user);
  if (args.amountReturned !== row.amount) {
    throw new LockRuleError(
      `LockUnlocked of lock ${row.tokenId}: returned ${args.amountReturned} but indexed ${row.amount}`,
    );
  }
  return burnedAt(row, block);
}

/** `AutoMaxSet(user, id, autoMax)`: either direction, and a true→true refresh, set lockEnd = now + 365 days. */
export function autoMaxSet(row: LockRow, args: { user: Address; autoMax: boolean }, block: BlockRef): LockRow {
  requireLive(row, "AutoMaxSet", args.user);
  return next(row, block, { autoMax: args.autoMax, lockEnd: block.timestamp + MAX_LOCK_DURATION });
}

/** What a `Transfer` means for the lock row. */
export type TransferKind = "mint" | "burn" | "move";

export function transferKind(args: { from: Address; to: Address }): TransferKind {
  if (args.from === zeroAddress) return "mint";
  if (args.to === zeroAddress) return "burn";
  return "move";
}

/**
 * `Transfer(from, to, id)`. A mint precedes LockCreated, which creates the row; a burn precedes LockMerged or
 * LockUnlocked, which need the row intact and burn it. So only a move (the sell-back to the Furnace) changes
 * the row here: the owner becomes `to`, and the sale ends the listing (the contract clears it without an event).
 * Returns null when the row does not change.
 */
export function lockTransferred(
  row: LockRow | null,
  args: { from: Address; to: Address },
  block: BlockRef,
): LockRow | null {
  if (transferKind(args) !== "move") return null;
  if (row === null) throw new LockRuleError(`Transfer of an unknown lock from ${args.from} to ${args.to}`);
  requireLive(row, "Transfer", args.from);
  return next(row, block, { owner: args.to, listed: false });
}

/**
 * `MetadataUpdate(id)` (ERC-4906) with `listed`, getLockInfo's fourth value read at the event's block: the market
 * listed or delisted the lock (protocol.md §8). The event carries no flag and is also emitted by an AutoMax
 * switch, so the read is the truth; returns null when the flag did not change (or the lock is burned or unknown:
 * the event says nothing about a lock the index does not hold live).
 */
export function listingSet(row: LockRow | null, listed: boolean, block: BlockRef): LockRow | null {
  if (row === null || row.burned || row.listed === listed) return null;
  return next(row, block, { listed });
}

/** Kinds of the immutable `lock_event` history: one row per lifecycle event. */
export type LockEventKind =
  | "create"
  | "topup"
  | "extend"
  | "merge"
  | "unlock"
  | "automax"
  | "transfer"
  | "list"
  | "unlist";

export const LOCK_EVENT_KINDS: readonly LockEventKind[] = [
  "create",
  "topup",
  "extend",
  "merge",
  "unlock",
  "automax",
  "transfer",
  "list",
  "unlist",
];

/**
 * One row of `lock_event`. Mints and burns are not separate rows: they belong to create / merge / unlock. Each row
 * carries its lock's state right after the event, so the lock's state at any block is its newest row by then.
 */
export type LockEventRow = {
  /** `${txHash}-${logIndex}`: unique, and stable across re-indexing. */
  id: string;
  kind: LockEventKind;
  tokenId: bigint;
  /** The event's user: the owner acting (for a transfer: the sender). */
  account: Address;
  /** create: amount; topup: amount added; merge: amount moved; unlock: amount returned; else null. */
  amount: bigint | null;
  /** The lock's state right after the event (for unlock: zeros, no owner). */
  lockEnd: bigint;
  autoMax: boolean;
  owner: Address | null;
  lockAmount: bigint;
  listed: boolean;
  burned: boolean;
  /** merge: the burned source lock. */
  fromTokenId: bigint | null;
  /** transfer: the receiver (the Furnace on a sell-back). */
  recipient: Address | null;
  blockNumber: bigint;
  blockTime: bigint;
  txHash: `0x${string}`;
  logIndex: number;
};

export type EventOrigin = { block: BlockRef; txHash: `0x${string}`; logIndex: number };

/** The history row of an event, from the lock row it produced. */
export function lockEventRow(
  kind: LockEventKind,
  after: LockRow,
  origin: EventOrigin,
  detail: { account: Address; amount?: bigint; fromTokenId?: bigint; recipient?: Address },
): LockEventRow {
  return {
    id: `${origin.txHash}-${origin.logIndex}`,
    kind,
    tokenId: after.tokenId,
    account: detail.account,
    amount: detail.amount ?? null,
    lockEnd: after.lockEnd,
    autoMax: after.autoMax,
    owner: after.owner,
    lockAmount: after.amount,
    listed: after.listed,
    burned: after.burned,
    fromTokenId: detail.fromTokenId ?? null,
    recipient: detail.recipient ?? null,
    blockNumber: origin.block.number,
    blockTime: origin.block.timestamp,
    txHash: origin.txHash,
    logIndex: origin.logIndex,
  };
}
