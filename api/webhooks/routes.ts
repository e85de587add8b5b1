/**
 * The operators' webhook routes under /api/index/v1 (docs/api.md, "Webhooks"), each behind OPERATOR_TOKEN as a
 * bearer (401 UNAUTHORIZED without it, or when none is set): register `{ url, topics }` (the answer carries the
 * signing secret, once), list, delete, list deliveries (`?status=dead`), replay a webhook's dead deliveries.
 * Without a webhook store (no database) they answer 503 INDEX_UNAVAILABLE after the token is checked. The app
 * (api/app.ts) registers them on the index routes' router, whose answers the deliveries carry (api/live/).
 */

import type { Context, Hono } from "hono";
import type { AppEnv } from "../http/env";
import {
  ApiError,
  BadParamsError,
  IndexUnavailableError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
} from "../http/errors";
import { metricsAccess } from "../http/metricsAccess";
import { type ParamSpec, parseQuery } from "../http/params";
import { routeAnswers } from "../live/routeAnswers";
import { type IndexRuntime, pgCodeOf } from "../read/runtime";
import type { Webhooks } from "./service";
import { newSecret } from "./signature";
import type { DeliveryStatus } from "./store";
import { checkTarget, parseTargetUrl } from "./target";
import { parseWebhookTopics } from "./topics";

export const WEBHOOKS_PATH = "/webhooks";
/** A registration's body: a URL and at most 32 topics fit in far less. */
export const WEBHOOK_BODY_MAX_BYTES = 16 * 1024;
const REGISTRATION_MEMBERS = ["url", "topics"];

/**
 * Each route's query, judged by parseQuery as every route's (an unknown, repeated or malformed parameter is 400
 * BAD_PARAMS naming it, never ignored) and stated by the OpenAPI document (api/webhooks/openapi.ts). Only the
 * deliveries' list takes any: `?status=dead` on the list of webhooks is refused, not a filter silently not applied.
 */
export const DELIVERIES_QUERY = {
  status: { kind: "deliveryStatus", description: "Only the deliveries in this state (`dead`: what needs a replay)." },
  webhook: { kind: "webhookId", description: "Only this webhook's deliveries." },
  limit: { kind: "uint256", min: 1n, max: 500n, default: "100", description: "At most this many, newest first." },
} as const satisfies ParamSpec;
export const NO_QUERY = {} as const satisfies ParamSpec;

export type WebhookRouteOptions = { webhooks: Webhooks | null; operatorToken: string | null };

const NO_STORE = { "cache-control": "no-store" };

export function registerWebhookRoutes(router: Hono<AppEnv>, rt: IndexRuntime, options: WebhookRouteOptions): void {
  const access = metricsAccess(options.operatorToken);
  const { webhooks } = options;
  if (webhooks && rt.signal) {
    webhooks.attach(rt, routeAnswers(router, "webhook"));
  }
  /** The operator's token checked (401), then the route's query (400), then the store (ready) or 503. */
  const guard = async <S extends ParamSpec>(c: Context<AppEnv>, query: S) => {
    if (!access?.(c.req.header("authorization"))) throw new UnauthorizedError("webhooks", "OPERATOR_TOKEN");
    const params = parseQuery(c.req.url, query);
    if (!webhooks) throw new IndexUnavailableError("unconfigured");
    await stored(() => webhooks.ready());
    return { hooks: webhooks, params };
  };

  router.post(WEBHOOKS_PATH, async (c) => {
    const { hooks } = await guard(c, NO_QUERY);
    const body = await jsonBody(c);
    const url = parseTargetUrl(body.url);
    const { texts } = parseWebhookTopics(body.topics);
    await checkTarget(url, hooks.settings.allowPrivate);
    // Deliveries start after the index's head now, even if no process has fed a head yet (the local stack's first).
    const head = await rt.index.probe(null).then(
      (p) => p.head.block,
      () => null,
    );
    if (head !== null) await stored(() => hooks.store.startFeedAt(head));
    const created = await stored(() =>
      hooks.store.create(url.toString(), texts, newSecret(), hooks.settings.maxSubscriptions),
    );
    if (!created) {
      throw new BadParamsError(
        `This deployment holds at most ${hooks.settings.maxSubscriptions} webhooks (WEBHOOK_MAX).`,
        {
          param: "url",
        },
      );
    }
    // This process's worker polls the outbox from now (another replica's notices within its check: WEBHOOK_TIMING).
    hooks.wake();
    return c.json({ ok: true, webhook: created }, 201, NO_STORE);
  });

  router.get(WEBHOOKS_PATH, async (c) => {
    const { hooks } = await guard(c, NO_QUERY);
    return c.json({ ok: true, webhooks: await stored(() => hooks.store.list()) }, 200, NO_STORE);
  });

  router.get(`${WEBHOOKS_PATH}/deliveries`, async (c) => {
    const { hooks, params } = await guard(c, DELIVERIES_QUERY);
    const { status, webhook } = params;
    const deliveries = await stored(() =>
      hooks.store.deliveries({
        limit: Number(params.limit),
        ...(status ? { status: status as DeliveryStatus } : {}),
        ...(webhook ? { webhook } : {}),
      }),
    );
    return c.json({ ok: true, deliveries }, 200, NO_STORE);
  });

  router.delete(`${WEBHOOKS_PATH}/:id`, async (c) => {
    const { hooks } = await guard(c, NO_QUERY);
    const id = c.req.param("id");
    if (!(await stored(() => hooks.store.remove(id)))) throw new NotFoundError(`No webhook ${id}.`, { id });
    return c.json({ ok: true, deleted: id }, 200, NO_STORE);
  });

  router.post(`${WEBHOOKS_PATH}/:id/replay`, async (c) => {
    const { hooks } = await guard(c, NO_QUERY);
    const id = c.req.param("id");
    if (!(await stored(() => hooks.store.exists(id)))) throw new NotFoundError(`No webhook ${id}.`, { id });
    const replayed = await stored(() => hooks.store.replay(id));
    hooks.wake();
    return c.json({ ok: true, webhook: id, replayed }, 200, NO_STORE);
  });
}

/**
 * A store operation; the database's failure is a 503, never a 500. A refusal of the API's database user (SQLSTATE
 * 42501: no CREATE for the schema, no rights on its tables) is the database answering, not failing to: "not
 * permitted", a grant to make (docs/operations.md, Topology), not an outage to wait out.
 */
async function stored<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (pgCodeOf(error) === INSUFFICIENT_PRIVILEGE) {
      throw new IndexUnavailableError("not permitted", { cause: error }, { message: NOT_PERMITTED, detail: {} });
    }
    throw new IndexUnavailableError("unreachable", { cause: error });
  }
}

const INSUFFICIENT_PRIVILEGE = "42501";
const NOT_PERMITTED =
  "The webhooks' tables are not open to this API's database user (it needs CREATE on the database, or their " +
  "schema made for it, and the rights on their tables).";

async function jsonBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (Buffer.byteLength(text) > WEBHOOK_BODY_MAX_BYTES) throw new PayloadTooLargeError(WEBHOOK_BODY_MAX_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadParamsError("The body must be JSON: { url, topics }.", { param: "body" });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadParamsError("The body must be a JSON object: { url, topics }.", { param: "body" });
  }
  // As a query's unknown parameter, and as the OpenAPI document says (additionalProperties: false): a member we do not
  // read (a misspelt `topic`, a `secret` the client hoped to choose) is refused, not ignored.
  for (const name of Object.keys(value)) {
    if (!REGISTRATION_MEMBERS.includes(name)) {
      throw new BadParamsError(`Unknown member "${name.slice(0, 64)}": the body is { url, topics }.`, {
        param: name.slice(0, 64),
      });
    }
  }
  return value as Record<string, unknown>;
}
