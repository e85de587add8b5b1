/**
 * Which board an event counts on, by which account, with which value (indexer/boards.ts): as the reference's board
 * SQL (claimrush analytics/dune/leaderboards/01–08, protocol.md §9) — boards 1–5 count every event whatever its value,
 * the Furnace boards (7, 8) only a value above 0.
 */
import { describe, expect, it } from "vitest";
import { boardEntries } from "../../indexer/boards";

const KING = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" as const;
const king = KING.toLowerCase();

describe("boardEntries", () => {
  it("a reign of 0 seconds that mined nothing is an entry of 0 on the mined-token and longest-reign boards", () => {
    const args = { king: KING, startTime: 1_000n, endTime: 1_000n, totalClaimMined: 0n };
    expect(boardEntries({ name: "ReignFinalized", args })).toEqual([
      { board: "king-claim-mined", account: king, value: 0n },
      { board: "longest-reign", account: king, value: 0n },
    ]);
  });

  it("a takeover and a royalty claim count whatever their value", () => {
    expect(boardEntries({ name: "Takeover", args: { newKing: KING, pricePaid: 0n } })).toEqual([
      { board: "takeovers", account: king, value: 1n },
      { board: "takeover-eth", account: king, value: 0n },
    ]);
    expect(boardEntries({ name: "ShareholderClaim", args: { user: KING, amountEth: 0n } })).toEqual([
      { board: "royalties", account: king, value: 0n },
    ]);
  });

  it("a Furnace entry counts only a value above 0, and ETH only in modes 0 and 2", () => {
    const enter = (mode: number, ethIn: bigint, principalClaim: bigint) =>
      boardEntries({ name: "FurnaceEnter", args: { user: KING, mode, ethIn, principalClaim } });
    expect(enter(4, 0n, 0n)).toEqual([]); // a bonus-only extension
    expect(enter(1, 0n, 5n)).toEqual([{ board: "furnace-claim", account: king, value: 5n }]);
    expect(enter(0, 3n, 30n)).toEqual([
      { board: "furnace-claim", account: king, value: 30n },
      { board: "furnace-eth", account: king, value: 3n },
    ]);
    expect(enter(2, 0n, 7n)).toEqual([{ board: "furnace-claim", account: king, value: 7n }]);
    expect(enter(3, 9n, 7n)).toEqual([{ board: "furnace-claim", account: king, value: 7n }]);
  });
});
