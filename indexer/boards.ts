/**
 * The official leaderboards' rules (protocol.md §9, docs/protocol.md §9) as pure functions: which board an event
 * counts on, by which account and with which value; and the next hour bucket and lifetime total of an account.
 * src/index.ts only stores what these return (test/indexer/boards.test.ts pins them without a chain).
 */
import type { Address } from "viem";

/** The duration-filtered boards (the eighth, `ve`, is a snapshot of the locks). */
export const DURATION_BOARDS = [
  "king-claim-mined",
  "longest-reign",
  "takeovers",
  "takeover-eth",
  "royalties",
  "furnace-claim",
  "furnace-eth",
] as const;
export type DurationBoard = (typeof DURATION_BOARDS)[number];

/** How a board folds its values: a sum (wei, count) or the largest one (seconds). */
export const BOARD_FOLD: Record<DurationBoard, "sum" | "count" | "max"> = {
  "king-claim-mined": "sum",
  "longest-reign": "max",
  takeovers: "count",
  "takeover-eth": "sum",
  royalties: "sum",
  "furnace-claim": "sum",
  "furnace-eth": "sum",
};
export const BOARD_UNIT: Record<DurationBoard, "wei" | "seconds" | "count"> = {
  "king-claim-mined": "wei",
  "longest-reign": "seconds",
  takeovers: "count",
  "takeover-eth": "wei",
  royalties: "wei",
  "furnace-claim": "wei",
  "furnace-eth": "wei",
};

/** Bucket width: a window's full hours come from board_hour, its two partial hours from board_entry. */
export const BOARD_BUCKET_SECONDS = 3_600n;

export type BoardEntry = { board: DurationBoard; account: Address; value: bigint };

const lower = (a: Address) => a.toLowerCase() as Address;

/** FurnaceEnter modes that bring ETH in (protocol.md §9): 0 enter with ETH, 2 a royalty claim locked. */
const ETH_MODES = new Set([0, 2]);

export type BoardEvent =
  | { name: "Takeover"; args: { newKing: Address; pricePaid: bigint } }
  | { name: "ReignFinalized"; args: { king: Address; startTime: bigint; endTime: bigint; totalClaimMined: bigint } }
  | { name: "FurnaceEnter"; args: { user: Address; mode: number; ethIn: bigint; principalClaim: bigint } }
  | { name: "ShareholderClaim"; args: { user: Address; amountEth: bigint } };

/**
 * What one event adds to the boards, as the reference's board SQL counts it (analytics/dune/leaderboards/01–08): every
 * Takeover, ReignFinalized and ShareholderClaim, whatever its value — a king dethroned in the block of their own
 * takeover is ranked at 0 on the mined-token and longest-reign boards (a reign of 0 seconds, mined nothing) — and a
 * FurnaceEnter only where its value is above 0 (the Furnace boards' SQL keeps `principalClaim > 0`, `ethIn > 0`).
 * An account is ranked when it has an entry in the window, at value 0 too.
 */
export function boardEntries(event: BoardEvent): BoardEntry[] {
  const out: BoardEntry[] = [];
  const add = (board: DurationBoard, account: Address, value: bigint) => {
    out.push({ board, account: lower(account), value });
  };
  const addPositive = (board: DurationBoard, account: Address, value: bigint) => {
    if (value > 0n) add(board, account, value);
  };
  switch (event.name) {
    case "Takeover":
      add("takeovers", event.args.newKing, 1n);
      // The price paid as the event states it, never the transaction's value (a refund may follow).
      add("takeover-eth", event.args.newKing, event.args.pricePaid);
      break;
    case "ReignFinalized":
      add("king-claim-mined", event.args.king, event.args.totalClaimMined);
      add(
        "longest-reign",
        event.args.king,
        event.args.endTime > event.args.startTime ? event.args.endTime - event.args.startTime : 0n,
      );
      break;
    case "FurnaceEnter":
      addPositive("furnace-claim", event.args.user, event.args.principalClaim);
      if (ETH_MODES.has(event.args.mode)) addPositive("furnace-eth", event.args.user, event.args.ethIn);
      break;
    case "ShareholderClaim":
      add("royalties", event.args.user, event.args.amountEth);
      break;
  }
  return out;
}

export const bucketOf = (time: bigint): bigint => time - (time % BOARD_BUCKET_SECONDS);

export type Fold = { total: bigint; count: number; max: bigint };
/** An aggregate after one more value. */
export const folded = (current: Fold | null, value: bigint): Fold => ({
  total: (current?.total ?? 0n) + value,
  count: (current?.count ?? 0) + 1,
  max: current === null || value > current.max ? value : current.max,
});

/** The row ids: one hour bucket per board, account and hour; one total per board and account. */
export const hourId = (e: BoardEntry, time: bigint) => `${e.board}:${e.account}:${bucketOf(time)}`;
export const totalId = (e: { board: string; account: Address }) => `${e.board}:${lower(e.account)}`;

/** The activity kinds of the non-lock events (api: /activity). */
export const PROTOCOL_EVENT_KINDS = {
  FurnaceEnter: "furnace-enter",
  ShareholderClaim: "royalty-claim",
  Takeover: "takeover",
  ReignFinalized: "reign-finalized",
} as const;

/** An event's own fields as JSON (bigints as decimal strings, addresses lower-case). */
export function eventData(args: Record<string, unknown>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = typeof v === "bigint" ? v.toString() : typeof v === "string" ? v.toLowerCase() : (v as number);
  }
  return out;
}
