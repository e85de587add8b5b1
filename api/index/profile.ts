import type { Hono } from "hono";
import type { AppEnv } from "../http/env";
import { parseAddress, parseQuery } from "../http/params";
import { BOARD_UNIT, DURATION_BOARDS } from "../read/contract";
import {
  admitComputation,
  atIndexHead,
  blockAnswer,
  blockAnswers,
  guarded,
  type IndexRuntime,
  pinBlock,
} from "../read/runtime";
import { ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { addressString, integer, type JsonSchema, object, uintString } from "../route/jsonSchema";
import { answer } from "./answer";
import { ADDRESS_PATH, AT_PARAMS } from "./query";

/**
 * An account's profile: its lifetime figure and rank on each of the seven duration boards and its ve and rank on
 * the ve board, and the first and last blocks of its activity — all at one block. The ranks are read from the
 * block's shared rankings (api/read/durationBoards.ts, api/read/veBoard.ts): a map lookup each once the block's
 * boards are computed. Computing them goes through the compute gate and the request cost as every ranking does
 * (api/read/runtime.ts admitComputation): at a past block not held, up to eight computations, each admitted and
 * charged.
 */

const nullable = (schema: JsonSchema, description: string): JsonSchema => ({
  anyOf: [schema, { type: "null" }],
  description,
});

const ENTRY = object({
  value: uintString('The account\'s lifetime figure on the board (ve: its ve at the block); "0" when not on it.'),
  rank: nullable(integer("Its rank.", { minimum: 1 }), "null when not on the board."),
  unit: { type: "string", enum: ["wei", "seconds", "count"], description: "What `value` counts." },
});

const BOARD_KEYS = [...DURATION_BOARDS, "ve"] as const;

export const profileRoute = {
  path: "/accounts/:address",
  operationId: "get_account_profile",
  summary: "Show an account's profile",
  description:
    "At one block (default the index's head): the account's lifetime figure and rank on each of the seven duration " +
    'boards, its ve and rank on the ve board (value "0" and rank null where it is not ranked), and the first and ' +
    "last blocks with an indexed event that concerns it (null without any).",
  pathParams: { address: ADDRESS_PATH },
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      address: addressString("The account (EIP-55)."),
      boards: object(Object.fromEntries(BOARD_KEYS.map((k) => [k, ENTRY])), {
        description: "Per board: its figure and rank.",
      }),
      firstActivityBlock: nullable(uintString("The first block of its activity."), "null: none indexed."),
      lastActivityBlock: nullable(uintString("The last block of its activity."), "null: none indexed."),
    }),
    example: {
      ...EXAMPLE_ENVELOPE,
      address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      boards: Object.fromEntries(
        BOARD_KEYS.map((k, i) => [
          k,
          i % 3 === 2
            ? { value: "0", rank: null, unit: k === "ve" ? "wei" : BOARD_UNIT[k as (typeof DURATION_BOARDS)[number]] }
            : {
                value: k === "takeovers" ? "3" : "1500000000000000000",
                rank: i + 1,
                unit: k === "ve" ? "wei" : BOARD_UNIT[k as (typeof DURATION_BOARDS)[number]],
              },
        ]),
      ),
      firstActivityBlock: "38100210",
      lastActivityBlock: "38118402",
    },
  },
} as const satisfies RouteDefinition;

export function registerProfileRoute(router: Hono<AppEnv>, rt: IndexRuntime): void {
  router.get(profileRoute.path, async (c) => {
    const account = parseAddress("address", c.req.param("address"));
    const q = parseQuery(c.req.url, profileRoute.query);
    const block = q.block ?? null;
    const lifetime = DURATION_BOARDS.map((b) => rt.durationBoards.memo(b, "lifetime"));
    const who = account.toLowerCase();
    // Each of the eight rankings the block's memos do not hold is one computation: admitted and charged (past), or
    // in the head's lane, like a board route's.
    const { at, ranked, ve, span } = await admitComputation(rt, c, [...lifetime, rt.boards], block, () =>
      atIndexHead(c, block, async () => {
        const at = await pinBlock(rt, c, block, "block");
        const rankings = async () => ({
          ranked: await blockAnswers(rt, lifetime, at),
          ve: await blockAnswer(rt, rt.boards, at),
        });
        const [{ ranked, ve }, span] = await Promise.all([
          rankings(),
          guarded(rt, () => rt.protocol.activitySpan(account, { block: at.block, time: at.time })),
        ]);
        return { at, ranked, ve, span };
      }),
    );
    const boards: Record<string, { value: string; rank: number | null; unit: string }> = {};
    DURATION_BOARDS.forEach((b, j) => {
      const board = ranked[j]!;
      const i = board.position.get(who);
      boards[b] = {
        value: i === undefined ? "0" : (board.rows.get(i)?.value ?? 0n).toString(),
        rank: i === undefined ? null : i + 1,
        unit: BOARD_UNIT[b],
      };
    });
    const v = ve.position.get(who);
    boards.ve = {
      value: v === undefined ? "0" : (ve.rows.get(v)?.ve ?? 0n).toString(),
      rank: v === undefined ? null : v + 1,
      unit: "wei",
    };
    return answer(c, rt, at, {
      address: account,
      boards,
      firstActivityBlock: span.value === null ? null : span.value.first.toString(),
      lastActivityBlock: span.value === null ? null : span.value.last.toString(),
    });
  });
}
