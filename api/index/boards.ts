import type { Context } from "hono";
import { requestDeadline } from "../http/cancellation";
import type { AppEnv } from "../http/env";
import { NotFoundError } from "../http/errors";
import { PARAM_PATTERNS, type ParamDoc, parseAddressKey, parseQuery } from "../http/params";
import {
  BOARD_UNIT,
  BOARD_WINDOWS,
  type BoardSeal,
  type BoardWindow,
  DURATION_BOARDS,
  type DurationBoard,
} from "../read/contract";
import { cursorList } from "../read/cursor";
import { boardSeal, judgeBoardCursor } from "../read/cursorSeal";
import type { RankedBoard } from "../read/durationBoards";
import { answerAt, type IndexRuntime, requestedBlock } from "../read/runtime";
import { ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE, NEXT_CURSOR_SCHEMA } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { addressString, array, integer, type JsonSchema, object, uintString } from "../route/jsonSchema";
import { answer, answerFields, boardAnswers, KEPT_FIELDS, keptFields, withNextCursor } from "./answer";
import { AT_PARAMS, PAGE_PARAMS } from "./query";

/**
 * The seven duration boards (protocol.md §9): king's mined token, longest reign, takeovers, ETH spent on takeovers,
 * royalties, token and ETH sent to the Furnace — each in a trailing window of 24 h, 7 d (the default), 30 d or the
 * whole history, exact at a named block. Each block's ranking of a board and window is computed once and shared
 * (api/read/durationBoards.ts); a page is a binary search in it.
 */

const ORDER =
  "An event counts when its block is at or below the answer's block and its block timestamp is at or after " +
  "`windowStart` (blockTimestamp − the window: the window includes its start, as the reference's board SQL; " +
  "lifetime: every event). Rows: value descending, then address ascending (byte order of the lower-case hex); " +
  "every account with an event counted in the window is ranked, at value 0 too (a reign of 0 seconds), as the " +
  "reference's board SQL; the Furnace boards count only entries above 0.";

const nullable = (schema: JsonSchema, description: string): JsonSchema => ({
  anyOf: [schema, { type: "null" }],
  description,
});

const WINDOW_PARAM = {
  kind: "window",
  default: "7d",
  description: "The trailing window: 24h, 7d (default), 30d or lifetime.",
} as const satisfies ParamDoc;

const BOARD_PATH = {
  kind: "board",
  required: true,
  description:
    "`king-claim-mined` (SUM `totalClaimMined` by king, wei), `longest-reign` (MAX endTime − startTime by " +
    "king, seconds), `takeovers` (COUNT by newKing), `takeover-eth` (SUM pricePaid by newKing, wei), " +
    "`royalties` (SUM amountEth by user, wei), `furnace-claim` (SUM `principalClaim` by user, wei), " +
    "`furnace-eth` (SUM ethIn by user, modes 0 and 2, wei). The ve board has its own route; any other key is 404.",
} as const satisfies ParamDoc;

const ROW_SCHEMA = object({
  rank: integer("1 for the largest value.", { minimum: 1 }),
  address: addressString("The account (EIP-55)."),
  value: uintString("Its figure on the board in the window, a decimal string in `unit`."),
  unit: { type: "string", enum: ["wei", "seconds", "count"], description: "What `value` counts." },
});

const WINDOW_FIELDS = {
  board: { type: "string", enum: [...DURATION_BOARDS], description: "The board." },
  window: { type: "string", enum: Object.keys(BOARD_WINDOWS), description: "The window." },
  windowStart: nullable(uintString("blockTimestamp − the window: events at or after it count."), "null for lifetime."),
  accounts: integer("How many accounts are ranked on this board in this window at this block.", { minimum: 0 }),
} as const;

const EXAMPLE_ROWS = [
  { rank: 1, address: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", value: "1210000000000000000", unit: "wei" },
  { rank: 2, address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", value: "500000000000000000", unit: "wei" },
];
const EXAMPLE_WINDOW = {
  board: "takeover-eth",
  window: "7d",
  windowStart: String(Number(EXAMPLE_ENVELOPE.blockTimestamp) - 604_800),
  accounts: 2,
};

export const durationBoardRoute = {
  path: "/leaderboards/:board",
  operationId: "get_leaderboard",
  summary: "Rank accounts on an official leaderboard",
  description: `${ORDER} Pages of \`limit\` with \`nextCursor\`; every page answers at the first page's block.`,
  pathParams: { board: BOARD_PATH },
  query: { window: WINDOW_PARAM, ...PAGE_PARAMS },
  errors: ["BAD_PARAMS", "NOT_FOUND", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { board: "takeover-eth", window: "7d", limit: "100" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      ...WINDOW_FIELDS,
      rows: array(ROW_SCHEMA, "This page of the ranking."),
      nextCursor: NEXT_CURSOR_SCHEMA,
    }),
    example: { ...EXAMPLE_ENVELOPE, ...EXAMPLE_WINDOW, rows: EXAMPLE_ROWS, nextCursor: null },
  },
} as const satisfies RouteDefinition;

export const durationRankRoute = {
  path: "/leaderboards/:board/:address",
  operationId: "get_leaderboard_rank",
  summary: "Look up an account's rank on an official leaderboard",
  description: `${ORDER} Answers the account's row (null when it is not ranked) and the row ranked one above it (null for rank 1 or no row): the gap to the next rank.`,
  pathParams: { board: BOARD_PATH, address: { kind: "address", required: true, description: "The account." } },
  query: { window: WINDOW_PARAM, ...AT_PARAMS },
  errors: ["BAD_PARAMS", "NOT_FOUND", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { board: "takeover-eth", address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", window: "7d" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      ...WINDOW_FIELDS,
      row: { anyOf: [ROW_SCHEMA, { type: "null" }], description: "The account's row; null when not ranked." },
      above: { anyOf: [ROW_SCHEMA, { type: "null" }], description: "The row ranked one higher; null for rank 1." },
    }),
    example: { ...EXAMPLE_ENVELOPE, ...EXAMPLE_WINDOW, row: EXAMPLE_ROWS[1], above: EXAMPLE_ROWS[0] },
  },
} as const satisfies RouteDefinition;

const BOARD_RE = new RegExp(PARAM_PATTERNS.board);

/** The board of the path: one of the seven keys, else 404 (a board that does not exist, like a path). */
export function boardOf(raw: string): DurationBoard {
  if (!BOARD_RE.test(raw)) {
    throw new NotFoundError(`No leaderboard ${raw.slice(0, 40)}.`, { boards: [...DURATION_BOARDS, "ve"] });
  }
  return raw as DurationBoard;
}

const rowJson = (board: DurationBoard, ranked: RankedBoard, i: number) => ({
  rank: i + 1,
  address: ranked.checksummed(i),
  value: (ranked.rows.get(i)?.value ?? 0n).toString(),
  unit: BOARD_UNIT[board],
});

const windowFields = (board: DurationBoard, window: BoardWindow, ranked: RankedBoard) => {
  const span = BOARD_WINDOWS[window];
  return {
    board,
    window,
    windowStart: span === null ? null : (ranked.time - span).toString(),
    accounts: ranked.rows.length,
  };
};

async function resolve(
  rt: IndexRuntime,
  c: Context,
  board: DurationBoard,
  window: BoardWindow,
  block: bigint | null,
  param: "block" | "cursor",
) {
  // Held: answered without the gate; else admitted, charged and computed in its lane, as the ve board.
  const { value, at } = await answerAt(rt, c, rt.durationBoards.memo(board, window), block, param);
  return { ranked: value, at };
}

/**
 * A page of a block's ranking from row `start`, `limit` rows at most, as its JSON members up to its next cursor
 * (`nextCursor: null` on the last page): made into text once (keptFields), as the ve board's, and made ahead for the
 * next head when read at the head.
 */
function pageRows(
  rt: IndexRuntime,
  board: DurationBoard,
  window: BoardWindow,
  ranked: RankedBoard,
  start: number,
  limit: number,
): string {
  const end = Math.min(start + limit, ranked.rows.length);
  return keptFields(rt, ranked, `${board}:${window}:${start}:${end}`, () => {
    const rows = Array.from({ length: Math.max(end - start, 0) }, (_, i) => rowJson(board, ranked, start + i));
    const fields = { ...windowFields(board, window, ranked), rows };
    return end < ranked.rows.length ? fields : { ...fields, nextCursor: null };
  });
}

/** The page's members: its rows, then (not the last page) the next cursor under `seal` (api/read/cursorSeal.ts). */
function pageFields(
  rt: IndexRuntime,
  board: DurationBoard,
  window: BoardWindow,
  ranked: RankedBoard,
  start: number,
  limit: number,
  seal: BoardSeal | null,
): string {
  const rows = pageRows(rt, board, window, ranked, start, limit);
  const end = Math.min(start + limit, ranked.rows.length);
  const last = ranked.rows.get(end - 1);
  if (end >= ranked.rows.length || last === undefined) return rows;
  const after = { ve: last.value, address: last.address };
  const list = cursorList.board(board, window);
  return withNextCursor(rt, ranked, `${board}:${window}:${start}:${end}`, rows, seal, () =>
    rt.cursors.encode({ kind: "board", list, block: ranked.block, seal, after }),
  );
}

/** A leaderboard's page and rank lookup, each answering its request. */
export type BoardHandlers = {
  board: (c: Context<AppEnv, typeof durationBoardRoute.path>) => Promise<Response>;
  rank: (c: Context<AppEnv, typeof durationRankRoute.path>) => Promise<Response>;
};

/** The duration boards' page and rank lookup (api/index/router.ts mounts them beside the ve board's). */
export function durationBoardHandlers(rt: IndexRuntime): BoardHandlers {
  const shown = boardAnswers(rt);
  const page: BoardHandlers["board"] = async (c) => {
    const board = boardOf(c.req.param("board"));
    const q = parseQuery(c.req.url, durationBoardRoute.query);
    const window = q.window as BoardWindow;
    const cursor =
      q.cursor === undefined ? undefined : rt.cursors.decode(q.cursor, "board", cursorList.board(board, window));
    const { block, param } = requestedBlock(q.block, cursor?.block);
    const { ranked, at } = await resolve(rt, c, board, window, block, param);
    if (cursor) await judgeBoardCursor(rt, cursor, at.time, "cursor", requestDeadline(c));
    const start =
      cursor === undefined ? 0 : ranked.rows.after({ value: cursor.after.ve, address: cursor.after.address });
    const limit = Number(q.limit);
    const seal = cursor
      ? cursor.seal
      : start + limit < ranked.rows.length
        ? boardSeal(rt, ranked, at.head.finalized)
        : null;
    return answerFields(c, shown, at, () => {
      const fields = pageFields(rt, board, window, ranked, start, limit, seal);
      // The head's first page, when kept as text: made for each next head as soon as its ranking is (the ve board's).
      if (!at.pinned && cursor === undefined && fields.length <= KEPT_FIELDS.maxChars) {
        const memo = rt.durationBoards.memo(board, window);
        rt.ahead?.follow(memo, `0+${limit}`, (next) => {
          pageRows(rt, board, window, next, 0, limit);
        });
      }
      return fields;
    });
  };

  const rank: BoardHandlers["rank"] = async (c) => {
    const board = boardOf(c.req.param("board"));
    const account = parseAddressKey("address", c.req.param("address"));
    const q = parseQuery(c.req.url, durationRankRoute.query);
    const window = q.window as BoardWindow;
    const { ranked, at } = await resolve(rt, c, board, window, q.block ?? null, "block");
    const i = ranked.position.get(account);
    return answer(c, shown, at, {
      ...windowFields(board, window, ranked),
      row: i === undefined ? null : rowJson(board, ranked, i),
      above: i === undefined || i === 0 ? null : rowJson(board, ranked, i - 1),
    });
  };
  return { board: page, rank };
}
