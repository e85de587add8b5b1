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

export type VeBoardsOptions = Omit<BlockMemoOptions<VeBoard>, "load"> & {
  /** Computes the ranking of a block (api/read/atBlock.ts holders). */
  load: (at: { block: bigint; time: bigint }) => Promise<AtBlock<HolderVe[]>>;
};

/** The ve rankings of the blocks asked for: one computation per block, shared (api/read/blockMemo.ts). */
export class VeBoards extends BlockMemo<VeBoard> {
  constructor({ load, ...options }: VeBoardsOptions) {
    super({
      ...options,
      load: async (at) => {
        const answer = requireInRange(await load(at));
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
