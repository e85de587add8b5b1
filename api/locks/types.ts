import type { Address } from "viem";

/** One live lock of a user, as the state endpoint lists it. */
export type LiveLock = { tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };

/**
 * What the index says about a user at one moment, read in one SQL statement (one snapshot of the tables):
 * which token ids to read on chain — never their values, which the chain gives at the answer's block.
 */
export type IndexedLockIds = {
  /** The owner's unburned token ids by the index, ascending. */
  tokenIds: bigint[];
  /** The highest token id the index has seen minted (any owner, burned or not); 0 when none. Ids are
   *  sequential and never reused, so every id minted after the indexed block is above it. */
  maxTokenId: bigint;
  /** The last block the index has fully processed (Ponder's latest checkpoint), or null before the first. */
  indexedBlock: bigint | null;
};

/** What the API needs from the lock index; the indexer's Postgres/PGlite tables implement it. */
export interface LockStore {
  /** The owner's live locks (amount > 0, not burned), ordered by token id, in one indexed query. */
  liveLocksOf(owner: Address): Promise<LiveLock[]>;
  /** The owner's token ids, the highest id minted and the indexed block, consistent with each other. */
  lockIdsOf(owner: Address): Promise<IndexedLockIds>;
  /** True once the index has caught up with the chain (Ponder's readiness); false while back-filling. */
  isReady(): Promise<boolean>;
}
