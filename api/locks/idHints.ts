import type { IndexedLockIds } from "./types";

/**
 * What the index last said about each recently read user, so the next state read of that user can send its
 * eth_call at once instead of after the SQL query (api/locks/snapshot.ts). A hint is only a guess at which
 * ids to read: a stale one costs a second round trip, never a wrong answer. Bounded, least recently used out.
 */
export class LockIdHints {
  readonly #entries = new Map<string, IndexedLockIds>();
  constructor(readonly capacity = 10_000) {}

  get(user: string): IndexedLockIds | undefined {
    const key = user.toLowerCase();
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  set(user: string, ids: IndexedLockIds): void {
    const key = user.toLowerCase();
    this.#entries.delete(key);
    this.#entries.set(key, ids);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  get size(): number {
    return this.#entries.size;
  }
}
