/**
 * GraphQL's `leaderboard` and `rank` over the eight official boards, as REST serves them: the ve board (GET
 * /leaderboards/ve, api/index/leaderboard.ts: no window) and the seven duration boards (GET /leaderboards/{board}
 * ?window=, api/index/boards.ts). Read from the same per-block rankings, admitted and charged as REST's computations
 * are (api/graphql/scope.ts computing), and paged by the same cursors (api/read/cursor.ts cursorList: a REST page's
 * nextCursor pages GraphQL's list of the same board and back).
 */
import type { Address } from "viem";
import { BOARD_UNIT, BOARD_WINDOWS } from "../read/contract";
import type { SealedRanking } from "../read/cursorSeal";
import { blockAnswer } from "../read/runtime";
import type { BoardOf } from "./plan";
import type { RequestScope } from "./scope";

/** One row as the fields answer it: REST's duration row; the ve board's carries REST's lockedWei and locks too. */
export type BoardRowJson = {
  rank: number;
  address: Address;
  value: bigint;
  unit: string;
  lockedWei: bigint | null;
  locks: number | null;
};

/** One block's ranking of a board, as `leaderboard` and `rank` read it. */
export type Ranking = {
  block: bigint;
  /** The per-block ranking itself (its block, time and sealing), which its cursors' seal comes from. */
  computed: SealedRanking;
  /** blockTimestamp − the window; null for lifetime and for the ve board. */
  windowStart: bigint | null;
  /** How many accounts are ranked (REST's `accounts`, the ve board's `holders`). */
  accounts: number;
  /** Lower-case address → index (rank − 1). */
  position: { get(address: string): number | undefined };
  row(i: number): BoardRowJson;
  /** The index of the first row strictly after a cursor's keyset. */
  after(key: { ve: bigint; address: Address }): number;
  /** Row i's keyset, as a cursor carries it (REST's pages encode the same). */
  key(i: number): { ve: bigint; address: Address };
};

/** The board's ranking at the request's block (computed once per block, shared with REST). */
export async function rankingAt(scope: RequestScope, of: BoardOf): Promise<Ranking> {
  if (of.board === "ve") {
    const memo = scope.rt.boards;
    const ve = await scope.computing([memo], (at) => blockAnswer(scope.rt, memo, at));
    const holder = (i: number) => ve.rows.get(i)!;
    return {
      block: ve.block,
      computed: ve,
      windowStart: null,
      accounts: ve.rows.length,
      position: ve.position,
      row: (i) => {
        const r = holder(i);
        return {
          rank: i + 1,
          address: ve.checksummed(i),
          value: r.ve,
          unit: "wei",
          lockedWei: r.locked,
          locks: r.locks,
        };
      },
      after: (key) => ve.rows.after(key),
      key: (i) => ({ ve: holder(i).ve, address: holder(i).address }),
    };
  }
  const { board, window } = of;
  const memo = scope.rt.durationBoards.memo(board, window);
  const ranked = await scope.computing([memo], (at) => blockAnswer(scope.rt, memo, at));
  const span = BOARD_WINDOWS[window];
  const entry = (i: number) => ranked.rows.get(i)!;
  return {
    block: ranked.block,
    computed: ranked,
    windowStart: span === null ? null : ranked.time - span,
    accounts: ranked.rows.length,
    position: ranked.position,
    row: (i) => ({
      rank: i + 1,
      address: ranked.checksummed(i),
      value: entry(i).value,
      unit: BOARD_UNIT[board],
      lockedWei: null,
      locks: null,
    }),
    after: (key) => ranked.rows.after({ value: key.ve, address: key.address }),
    key: (i) => ({ ve: entry(i).value, address: entry(i).address }),
  };
}
