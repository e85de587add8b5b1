import type { Context, Hono } from "hono";
import type { AppEnv } from "../http/env";
import { NotFoundError } from "../http/errors";
import { parseAddress, parseQuery, parseUint256 } from "../http/params";
import type { EventsOf } from "../read/contract";
import { checkSeal, cursorList, sealAsk } from "../read/cursor";
import { type IndexRuntime, readAtBlock, requestedBlock } from "../read/runtime";
import { ENVELOPE_SCHEMA, EVENT_SCHEMA, EXAMPLE_ENVELOPE, eventJson, NEXT_CURSOR_SCHEMA } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { array, object } from "../route/jsonSchema";
import { answerPage, type Pages, withRows } from "./answer";
import { ADDRESS_PATH, PAGE_PARAMS, TOKEN_ID_PATH } from "./query";

/**
 * The histories: GET /locks/:tokenId/events and GET /accounts/:address/events, newest first (block, then log
 * index), in keyset pages pinned to the block of the first page.
 */

const pageSchema = object({
  ...ENVELOPE_SCHEMA,
  events: array(EVENT_SCHEMA, "Newest first: by block, then log index."),
  nextCursor: NEXT_CURSOR_SCHEMA,
});

const EXAMPLE_EVENT = {
  kind: "create",
  tokenId: "42",
  account: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  amountWei: "10000000000000000000000",
  lockEnd: "1795000000",
  autoMax: false,
  fromTokenId: null,
  recipient: null,
  owner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  lockAmountWei: "10000000000000000000000",
  listed: false,
  blockNumber: "37990112",
  blockTimestamp: "1763804376",
  txHash: `0x${"3f".repeat(32)}`,
  logIndex: 7,
};
const EXAMPLE_PAGE = {
  ...EXAMPLE_ENVELOPE,
  events: [
    {
      ...EXAMPLE_EVENT,
      kind: "topup",
      amountWei: "500000000000000000000",
      lockAmountWei: "10500000000000000000000",
      blockNumber: "38002291",
      blockTimestamp: "1763828734",
      txHash: `0x${"a1".repeat(32)}`,
      logIndex: 3,
    },
    EXAMPLE_EVENT,
  ],
  nextCursor: null,
};

export const lockEventsRoute = {
  path: "/locks/:tokenId/events",
  operationId: "get_lock_history",
  summary: "List a lock's history",
  description:
    "Every lifecycle event of one lock up to the block (default the index's head), newest first: creation (its " +
    "oldest), top-ups, extensions, AutoMax changes, listings, a merge into it or of it into another (fromTokenId), " +
    "a sell-back transfer, its unlock. Each event carries the lock's state right after it. Pages of `limit` with " +
    "`nextCursor`; every page answers at the first page's block. 404 when the lock was not minted by that block.",
  pathParams: { tokenId: TOKEN_ID_PATH },
  query: PAGE_PARAMS,
  errors: ["BAD_PARAMS", "NOT_FOUND", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { tokenId: "42", limit: "100" },
  response: { schema: pageSchema, example: EXAMPLE_PAGE },
} as const satisfies RouteDefinition;

export const accountEventsRoute = {
  path: "/accounts/:address/events",
  operationId: "get_account_history",
  summary: "List an account's lock history",
  description:
    "Every lock event an account acted in (created, topped up, extended, merged, unlocked, switched AutoMax, sold, " +
    "had listed) or received a lock by (a sell-back's receiver), up to the block (default the index's head), " +
    "newest first. Pages of `limit` with `nextCursor`; every page answers at the first page's block.",
  pathParams: { address: ADDRESS_PATH },
  query: PAGE_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", limit: "100" },
  response: { schema: pageSchema, example: EXAMPLE_PAGE },
} as const satisfies RouteDefinition;

async function eventsPage(
  rt: IndexRuntime,
  pages: Pages,
  c: Context,
  of: EventsOf,
  missing?: (block: bigint) => Error,
) {
  const q = parseQuery(c.req.url, PAGE_PARAMS);
  const list = cursorList.history(of);
  const cursor = q.cursor === undefined ? undefined : rt.cursors.decode(q.cursor, "events", list);
  const { block, param } = requestedBlock(q.block, cursor?.block);
  const limit = Number(q.limit);
  // One row more than the page: whether a next page exists, without a count.
  return withRows(c, pages, limit + 1, async () => {
    // The seal in the rows' statement: the first page's, or (a sealed cursor) its range's again, to judge it.
    const read = await readAtBlock(rt, c, block, param, (at, signal) =>
      rt.index.events(of, at, { limit: limit + 1, after: cursor?.after ?? null, seal: sealAsk(cursor) }, signal),
    );
    if (cursor) checkSeal(cursor, read.seal);
    if (read.value.length === 0 && cursor === undefined && missing) throw missing(read.block);
    const rows = read.value.slice(0, limit);
    const last = rows.at(-1);
    const after = last && { block: last.blockNumber, logIndex: last.logIndex };
    const seal = cursor ? cursor.seal : (read.seal ?? null);
    const nextCursor =
      read.value.length > limit && after
        ? rt.cursors.encode({ kind: "events", list, block: read.block, seal, after })
        : null;
    return answerPage(c, rt, pages, read, rows.length, () => ({ events: rows.map(eventJson), nextCursor }));
  });
}

export function registerHistoryRoutes(router: Hono<AppEnv>, rt: IndexRuntime, pages: Pages): void {
  router.get(lockEventsRoute.path, (c) => {
    const tokenId = parseUint256("tokenId", c.req.param("tokenId"));
    // A lock's oldest event is its creation: no event by the block means no lock by then.
    return eventsPage(
      rt,
      pages,
      c,
      { tokenId },
      (block) =>
        new NotFoundError(`No lock ${tokenId} was minted by block ${block}.`, {
          tokenId: tokenId.toString(),
          blockNumber: block.toString(),
        }),
    );
  });
  router.get(accountEventsRoute.path, (c) =>
    eventsPage(rt, pages, c, { account: parseAddress("address", c.req.param("address")) }),
  );
}
