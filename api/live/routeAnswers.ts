/**
 * A route's answer fetched in process, as the stream hub (api/index/streamHub.ts) and the webhooks
 * (api/webhooks/engine.ts) send it: through the REST route itself, so there is no second query path. Shared here
 * (api/live) so neither feature imports the other.
 */
import type { Hono } from "hono";
import { type AppEnv, STREAM_HUB_REQUEST } from "../http/env";

/** Fetches a route's answer (its JSON text), or null when the route has none to give (a lock not minted yet: 404). */
export type AnswerFetcher = (pathAndQuery: string) => Promise<string | null>;

/**
 * The answers of `router` (the index routes, mounted at /api/index/v1). Marked as the server's own request
 * (STREAM_HUB_REQUEST, api/http/env.ts, settable only by code): it charges no client's budget — the client was charged
 * when it opened its stream or the operator registered the webhook. `what` names the caller in a failure's message.
 */
export function routeAnswers(router: Hono<AppEnv>, what: string): AnswerFetcher {
  return async (path) => {
    const res = await router.request(path, undefined, { [STREAM_HUB_REQUEST]: true });
    if (res.status === 404) return null;
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${what} answer ${path}: ${res.status} ${text.slice(0, 200)}`);
    return text;
  };
}
