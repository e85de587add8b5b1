import { index, onchainTable } from "ponder";

/**
 * One row per VeLockNFT token id, following the rules of protocol.md §2 (indexer/rules.ts). A burned lock
 * (merged away or unlocked) keeps its row with owner null, amount/lockEnd 0, autoMax and listed false and burned
 * true — exactly what getLockInfo / ownerOf say on chain — so it can never appear in a user's lock list.
 */
export const lock = onchainTable(
  "lock",
  (t) => ({
    tokenId: t.bigint().primaryKey(),
    owner: t.hex(),
    amount: t.bigint().notNull(),
    lockEnd: t.bigint().notNull(),
    autoMax: t.boolean().notNull(),
    /** On the protocol's market (getLockInfo's fourth value): a listed lock is frozen (protocol.md §8). */
    listed: t.boolean().notNull(),
    burned: t.boolean().notNull(),
    createdBlock: t.bigint().notNull(),
    createdTime: t.bigint().notNull(),
    updatedBlock: t.bigint().notNull(),
    updatedTime: t.bigint().notNull(),
  }),
  // "Live locks of an owner, by token id" is an index range scan: burned rows have no owner, so an owner's
  // entries are at most its 32 live locks, already in token-id order.
  (table) => ({ ownerTokenIdx: index("lock_owner_token_idx").on(table.owner, table.tokenId) }),
);

/**
 * Immutable history: one row per lifecycle event (mints and burns belong to create / merge / unlock), each with
 * the state of its lock right after it (owner, lockAmount, lockEnd, autoMax, listed, burned). So the state of
 * every lock at a block B is its newest row at or before B — except a lock merged away, whose burn is the merge
 * row of the lock it went into (from_token_id): api/index/ reads both with one rule.
 */
export const lockEvent = onchainTable(
  "lock_event",
  (t) => ({
    id: t.text().primaryKey(),
    kind: t.text().notNull(),
    tokenId: t.bigint().notNull(),
    /** The event's user: the owner acting (for a sell-back: the seller). Not `user`: a reserved word in SQL. */
    account: t.hex().notNull(),
    /** The event's own amount: created, added, moved in or returned; null for the others. */
    amount: t.bigint(),
    lockEnd: t.bigint().notNull(),
    autoMax: t.boolean().notNull(),
    fromTokenId: t.bigint(),
    /** A sell-back's receiver (the Furnace). */
    recipient: t.hex(),
    /** The lock's owner after the event; null once burned. */
    owner: t.hex(),
    /** The lock's amount after the event (0 once burned). */
    lockAmount: t.bigint().notNull(),
    listed: t.boolean().notNull(),
    burned: t.boolean().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTime: t.bigint().notNull(),
    txHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({
    // A lock's history and its state at any block: newest first within one token. It also carries the state
    // columns, so every lock's state at a past block (its newest row at or before it: DISTINCT ON token_id) is one
    // ordered index-only scan, no sort and no heap visit (api/read/atBlock.ts; bench/index-api.ts measured the
    // ve ranking half way back 1.6× the head with the narrow index, sorting every row). Ponder's index builder has
    // no INCLUDE, so the state columns are trailing keys; NULLS FIRST is what a plain `DESC` in a query means.
    tokenStateIdx: index("lock_event_token_state_idx").on(
      table.tokenId,
      table.blockNumber.desc().nullsFirst(),
      table.logIndex.desc().nullsFirst(),
      table.owner,
      table.lockAmount,
      table.lockEnd,
      table.autoMax,
      table.burned,
    ),
    // The burn of a lock merged away is the merge row of the lock it went into.
    fromTokenIdx: index("lock_event_from_token_idx").on(table.fromTokenId, table.blockNumber),
    // An account's history: the events it acted in, and the locks it received (a sell-back's Furnace).
    accountIdx: index("lock_event_account_idx").on(table.account, table.blockNumber, table.logIndex),
    recipientIdx: index("lock_event_recipient_idx").on(table.recipient, table.blockNumber, table.logIndex),
    // A block's timestamp when the index holds an event in it (time travel without a node round trip).
    blockIdx: index("lock_event_block_idx").on(table.blockNumber),
  }),
);
