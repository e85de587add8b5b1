/**
 * A Map that holds at most `capacity` entries: past it, the oldest goes. "insertion" order: oldest by first set (a
 * key set again keeps its place); "recency" order: oldest by last use (get and set move a key to the newest end; peek
 * does not). Iteration is oldest first, as a Map's.
 */
export type BoundedMapOrder = "insertion" | "recency";

export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #recency: boolean;

  constructor(
    readonly capacity: number,
    order: BoundedMapOrder = "insertion",
  ) {
    this.#recency = order === "recency";
  }

  /** The value, marked used (in recency order). */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (this.#recency && value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** The value, its place unchanged. */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  has(key: K): boolean {
    return this.#entries.has(key);
  }

  /** Sets `key` (newest in recency order), then drops the oldest entries past capacity. */
  set(key: K, value: V): this {
    if (this.#recency) this.#entries.delete(key);
    this.#entries.set(key, value);
    while (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Oldest first; deleting the entry just visited is allowed, as with a Map. */
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#entries[Symbol.iterator]();
  }
}
