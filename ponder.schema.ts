import { index, onchainTable } from "ponder";

/**
 * One row per VeLockNFT token id, following the rules of protocol.md §2 (indexer/rules.ts). A burned lock
 * (merged away or unlocked) keeps its row with owner null, amount/lockEnd 0, autoMax false and burned true —
 * exactly what getLockInfo / ownerOf say on chain — so it can never appear in a user's lock list.
 */
export const lock = onchainTable(
  "lock",
  (t) => ({
    tokenId: t.bigint().primaryKey(),
    owner: t.hex(),
    amount: t.bigint().notNull(),
    lockEnd: t.bigint().notNull(),
    autoMax: t.boolean().notNull(),
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

/** Immutable history: one row per lifecycle event (mints and burns belong to create / merge / unlock). */
export const lockEvent = onchainTable(
  "lock_event",
  (t) => ({
    id: t.text().primaryKey(),
    kind: t.text().notNull(),
    tokenId: t.bigint().notNull(),
    /** The event's user: the owner acting (for a sell-back: the seller). Not `user`: a reserved word in SQL. */
    account: t.hex().notNull(),
    amount: t.bigint(),
    lockEnd: t.bigint().notNull(),
    autoMax: t.boolean().notNull(),
    fromTokenId: t.bigint(),
    /** A sell-back's receiver (the Furnace). */
    recipient: t.hex(),
    blockNumber: t.bigint().notNull(),
    blockTime: t.bigint().notNull(),
    txHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({ tokenIdx: index("lock_event_token_idx").on(table.tokenId, table.blockNumber) }),
);
