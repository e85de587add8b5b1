import type { Address } from "viem";
import type { CancelSignal } from "../chain/rpc";

/** One live lock of a user, as the state endpoint lists it. */
export type LiveLock = { tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };

/**
 * What the index says about a user at one moment, read in one SQL statement (one snapshot of the tables):
 * which token ids to read on chain — never their values, which the chain gives at the answer's block.
 */
export type IndexedLockIds = IndexMark & {
  /** The owner's unburned token ids by the index, ascending. */
  tokenIds: bigint[];
};

/** How far the index is, for no owner in particular (api/locks/watermark.ts polls it). */
export type IndexMark = {
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
  /**
   * The owner's token ids, the highest id minted and the indexed block, consistent with each other. When `signal`
   * fires first the query is cancelled (where the store can: node-postgres, api/locks/cancellableQuery.ts) and the
   * call rejects with QueryCancelledError.
   */
  lockIdsOf(owner: Address, options?: { signal?: CancelSignal }): Promise<IndexedLockIds>;
  /** The highest id minted and the indexed block, in one statement (lockIdsOf's, without an owner). */
  indexMark(): Promise<IndexMark>;
  /** True once the index has caught up with the chain (Ponder's readiness); false while back-filling. */
  isReady(): Promise<boolean>;
}
