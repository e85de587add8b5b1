import type { Hono } from "hono";
import type { AppEnv } from "../http/env";
import { parseAddress, parseQuery } from "../http/params";
import { type IndexRuntime, readAtBlock } from "../read/runtime";
import { ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE, EXAMPLE_LOCK, LOCK_SCHEMA, lockJson } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { array, object } from "../route/jsonSchema";
import { answerPage, type Pages } from "./answer";
import { ADDRESS_PATH, AT_PARAMS } from "./query";

/** GET /accounts/:address/locks — the account's live locks at the block, by token id. */
export const accountLocksRoute = {
  path: "/accounts/:address/locks",
  operationId: "get_account_locks",
  summary: "List an account's locks",
  description:
    "The account's live vote-escrow locks at one block (default the index's head), by token id, each as " +
    "getLockInfo reports it there, with its ve; their ve sums to the account's veBalanceOf at that block. At most " +
    "32 (the contract's limit per owner; a sell-back's receiver may hold more).",
  pathParams: { address: ADDRESS_PATH },
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { address: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" },
  response: {
    schema: object({ ...ENVELOPE_SCHEMA, locks: array(LOCK_SCHEMA, "Live locks by token id.") }),
    example: {
      ...EXAMPLE_ENVELOPE,
      locks: [EXAMPLE_LOCK],
    },
  },
} as const satisfies RouteDefinition;

export function registerAccountLocksRoute(router: Hono<AppEnv>, rt: IndexRuntime, pages: Pages): void {
  router.get(accountLocksRoute.path, async (c) => {
    const owner = parseAddress("address", c.req.param("address"));
    const q = parseQuery(c.req.url, accountLocksRoute.query);
    const read = await readAtBlock(rt, c, q.block ?? null, "block", (at, signal) =>
      rt.index.locksOf(owner, at, signal),
    );
    const locks = () => ({ locks: read.value.map((l) => lockJson(l, read.time)) });
    return answerPage(c, rt, pages, read, read.value.length, locks);
  });
}
