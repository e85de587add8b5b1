/**
 * The official leaderboards computed straight from the chain's logs (eth_getLogs with the published ABIs), at a
 * block: the oracle the index's answers are checked against. Written from the rules of protocol.md §9, not from
 * the indexer's code: per event, the board, the account and the value; windows by the event's block timestamp.
 */
import { type Address, type PublicClient, parseEventLogs } from "viem";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi } from "../../abis";

export const BOARDS = [
  "king-claim-mined",
  "longest-reign",
  "takeovers",
  "takeover-eth",
  "royalties",
  "furnace-claim",
  "furnace-eth",
] as const;
export type Board = (typeof BOARDS)[number];
export const WINDOWS = { "24h": 86_400n, "7d": 604_800n, "30d": 2_592_000n, lifetime: null } as const;
export type WindowKey = keyof typeof WINDOWS;

export type ChainEntry = { board: Board; account: Address; value: bigint; block: bigint; time: bigint };

/** Every board contribution up to `toBlock`, with its block's timestamp. */
export async function chainEntries(
  client: PublicClient,
  at: { MineCore: Address; Furnace: Address; ShareholderRoyalties: Address },
  toBlock: bigint,
): Promise<ChainEntry[]> {
  const raw = await client.request({
    method: "eth_getLogs",
    params: [
      {
        address: [at.MineCore, at.Furnace, at.ShareholderRoyalties],
        fromBlock: "0x0",
        toBlock: `0x${toBlock.toString(16)}`,
      },
    ],
  });
  const logs = parseEventLogs({
    abi: [...MineCoreAbi, ...FurnaceAbi, ...ShareholderRoyaltiesAbi],
    logs: raw as never,
    strict: true,
  });
  const times = new Map<bigint, bigint>();
  const out: ChainEntry[] = [];
  for (const log of logs) {
    const block = log.blockNumber as bigint;
    if (!times.has(block)) times.set(block, (await client.getBlock({ blockNumber: block })).timestamp);
    const time = times.get(block) as bigint;
    const push = (board: Board, account: Address, value: bigint) =>
      out.push({ board, account: account.toLowerCase() as Address, value, block, time });
    switch (log.eventName) {
      case "Takeover":
        push("takeovers", log.args.newKing, 1n);
        push("takeover-eth", log.args.newKing, log.args.pricePaid);
        break;
      case "ReignFinalized":
        push("king-claim-mined", log.args.king, log.args.totalClaimMined);
        push("longest-reign", log.args.king, log.args.endTime - log.args.startTime);
        break;
      case "FurnaceEnter":
        // The Furnace boards' SQL keeps only positive values (`principalClaim > 0`, `ethIn > 0`); the others none.
        if (log.args.principalClaim > 0n) push("furnace-claim", log.args.user, log.args.principalClaim);
        if ((log.args.mode === 0 || log.args.mode === 2) && log.args.ethIn > 0n)
          push("furnace-eth", log.args.user, log.args.ethIn);
        break;
      case "ShareholderClaim":
        push("royalties", log.args.user, log.args.amountEth);
        break;
    }
  }
  return out;
}

export type Row = { rank: number; address: Address; value: string };

/**
 * A board in a window ending at `time` (events at blocks ≤ the entries' bound, time ≥ time − window: inclusive):
 * every account with an entry, at value 0 too, as the reference's SQL ranks (a reign of 0 seconds).
 */
export function rank(entries: ChainEntry[], board: Board, window: WindowKey, time: bigint): Row[] {
  const span = WINDOWS[window];
  const by = new Map<Address, bigint>();
  for (const e of entries) {
    if (e.board !== board || e.time > time) continue;
    if (span !== null && e.time < time - span) continue;
    const prev = by.get(e.account) ?? 0n;
    by.set(e.account, board === "longest-reign" ? (e.value > prev ? e.value : prev) : prev + e.value);
  }
  return [...by]
    .sort(([a, x], [b, y]) => (x === y ? (a < b ? -1 : a > b ? 1 : 0) : x > y ? -1 : 1))
    .map(([address, value], i) => ({ rank: i + 1, address, value: value.toString() }));
}
