import type { Context } from "hono";
import { requestDeadline } from "../http/cancellation";
import { parseAddressKey, parseQuery } from "../http/params";
import type { BoardSeal, HolderVe } from "../read/contract";
import { cursorList } from "../read/cursor";
import { boardSeal, judgeBoardCursor } from "../read/cursorSeal";
import { answerAt, type IndexRuntime, requestedBlock } from "../read/runtime";
import { BOARD_ROW_SCHEMA, ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE, NEXT_CURSOR_SCHEMA } from "../read/shapes";
import type { VeBoard } from "../read/veBoard";
import type { RouteDefinition } from "../route/definition";
import { array, integer, object } from "../route/jsonSchema";
import { answer, answerFields, boardAnswers, KEPT_FIELDS, keptFields, withNextCursor } from "./answer";
import type { BoardHandlers } from "./boards";
import { AT_PARAMS, PAGE_PARAMS } from "./query";

/**
 * The ve board: every holder with ve > 0 at a block, ve descending then address ascending — the reference
 * service's "Top ve holders", exact at a named block. The ranking is computed once per block and shared
 * (api/read/veBoard.ts); a page is a binary search in it.
 */

const ORDER =
  "Every holder with ve > 0 at one block (default the index's head), ranked by ve descending, then address " +
  "ascending. A holder's ve is veBalanceOf at that block: per live lock, AutoMax → amount, else floor(amount × " +
  "(lockEnd − blockTimestamp) / 365 days), 0 once expired. Holders whose locks have all expired are not ranked.";

const rowJson = (board: VeBoard, i: number) => {
  const r = board.rows.get(i) as HolderVe;
  return {
    rank: i + 1,
    address: board.checksummed(i),
    veWei: r.ve.toString(),
    lockedWei: r.locked.toString(),
    locks: r.locks,
  };
};

const EXAMPLE_ROWS = [
  {
    rank: 1,
    address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    veWei: "250000000000000000000000",
    lockedWei: "250000000000000000000000",
    locks: 2,
  },
  {
    rank: 2,
    address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    veWei: "9810502283105022831050",
    lockedWei: "10000000000000000000000",
    locks: 1,
  },
];

export const veBoardRoute = {
  path: "/leaderboards/ve",
  operationId: "get_ve_leaderboard",
  summary: "Rank ve holders",
  description: `${ORDER} Pages of \`limit\` with \`nextCursor\`; every page answers at the first page's block.`,
  query: PAGE_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { limit: "100" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      holders: integer("How many holders are ranked at this block.", { minimum: 0 }),
      rows: array(BOARD_ROW_SCHEMA, "This page of the ranking."),
      nextCursor: NEXT_CURSOR_SCHEMA,
    }),
    example: {
      ...EXAMPLE_ENVELOPE,
      holders: 2,
      rows: EXAMPLE_ROWS,
      nextCursor: null,
    },
  },
} as const satisfies RouteDefinition;

export const veRankRoute = {
  path: "/leaderboards/ve/:address",
  operationId: "get_ve_rank",
  summary: "Look up a holder's ve rank",
  description: `${ORDER} Answers the account's row (null when it has no ve) and the row ranked one above it (null for rank 1 or no row).`,
  pathParams: { address: { kind: "address", required: true, description: "The holder to look up." } },
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      holders: integer("How many holders are ranked at this block.", { minimum: 0 }),
      row: { anyOf: [BOARD_ROW_SCHEMA, { type: "null" }], description: "The account's row; null without ve." },
      above: {
        anyOf: [BOARD_ROW_SCHEMA, { type: "null" }],
        description: "The row ranked one higher; null for rank 1.",
      },
    }),
    example: {
      ...EXAMPLE_ENVELOPE,
      holders: 2,
      row: EXAMPLE_ROWS[1],
      above: EXAMPLE_ROWS[0],
    },
  },
} as const satisfies RouteDefinition;

/** The board at the requested block, or at the head (pinned first: the board is computed per block). */
async function resolveBoard(rt: IndexRuntime, c: Context, block: bigint | null, param: "block" | "cursor") {
  const { value, at } = await answerAt(rt, c, rt.boards, block, param);
  return { board: value, at };
}

/**
 * A page of the board from row `start`, `limit` rows at most, as its JSON members up to its next cursor (with
 * `nextCursor: null` on the last page): a function of the block's board and its bounds, made once and then answered
 * as text (keptFields: pollers of the head's first page ask the same page again and again), and made ahead for the
 * next head when read at the head (ComputeAhead.follow).
 */
function pageRows(rt: IndexRuntime, board: VeBoard, start: number, limit: number): string {
  const end = Math.min(start + limit, board.rows.length);
  // A board patched from the one made ahead for its block: a page within the rows they share is that one's (the same
  // block, rows and length: the same text), made between heads.
  const same = board.sameRowsAs;
  const alike = same !== undefined && end <= same.rows ? same.board : undefined;
  return keptFields(
    rt,
    board,
    `${start}:${end}`,
    () => {
      const rows = Array.from({ length: Math.max(end - start, 0) }, (_, i) => rowJson(board, start + i));
      return end < board.rows.length
        ? { holders: board.rows.length, rows }
        : { holders: board.rows.length, rows, nextCursor: null };
    },
    alike,
  );
}

/** The page's members: its rows, then (not the last page) the next cursor under `seal` (api/read/cursorSeal.ts). */
function pageFields(rt: IndexRuntime, board: VeBoard, start: number, limit: number, seal: BoardSeal | null): string {
  const rows = pageRows(rt, board, start, limit);
  const end = Math.min(start + limit, board.rows.length);
  const last = board.rows.get(end - 1);
  if (end >= board.rows.length || last === undefined) return rows;
  const after = { ve: last.ve, address: last.address };
  return withNextCursor(rt, board, `${start}:${end}`, rows, seal, () =>
    rt.cursors.encode({ kind: "board", list: cursorList.ve, block: board.block, seal, after }),
  );
}

/** The ve board's page and rank lookup (api/index/router.ts mounts them beside the duration boards'). */
export function veBoardHandlers(rt: IndexRuntime): BoardHandlers {
  const shown = boardAnswers(rt);
  const board: BoardHandlers["board"] = async (c) => {
    const q = parseQuery(c.req.url, veBoardRoute.query);
    const cursor = q.cursor === undefined ? undefined : rt.cursors.decode(q.cursor, "board", cursorList.ve);
    const { block, param } = requestedBlock(q.block, cursor?.block);
    const { board, at } = await resolveBoard(rt, c, block, param);
    if (cursor) await judgeBoardCursor(rt, cursor, at.time, "cursor", requestDeadline(c));
    const start = cursor === undefined ? 0 : board.rows.after(cursor.after);
    const limit = Number(q.limit);
    const seal = cursor
      ? cursor.seal
      : start + limit < board.rows.length
        ? boardSeal(rt, board, at.head.finalized)
        : null;
    return answerFields(c, shown, at, () => {
      const fields = pageFields(rt, board, start, limit, seal);
      // The head's first page, when it is kept as text: made for each next head as soon as its board is (its first
      // reader answered from text). A page too large to keep is made per request, never ahead.
      if (!at.pinned && cursor === undefined && fields.length <= KEPT_FIELDS.maxChars) {
        rt.ahead?.follow(rt.boards, `0+${limit}`, (next) => {
          pageRows(rt, next, 0, limit);
        });
      }
      return fields;
    });
  };

  const rank: BoardHandlers["rank"] = async (c) => {
    const holder = parseAddressKey("address", c.req.param("address"));
    const q = parseQuery(c.req.url, veRankRoute.query);
    const { board, at } = await resolveBoard(rt, c, q.block ?? null, "block");
    const i = board.position.get(holder);
    return answer(c, shown, at, {
      holders: board.rows.length,
      row: i === undefined ? null : rowJson(board, i),
      above: i === undefined || i === 0 ? null : rowJson(board, i - 1),
    });
  };
  return { board, rank };
}
