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

/**
 * Every indexed event of Furnace, ShareholderRoyalties and MineCore (protocol.md §9), immutable, newest by
 * (block, log index): the activity feed's non-lock half. `account` is the account the event is about (user, or
 * newKing / king), `other` a second one (a takeover's previousKing); `data` the event's own fields as decimal
 * strings (indexer/boards.ts).
 */
export const protocolEvent = onchainTable(
  "protocol_event",
  (t) => ({
    id: t.text().primaryKey(),
    kind: t.text().notNull(),
    account: t.hex().notNull(),
    other: t.hex(),
    data: t.json().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTime: t.bigint().notNull(),
    txHash: t.hex().notNull(),
    logIndex: t.integer().notNull(),
  }),
  (table) => ({
    orderIdx: index("protocol_event_order_idx").on(table.blockNumber, table.logIndex),
    accountIdx: index("protocol_event_account_idx").on(table.account, table.blockNumber, table.logIndex),
    otherIdx: index("protocol_event_other_idx").on(table.other, table.blockNumber, table.logIndex),
  }),
);

/**
 * One row per contribution of an event to an official board (indexer/boards.ts: a takeover counts on two
 * boards), immutable. The boards read only the rows at a window's two partial edge hours from here; everything
 * else comes from board_hour and board_total (docs/design.md, "The official leaderboards").
 */
export const boardEntry = onchainTable(
  "board_entry",
  (t) => ({
    id: t.text().primaryKey(),
    board: t.text().notNull(),
    account: t.hex().notNull(),
    value: t.bigint().notNull(),
    blockNumber: t.bigint().notNull(),
    blockTime: t.bigint().notNull(),
  }),
  (table) => ({
    // A window's edges: a board's rows in a time range, with what the ranking needs (index-only).
    edgeIdx: index("board_entry_edge_idx").on(
      table.board,
      table.blockTime,
      table.blockNumber,
      table.account,
      table.value,
    ),
  }),
);

/** Per board, account and hour (unix seconds of its start): the sum, count and maximum of the values. */
export const boardHour = onchainTable(
  "board_hour",
  (t) => ({
    id: t.text().primaryKey(),
    board: t.text().notNull(),
    account: t.hex().notNull(),
    hour: t.bigint().notNull(),
    total: t.bigint().notNull(),
    count: t.integer().notNull(),
    max: t.bigint().notNull(),
  }),
  (table) => ({
    windowIdx: index("board_hour_window_idx").on(
      table.board,
      table.hour,
      table.account,
      table.total,
      table.count,
      table.max,
    ),
    accountIdx: index("board_hour_account_idx").on(table.board, table.account, table.hour),
  }),
);

/** Per board and account, every contribution so far (the lifetime board at the head), and the block of the last. */
export const boardTotal = onchainTable(
  "board_total",
  (t) => ({
    id: t.text().primaryKey(),
    board: t.text().notNull(),
    account: t.hex().notNull(),
    total: t.bigint().notNull(),
    count: t.integer().notNull(),
    max: t.bigint().notNull(),
    lastBlock: t.bigint().notNull(),
    firstBlock: t.bigint().notNull(),
  }),
  (table) => ({
    boardIdx: index("board_total_board_idx").on(table.board, table.account, table.lastBlock),
    lastIdx: index("board_total_last_idx").on(table.board, table.lastBlock),
  }),
);
