/**
 * The duration boards of one block (protocol.md §9: seven boards × four windows), each computed at most once per
 * block per process and, with Redis, once for all replicas (api/read/sharedAnswers.ts), like the ve ranking
 * (api/read/veBoard.ts). A computation is one statement over what the indexer maintains (api/read/atBlock.ts
 * board: the window's hour buckets plus its two partial edge hours; lifetime from the totals), so its cost follows
 * the accounts active in the window, not the length of the history (docs/design.md). A page is then a binary
 * search in the ranking; a rank lookup a map lookup.
 */
import { type Address, getAddress } from "viem";
import { BlockMemo, requireInRange, SharedBytes } from "./blockMemo";
import type { ComputeLane } from "./computeGate";
import type { AtBlock, BoardValue, BoardWindow, DurationBoard } from "./contract";
import { BOARD_ROW_BYTES } from "./veBoard";

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
  /** Computes a board and window's ranking at a block (api/read/atBlock.ts board); `lane` says whether it is the head. */
  load: (
    board: DurationBoard,
    window: BoardWindow,
    at: { block: bigint; time: bigint },
    lane: ComputeLane,
  ) => Promise<AtBlock<BoardValue[]>>;
  /** Past blocks kept per board and window; default 4. */
  capacity?: number;
  /** Bytes of one board and window's rankings kept; default DURATION_BOARDS_KEPT.eachBytes. */
  maxBytes?: number;
  /** Bytes of all 28 boards' and windows' rankings kept, the heads' included; default DURATION_BOARDS_KEPT.allBytes. */
  allBytes?: number;
};

/**
 * What is kept of the rankings a request chooses the block of (issue 30). Each board and window keeps at most 4 past
 * blocks and 16 MiB; all 28 together at most 64 MiB (api/read/blockMemo.ts SharedBytes), as much as the ve boards —
 * without that sum, 28 memos of 16 MiB would be 448 MiB. A ranked row is counted as the ve board's (BOARD_ROW_BYTES):
 * a lifetime board of 60,000 accounts ~24 MB. The heads' rankings stay whatever their size (one per board and window).
 */
export const DURATION_BOARDS_KEPT = { capacity: 4, eachBytes: 16 * 1024 * 1024, allBytes: 64 * 1024 * 1024 } as const;

export class DurationBoards {
  readonly #memos = new Map<string, BlockMemo<RankedBoard>>();
  readonly #options: DurationBoardsOptions;
  readonly #shared: SharedBytes;

  constructor(options: DurationBoardsOptions) {
    this.#options = options;
    this.#shared = new SharedBytes(options.allBytes ?? DURATION_BOARDS_KEPT.allBytes);
  }

  /** How many rankings this process has computed (all boards and windows). */
  get computed(): number {
    let n = 0;
    for (const memo of this.#memos.values()) n += memo.computed;
    return n;
  }

  /** Estimated bytes of every ranking kept (all boards and windows, the heads' included). */
  get bytes(): number {
    return this.#shared.bytes;
  }

  /**
   * The rankings of one board and window, by block: what the runtime's gated reads take (api/read/runtime.ts
   * answerAt, blockAnswer), so a ranking held (`has`, `kept`) is answered without the gate, and one to compute is
   * admitted, charged and run in its lane like the ve board's.
   */
  memo(board: DurationBoard, window: BoardWindow): BlockMemo<RankedBoard> {
    const key = `${board}:${window}`;
    let memo = this.#memos.get(key);
    if (memo === undefined) {
      memo = new BlockMemo<RankedBoard>({
        name: `board:${key}`,
        capacity: this.#options.capacity ?? DURATION_BOARDS_KEPT.capacity,
        maxBytes: this.#options.maxBytes ?? DURATION_BOARDS_KEPT.eachBytes,
        shared: this.#shared,
        sizeOf: (v) => 1024 + v.rows.length * BOARD_ROW_BYTES,
        load: async (b, lane) => {
          const answer = requireInRange(await this.#options.load(board, window, b, lane));
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
    return memo;
  }
}
