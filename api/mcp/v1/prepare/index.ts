import type { Hono } from "hono";
import { deadlineRpc } from "../../../http/cancellation";
import { NotFoundError } from "../../../http/errors";
import { collectAll, collectRoyalties } from "./collect";
import { lockViaFurnace } from "./furnace";
import { harvestRewards } from "./harvest";
import { extend, lock, topup } from "./lock";
import { stakeLp, unbondLp, withdrawLp } from "./lp";
import type { PrepareAction, PrepareDeps } from "./pipeline";

/**
 * GET /prepare/<action> (spec §4.3): the ten actions in the order of the spec's table. ACTIONS is the
 * single source for the served routes and for their documentation (verb, steps, contract, function,
 * params, description), so docs and behaviour cannot drift apart.
 */
export const ACTIONS: readonly PrepareAction[] = [
  collectAll,
  collectRoyalties,
  harvestRewards,
  withdrawLp,
  lockViaFurnace,
  stakeLp,
  unbondLp,
  lock,
  topup,
  extend,
];

export const ACTION_NAMES: readonly string[] = ACTIONS.map((a) => a.action);

const BY_NAME = new Map(ACTIONS.map((a) => [a.action, a]));

export function registerPrepareRoutes(v1: Hono<AppEnv>, deps: PrepareDeps): void {
  v1.get("/prepare/:action", async (c) => {
    const action = BY_NAME.get(c.req.param("action"));
    // Routing comes before the gate: an unknown action is a 404 whatever the chain's state.
    if (!action) throw new NotFoundError("No such prepare action.", { actions: ACTION_NAMES });
    // Every read of the action is bound to the request's deadline.
    const envelope = await action.run({ ...deps, rpc: deadlineRpc(c, deps.rpc) }, c.req.url);
    // Allowances and quotes change with every block: an answer is never reused.
    c.header("cache-control", "no-store");
    return c.json(envelope);
  });
}

export type {
  ActionMeta,
  PrepareAction,
  PrepareDeps,
  PreparedTransaction,
  PrepareEnvelope,
  Step,
} from "./pipeline";

import type { AppEnv } from "../../../http/env";
