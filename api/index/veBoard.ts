/**
 * The ve ranking of one block, computed at most once per block and shared by every reader of this process
 * (design.md: ve changes with time even without events, so the board is a function of the block). Concurrent
 * requests for a block share one computation (single flight); the last few blocks' boards stay in memory, so a
 * reader paging at its cursor's block, or a rank lookup, costs a binary search and no SQL. A failed computation is
 * never kept: the next request computes again.
 *
 * Pages are keyset pages — strictly after (ve, address) in the order ve descending, address ascending — found by
 * binary search, so page 500 costs what page 1 costs.
 */
import type { Address } from "viem";
import type { AtBlock, HolderVe, ReadAt } from "../locks/atBlock";

export type VeBoard = {
  block: bigint;
  time: bigint;
  rows: readonly HolderVe[];
  /** Lower-case address → index in rows (rank − 1). */
  position: ReadonlyMap<string, number>;
};

/** The board order: ve descending, then address ascending in byte order (as the SQL's COLLATE "C"). */
export function beforeInBoard(a: { ve: bigint; address: string }, b: { ve: bigint; address: string }): boolean {
  if (a.ve !== b.ve) return a.ve > b.ve;
  return a.address.toLowerCase() < b.address.toLowerCase();
}

/** The index of the first row strictly after `key` in board order (rows are in board order, all distinct). */
export function firstAfter(rows: readonly HolderVe[], key: { ve: bigint; address: Address }): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (beforeInBoard(key, rows[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export type VeBoardsOptions = {
  /** Computes the board of a block (api/locks/atBlock.ts holders). */
  load: (at: { block: bigint; time: bigint }) => Promise<AtBlock<HolderVe[]>>;
  /** Boards kept (the newest blocks asked for). */
  capacity?: number;
  /** Called once per computation actually run (metrics, tests, the benchmark). */
  onCompute?: (block: bigint, ms: number) => void;
};

export class VeBoards {
  readonly #boards = new Map<bigint, Promise<VeBoard>>();
  readonly #o: Required<Omit<VeBoardsOptions, "onCompute">> & Pick<VeBoardsOptions, "onCompute">;
  #computed = 0;

  constructor(options: VeBoardsOptions) {
    this.#o = { capacity: 8, ...options };
  }

  /** How many boards this process has computed. */
  get computed(): number {
    return this.#computed;
  }

  /** The board at `at` (a block at or below the index's head, with its timestamp). */
  get(at: NonNullable<ReadAt>): Promise<VeBoard> {
    const kept = this.#boards.get(at.block);
    if (kept) {
      // Most recently used last.
      this.#boards.delete(at.block);
      this.#boards.set(at.block, kept);
      return kept;
    }
    const flight = this.#compute(at);
    this.#boards.set(at.block, flight);
    flight.catch(() => {
      if (this.#boards.get(at.block) === flight) this.#boards.delete(at.block);
    });
    while (this.#boards.size > this.#o.capacity) this.#boards.delete(this.#boards.keys().next().value!);
    return flight;
  }

  async #compute(at: NonNullable<ReadAt>): Promise<VeBoard> {
    const started = performance.now();
    const answer = await this.#o.load(at);
    // The caller checked the block against the head; a board read out of range would be empty, not "no holders".
    if (!answer.inRange) throw new Error(`ve board: block ${at.block} is above the index head ${answer.head.block}`);
    this.#computed++;
    this.#o.onCompute?.(at.block, performance.now() - started);
    const position = new Map<string, number>();
    answer.value.forEach((row, i) => {
      position.set(row.address.toLowerCase(), i);
    });
    return { block: answer.block, time: answer.time, rows: answer.value, position };
  }
}
