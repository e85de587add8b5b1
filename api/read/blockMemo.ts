import { BoundedMap } from "../cache/boundedMap";
import type { AtBlock } from "./contract";

/**
 * Answers that are a function of the block alone (the ve ranking, the stats), computed at most once per block and
 * shared by every reader of this process: concurrent requests for a block share one computation (single flight),
 * and the last few blocks' answers stay in memory. A failed computation is never kept: the next request computes
 * again. Keyed by block number only, so callers pass blocks at or below the index's head with their own timestamp.
 */
export type BlockMemoOptions<T> = {
  /** Computes the answer at a block (one SQL statement: api/read/atBlock.ts). */
  load: (at: { block: bigint; time: bigint }) => Promise<T>;
  /** Answers kept (the blocks most recently asked for). */
  capacity?: number;
  /** Called once per computation actually run (metrics, tests, the benchmark). */
  onCompute?: (block: bigint, ms: number) => void;
};

export class BlockMemo<T> {
  /** The blocks most recently asked for, least recently used out. */
  readonly #kept: BoundedMap<bigint, Promise<T>>;
  readonly #load: BlockMemoOptions<T>["load"];
  readonly #onCompute: BlockMemoOptions<T>["onCompute"];
  #computed = 0;

  constructor(options: BlockMemoOptions<T>) {
    this.#load = options.load;
    this.#kept = new BoundedMap(options.capacity ?? 8, "recency");
    this.#onCompute = options.onCompute;
  }

  /** How many answers this memo has computed. */
  get computed(): number {
    return this.#computed;
  }

  get(at: { block: bigint; time: bigint }): Promise<T> {
    const kept = this.#kept.get(at.block);
    if (kept) return kept;
    const flight = this.#compute(at);
    this.#kept.set(at.block, flight);
    flight.catch(() => {
      if (this.#kept.peek(at.block) === flight) this.#kept.delete(at.block);
    });
    return flight;
  }

  async #compute(at: { block: bigint; time: bigint }): Promise<T> {
    const started = performance.now();
    const value = await this.#load(at);
    this.#computed++;
    this.#onCompute?.(at.block, performance.now() - started);
    return value;
  }
}

/** An answer read at a pinned block must be in range: the caller checked it against the head before. */
export function requireInRange<T>(answer: AtBlock<T>): AtBlock<T> {
  if (!answer.inRange) throw new Error(`block ${answer.block} is above the index head ${answer.head.block}`);
  return answer;
}
