import type { Hono } from "hono";
import type { AppEnv } from "../http/env";
import { NotFoundError } from "../http/errors";
import { parseQuery, parseUint256 } from "../http/params";
import { type IndexRuntime, readAtBlock } from "../read/runtime";
import { ENVELOPE_SCHEMA, EXAMPLE_ENVELOPE, EXAMPLE_LOCK, LOCK_SCHEMA, lockJson } from "../read/shapes";
import type { RouteDefinition } from "../route/definition";
import { object } from "../route/jsonSchema";
import { answer } from "./answer";
import { AT_PARAMS, TOKEN_ID_PATH } from "./query";

/** GET /locks/:tokenId — one lock as getLockInfo and ownerOf report it at the block, with its ve. */
export const lockRoute = {
  path: "/locks/:tokenId",
  operationId: "get_lock",
  summary: "Read one lock",
  description:
    "A vote-escrow lock at one block (`blockNumber`, default the index's head): owner, amount, end, AutoMax, " +
    "listing and its ve, exactly as the lock contract's getLockInfo / ownerOf report them at that block. A lock " +
    "merged away or unlocked is answered with `burned: true` and no owner; an id not minted by that block is 404.",
  pathParams: { tokenId: TOKEN_ID_PATH },
  query: AT_PARAMS,
  errors: ["BAD_PARAMS", "NOT_FOUND", "INDEX_UNAVAILABLE", "STATE_READ_FAILED"],
  exampleRequest: { tokenId: "42" },
  response: {
    schema: object({ ...ENVELOPE_SCHEMA, lock: LOCK_SCHEMA }),
    example: {
      ...EXAMPLE_ENVELOPE,
      lock: EXAMPLE_LOCK,
    },
  },
} as const satisfies RouteDefinition;

export function registerLockRoute(router: Hono<AppEnv>, rt: IndexRuntime): void {
  router.get(lockRoute.path, async (c) => {
    const tokenId = parseUint256("tokenId", c.req.param("tokenId"));
    const q = parseQuery(c.req.url, lockRoute.query);
    const read = await readAtBlock(rt, c, q.block ?? null, "block", (at, signal) => rt.index.lock(tokenId, at, signal));
    if (read.value === null) {
      throw new NotFoundError(`No lock ${tokenId} was minted by block ${read.block}.`, {
        tokenId: tokenId.toString(),
        blockNumber: read.block.toString(),
      });
    }
    return answer(c, rt, read, { lock: lockJson(read.value, read.time) });
  });
}
