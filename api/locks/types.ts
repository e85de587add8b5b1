import type { Address } from "viem";

/** One live lock of a user, as the state endpoint lists it. */
export type LiveLock = { tokenId: bigint; amount: bigint; lockEnd: bigint; autoMax: boolean };

/** What the API needs from the lock index; the indexer's Postgres/PGlite tables implement it. */
export interface LockStore {
  /** The owner's live locks (amount > 0, not burned), ordered by token id, in one indexed query. */
  liveLocksOf(owner: Address): Promise<LiveLock[]>;
  /** True once the index has caught up with the chain (Ponder's readiness); false while back-filling. */
  isReady(): Promise<boolean>;
}
