import { BoundedMap } from "../../cache/boundedMap";
import { CacheStats } from "../../observability/cacheStats";
import type { IndexedLockIds } from "../../read/contract";

/**
 * What was known of each recently read user's ids after their last state read — the set the chain proved then
 * (with the highest id minted then), or the index's answer when nothing was proven — so the next read of that
 * user can send its eth_call at once, and while the index's watermark is fresh skip the SQL query altogether
 * (api/mcp/v1/snapshot.ts). A hint is only a guess at which ids to read: a stale one costs a second round trip,
 * never a wrong answer. Bounded, least recently used out.
 */
export class LockIdHints {
  readonly #entries: BoundedMap<string, IndexedLockIds>;
  /** One lookup per state read: a hit is a user read before (and not evicted since). */
  readonly stats = new CacheStats();
  constructor(readonly capacity = 10_000) {
    this.#entries = new BoundedMap(capacity, "recency");
  }

  get(user: string): IndexedLockIds | undefined {
    const key = user.toLowerCase();
    const hit = this.#entries.get(key);
    if (hit) this.stats.hits++;
    else this.stats.misses++;
    return hit;
  }

  set(user: string, ids: IndexedLockIds): void {
    this.#entries.set(user.toLowerCase(), ids);
  }

  get size(): number {
    return this.#entries.size;
  }
}
