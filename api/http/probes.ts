/**
 * The probes and the metrics route: answered without touching the chain. /ready's check is bounded by whoever
 * gives it (api/server/indexDatabase.ts); with METRICS_PORT the metrics have a listener of their own
 * (api/server/metricsServer.ts) and the public port answers /api/metrics with 404; with METRICS_TOKEN a scrape
 * must bring it.
 */
import type { Hono } from "hono";
import { buildInfo } from "../buildInfo";
import { HEALTH_PATH, METRICS_PATH, READY_PATH } from "../paths";
import type { AppEnv } from "./env";
import { UnauthorizedError } from "./errors";
import { metricsAccess } from "./metricsAccess";

/**
 * GET /ready: whether this process can answer with its index right now. Index lag does not count. A process without an
 * index (no DATABASE_URL: the local network only) is ready — nothing it was configured with is missing — and says so
 * with `index: "unconfigured"`, since its index routes and GraphQL all answer 503 INDEX_UNAVAILABLE "unconfigured".
 */
export type ReadyState =
  | { ready: true; index?: "unconfigured" }
  | {
      ready: false;
      reason: "database unreachable" | "index missing" | "index of another chain" | "index reads failing";
    };

export type ProbesOptions = {
  /** What GET /ready reports; default: ready, with no index (`index: "unconfigured"`). */
  readiness?: () => Promise<ReadyState>;
  /** The metrics on this port (METRICS_PORT unset): their text and content type, and the token a scrape needs. */
  metrics: { render: () => Promise<string>; contentType: string; token: string | null } | null;
};

const NO_STORE = { "cache-control": "no-store" } as const;

export function registerProbes(app: Hono<AppEnv>, { readiness, metrics }: ProbesOptions): void {
  // The release this process runs (api/buildInfo.ts); the commit and Node's version are on api_build_info.
  app.get(HEALTH_PATH, (c) => c.json({ ok: true, status: "up", version: buildInfo().version }, 200, NO_STORE));
  app.get(READY_PATH, async (c) => {
    const state: ReadyState = readiness ? await readiness() : { ready: true, index: "unconfigured" };
    return state.ready
      ? c.json({ ok: true, status: "ready", ...(state.index ? { index: state.index } : {}) }, 200, NO_STORE)
      : c.json({ ok: false, status: "unready", reason: state.reason }, 503, NO_STORE);
  });
  if (!metrics) return;
  const allowed = metricsAccess(metrics.token);
  app.get(METRICS_PATH, async (c) => {
    if (allowed && !allowed(c.req.header("authorization"))) throw new UnauthorizedError();
    return c.body(await metrics.render(), 200, { "content-type": metrics.contentType, ...NO_STORE });
  });
}
