/**
 * The ve ranking of one block, computed at most once per block and shared by every reader of this process
 * (design.md: ve changes with time even without events, so the board is a function of the block; api/index/
 * blockMemo.ts). A reader paging at its cursor's block, or a rank lookup, costs a binary search and no SQL.
 *
 * Pages are keyset pages — strictly after (ve, address) in the order ve descending, address ascending — found by
 * binary search, so page 500 costs what page 1 costs.
 */
import { type Address, getAddress } from "viem";
import { BlockMemo, type BlockMemoOptions, requireInRange } from "./blockMemo";
import type { ComputeLane } from "./computeGate";
import type { AtBlock, HolderVe } from "./contract";

export type VeBoard = {
  block: bigint;
  time: bigint;
  rows: readonly HolderVe[];
  /** Lower-case address → index in rows (rank − 1). */
  position: ReadonlyMap<string, number>;
  /** Row i's address, EIP-55 (computed once per row, when first shown: keccak per address is not free). */
  checksummed(i: number): Address;
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

export type VeBoardsOptions = Omit<BlockMemoOptions<VeBoard>, "load" | "sizeOf"> & {
  /** Computes the ranking of a block (api/read/atBlock.ts holders). */
  load: (at: { block: bigint; time: bigint }, lane: ComputeLane) => Promise<AtBlock<HolderVe[]>>;
};

/**
 * A ranked row's heap, estimated: the row (an object, a 42-character address, two bigints) ~200 B, its entry in
 * `position` ~100 B, its checksummed address once shown ~70 B (measured with node --expose-gc over 60,000 rows).
 */
export const BOARD_ROW_BYTES = 400;
/** The boards kept by default: 8 blocks' and 64 MiB of them (at Base scale, ~60,000 holders, a board is ~25 MB). */
export const BOARDS_KEPT = { capacity: 8, maxBytes: 64 * 1024 * 1024 } as const;

/** The ve rankings of the blocks asked for: one computation per block, shared (api/read/blockMemo.ts). */
export class VeBoards extends BlockMemo<VeBoard> {
  constructor({ load, ...options }: VeBoardsOptions) {
    super({
      name: "board",
      ...BOARDS_KEPT,
      ...options,
      sizeOf: (board) => 1024 + board.rows.length * BOARD_ROW_BYTES,
      load: async (at, lane) => {
        const answer = requireInRange(await load(at, lane));
        const position = new Map<string, number>();
        answer.value.forEach((row, i) => {
          position.set(row.address.toLowerCase(), i);
        });
        const shown: Address[] = [];
        const rows = answer.value;
        const checksummed = (i: number) => {
          shown[i] ??= getAddress((rows[i] as HolderVe).address);
          return shown[i];
        };
        return { block: answer.block, time: answer.time, rows, position, checksummed };
      },
    });
  }
}
