/**
 * The duration boards of one block (protocol.md §9: seven boards × four windows), each computed at most once per
 * block per process and, with Redis, once for all replicas (api/read/sharedAnswers.ts), like the ve ranking
 * (api/read/veBoard.ts). A computation is one statement over what the indexer maintains (api/read/atBlock.ts
 * board: the window's hour buckets plus its two partial edge hours; lifetime from the totals), so its cost follows
 * the accounts active in the window, not the length of the history (docs/design.md). A page is then a binary
 * search in the ranking; a rank lookup a map lookup.
 */
import { type Address, getAddress } from "viem";
import { BlockMemo, requireInRange } from "./blockMemo";
import type { AtBlock, BoardValue, BoardWindow, DurationBoard } from "./contract";

export type RankedBoard = {
  block: bigint;
  time: bigint;
  rows: readonly BoardValue[];
  /** Lower-case address → index in rows (rank − 1). */
  position: ReadonlyMap<string, number>;
  checksummed(i: number): Address;
};

/** Board order: value descending, then address ascending (byte order of the lower-case hex). */
export function firstAfterValue(rows: readonly BoardValue[], key: { value: bigint; address: string }): number {
  const before = (a: { value: bigint; address: string }, b: BoardValue) =>
    a.value !== b.value ? a.value > b.value : a.address.toLowerCase() < b.address;
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(key, rows[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export type DurationBoardsOptions = {
  load: (
    board: DurationBoard,
    window: BoardWindow,
    at: { block: bigint; time: bigint },
  ) => Promise<AtBlock<BoardValue[]>>;
  /** Blocks kept per board and window. */
  capacity?: number;
};

/** Bytes of one board and window's rankings kept (the head's apart, whatever its size). */
const DURATION_BOARD_BYTES = 16 * 1024 * 1024;

export class DurationBoards {
  readonly #memos = new Map<string, BlockMemo<RankedBoard>>();
  readonly #options: DurationBoardsOptions;

  constructor(options: DurationBoardsOptions) {
    this.#options = options;
  }

  /** How many rankings this process has computed (all boards and windows). */
  get computed(): number {
    let n = 0;
    for (const memo of this.#memos.values()) n += memo.computed;
    return n;
  }

  get(board: DurationBoard, window: BoardWindow, at: { block: bigint; time: bigint }): Promise<RankedBoard> {
    const key = `${board}:${window}`;
    let memo = this.#memos.get(key);
    if (memo === undefined) {
      memo = new BlockMemo<RankedBoard>({
        name: `board:${key}`,
        capacity: this.#options.capacity ?? 4,
        // A request chooses the block (issue 30): kept by bytes too, ~400 B a ranked row (as the ve board's).
        maxBytes: DURATION_BOARD_BYTES,
        sizeOf: (v) => 1024 + v.rows.length * 400,
        load: async (b) => {
          const answer = requireInRange(await this.#options.load(board, window, b));
          const rows = answer.value;
          const position = new Map<string, number>();
          rows.forEach((r, i) => {
            position.set(r.address.toLowerCase(), i);
          });
          const shown: Address[] = [];
          const checksummed = (i: number) => {
            shown[i] ??= getAddress((rows[i] as BoardValue).address);
            return shown[i];
          };
          return { block: answer.block, time: answer.time, rows, position, checksummed };
        },
      });
      this.#memos.set(key, memo);
    }
    return memo.get(at);
  }
}
