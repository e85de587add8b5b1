/**
 * A Map that holds at most `capacity` entries: past it, the oldest goes. "insertion" order: oldest by first set (a
 * key set again keeps its place); "recency" order: oldest by last use (get and set move a key to the newest end; peek
 * does not). Iteration is oldest first, as a Map's.
 */
export type BoundedMapOrder = "insertion" | "recency";

export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #recency: boolean;
  /**
   * In recency order, the key known to be at the newest end (undefined: not known), so a hit on it moves nothing: a
   * delete and a set per hit leave a hole in the Map's table each, rebuilt with an allocation every so many hits, and
   * a hot key (the supply figures, a head answer) is asked again and again.
   */
  #newest: K | undefined;

  constructor(
    readonly capacity: number,
    order: BoundedMapOrder = "insertion",
  ) {
    this.#recency = order === "recency";
  }

  /** The value, marked used (in recency order). */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (this.#recency && value !== undefined && key !== this.#newest) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
      this.#newest = key;
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
    if (this.#recency) {
      if (key !== this.#newest) this.#entries.delete(key);
      this.#newest = key;
    }
    this.#entries.set(key, value);
    while (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
    return this;
  }

  delete(key: K): boolean {
    if (key === this.#newest) this.#newest = undefined;
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#newest = undefined;
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
