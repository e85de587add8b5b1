import type { Hono } from "hono";
import type { Address, Hex } from "viem";
import type { AppEnv } from "../http/env";
import { BadParamsError, NotFoundError } from "../http/errors";
import { PARAM_PATTERNS, type ParamDoc, parseQuery } from "../http/params";
import { checkSeal, cursorList, sealAsk } from "../read/cursor";
import { type IndexRuntime, readAtBlock, requestedBlock } from "../read/runtime";
import { ACTIVITY_KINDS, activityJson, ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE, NEXT_CURSOR_SCHEMA } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { addressString, array, integer, object, uintString } from "../route/jsonSchema";
import { answer, answerPage, type Pages, withRows } from "./answer";
import { AT_PARAMS, PAGE_PARAMS } from "./query";

/**
 * The activity feed: every indexed event of VeLockNFT (the lock history's kinds), Furnace, ShareholderRoyalties
 * and MineCore, newest first (block, then log index), with a permalink per event. One statement per page over
 * lock_event and protocol_event (api/read/atBlock.ts activity), at one block.
 */

const KIND_PARAM = {
  kind: "kinds",
  description: `Only these kinds, one or several comma-separated: ${ACTIVITY_KINDS.map((k) => `\`${k}\``).join(", ")}.`,
} as const satisfies ParamDoc;
const ACCOUNT_PARAM = {
  kind: "address",
  description: "Only events that concern this account (user, owner, king, newKing, previousKing, a lock's receiver).",
} as const satisfies ParamDoc;

const ITEM_SCHEMA = object({
  id: {
    type: "string",
    pattern: "^0x[0-9a-f]{64}-(0|[1-9][0-9]*)$",
    description: "`{txHash}-{logIndex}`: the permalink.",
  },
  kind: { type: "string", enum: [...ACTIVITY_KINDS], description: "What happened." },
  accounts: array(addressString("An account (EIP-55)."), "The accounts it concerns: who acted first.", {
    minItems: 1,
  }),
  fields: {
    type: "object",
    additionalProperties: {
      anyOf: [{ type: "string" }, { type: "integer" }, { type: "boolean" }, { type: "null" }],
    },
    description:
      "The event's own fields (uint256 as decimal strings, addresses EIP-55); a lock event's are its lock's " +
      "state right after it (tokenId, amount, fromTokenId, owner, lockAmount, lockEnd, autoMax, listed, burned).",
  },
  blockNumber: uintString("The event's block."),
  blockTimestamp: uintString("That block's timestamp."),
  txHash: { type: "string", pattern: "^0x[0-9a-f]{64}$", description: "The transaction." },
  logIndex: integer("The log's index in its block.", { minimum: 0 }),
});

const EXAMPLE_ITEM = {
  id: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060-3",
  kind: "takeover",
  accounts: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"],
  fields: {
    reignId: "7",
    previousKing: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
    newKing: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    pricePaid: "17715610000000000",
    referencePrice: "17715610000000000",
    timestamp: "1764061200",
  },
  blockNumber: "38118524",
  blockTimestamp: "1764061200",
  txHash: "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060",
  logIndex: 3,
};

export const activityRoute = {
  path: "/activity",
  operationId: "get_activity",
  summary: "List the protocol's activity",
  description:
    "Every indexed event up to the block (default the index's head), newest first (block, then log index): the " +
    "lock kinds (create, topup, extend, merge, unlock, automax, transfer, list, unlist) and `furnace-enter`, " +
    "`royalty-claim`, `takeover`, `reign-finalized`. `kind` keeps one or several kinds; `account` the events that " +
    "concern an account. Pages of `limit` with `nextCursor`; every page answers at the first page's block.",
  query: { kind: KIND_PARAM, account: ACCOUNT_PARAM, ...PAGE_PARAMS },
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { kind: "takeover,reign-finalized", limit: "20" },
  response: {
    schema: object({
      ...ENVELOPE_SCHEMA,
      events: array(ITEM_SCHEMA, "This page of events, newest first."),
      nextCursor: NEXT_CURSOR_SCHEMA,
    }),
    example: { ...EXAMPLE_ENVELOPE, events: [EXAMPLE_ITEM], nextCursor: null },
  },
} as const satisfies RouteDefinition;

export const activityItemRoute = {
  path: "/activity/:id",
  operationId: "get_activity_item",
  summary: "Look up one event by its permalink",
  description:
    "One indexed event by `{txHash}-{logIndex}` (the `id` of a feed item), as the feed shows it; 404 when the " +
    "index holds no such event at or below the block.",
  pathParams: { id: { kind: "eventId", required: true, description: "`{txHash}-{logIndex}`." } },
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "NOT_FOUND", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { id: EXAMPLE_ITEM.id },
  response: {
    schema: object({ ...ENVELOPE_SCHEMA, event: ITEM_SCHEMA }),
    example: { ...EXAMPLE_ENVELOPE, event: EXAMPLE_ITEM },
  },
} as const satisfies RouteDefinition;

const EVENT_ID = new RegExp(PARAM_PATTERNS.eventId);
const KNOWN = new Set<string>(ACTIVITY_KINDS);

/**
 * The feed's pages are history pages like an account's events: up to 1,000 rows, so they hold rows of the process's
 * budget in flight and are built in a turn of their own (api/index/answer.ts), and start in turns
 * (api/server/turnstile.ts), as the histories do: 400 addresses pipelining `limit=1000` pages would otherwise start
 * every statement at once and decode them together (the feed was the one 1,000-row page route that skipped both).
 */
export function registerActivityRoutes(router: Hono<AppEnv>, rt: IndexRuntime, pages: Pages): void {
  router.get(activityRoute.path, async (c) => {
    const q = parseQuery(c.req.url, activityRoute.query);
    const kinds = q.kind === undefined ? null : [...new Set(q.kind.split(","))];
    const unknown = kinds?.find((k) => !KNOWN.has(k));
    if (unknown !== undefined) {
      throw new BadParamsError(`kind ${unknown} is not an activity kind.`, { param: "kind", accepted: ACTIVITY_KINDS });
    }
    const filter = { kinds, account: (q.account as Address | undefined) ?? null };
    const list = cursorList.activity(filter.kinds, filter.account);
    const cursor = q.cursor === undefined ? undefined : rt.cursors.decode(q.cursor, "events", list);
    const { block, param } = requestedBlock(q.block, cursor?.block);
    const limit = Number(q.limit);
    return withRows(c, pages, limit + 1, async () => {
      const read = await readAtBlock(rt, c, block, param, (at, signal) =>
        rt.protocol.activity(
          filter,
          at,
          { limit: limit + 1, after: cursor?.after ?? null, seal: sealAsk(cursor) },
          signal,
        ),
      );
      if (cursor) checkSeal(cursor, read.seal);
      const rows = read.value.slice(0, limit);
      const last = rows.at(-1);
      const nextCursor =
        read.value.length > limit && last
          ? rt.cursors.encode({
              kind: "events",
              list,
              block: read.block,
              seal: cursor ? cursor.seal : (read.seal ?? null),
              after: { block: last.blockNumber, logIndex: last.logIndex },
            })
          : null;
      return answerPage(c, rt, pages, read, rows.length, () => ({ events: rows.map(activityJson), nextCursor }));
    });
  });

  router.get(activityItemRoute.path, async (c) => {
    const id = c.req.param("id");
    if (!EVENT_ID.test(id)) {
      throw new BadParamsError("id must be {txHash}-{logIndex}: 0x + 64 hex, a dash, a log index.", { param: "id" });
    }
    const [tx, li] = id.split("-") as [string, string];
    const q = parseQuery(c.req.url, activityItemRoute.query);
    const read = await readAtBlock(rt, c, q.block ?? null, "block", (at, signal) =>
      rt.protocol.activityItem(tx.toLowerCase() as Hex, Number(li), at, signal),
    );
    if (read.value === null) {
      throw new NotFoundError(`No indexed event ${id} at or below block ${read.block}.`, {
        blockNumber: read.block.toString(),
      });
    }
    return answer(c, rt, read, { event: activityJson(read.value) });
  });
}
