/**
 * One info line and one counter increment per request, whatever the outcome (success, envelope
 * error, 404, 405, 429, OPTIONS). Only the matched route pattern is recorded, never the raw path or
 * query, so neither a user's address nor unbounded label values reach logs or metrics. The edge
 * middleware (api/http/edge.ts) calls the recorder once the response is known.
 */
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { RouterRoute } from "hono/types";
import { truncateIp } from "../net/ip";
import type { Logger } from "../observability/logger";
import type { Metrics } from "../observability/metrics";
import { HEALTH_PATH, METRICS_PATH, READY_PATH, SUPPLY_BASE } from "../paths";
import { clientGone } from "./cancellation";
import type { ClientIpResolver } from "./clientIp";
import { ApiError } from "./errors";

export const UNMATCHED_ROUTE = "unmatched";

/**
 * The route that serves this request, known before any handler runs and even when a middleware
 * answers first (a 429); undefined when no route has this path. Middleware registered with `use()`
 * (method ALL, path ending in `*`) is skipped. Scans backwards without building a filtered copy:
 * this runs on every request.
 */
export function matchedRoute(c: Context): RouterRoute | undefined {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i]!;
    if (!(r.method === "ALL" && r.path.endsWith("*"))) return r;
  }
  return undefined;
}

/** The pattern of the route that serves this request ("/api/mcp/v1/state/:address"), or "unmatched". */
export function routeLabel(c: Context): string {
  return matchedRoute(c)?.path ?? UNMATCHED_ROUTE;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]);
/** The method label's values: the known methods, then OTHER. */
const METHOD_LABELS = [...KNOWN_METHODS, "OTHER"];
const SUPPLY_PREFIX = `${SUPPLY_BASE}/`;
/** Polled by load balancers and Prometheus every few seconds on every replica. */
const PROBE_ROUTES = new Set([HEALTH_PATH, READY_PATH, METRICS_PATH]);

export type RequestOutcome = {
  requestId: string;
  /** routeLabel(c), computed once by the caller. */
  route: string;
  status: number;
  /** performance.now() when the request came in. */
  started: number;
  /** A throw that escaped every handler (answered 500 by onError after this record). */
  escaped?: Error;
};

export type RequestRecorder = (c: Context, outcome: RequestOutcome) => void;

/** nginx's status for a request whose client closed the connection before the answer: recorded, never sent. */
export const CLIENT_CLOSED_REQUEST = 499;

/** A request's two series (its count and its duration), resolved once per route, method and status. */
type RequestSeries = { count: { inc(): void }; duration: { observe(seconds: number): void } };

export function requestRecorder(o: { logger: Logger; metrics: Metrics; clientIp: ClientIpResolver }): RequestRecorder {
  // Keyed by what the labels are made of (a route pattern, a known method or OTHER, a status): as bounded as the
  // metrics' own series, so no label key is built and hashed twice per request (issue 33).
  const resolved = new Map<string, Map<number, RequestSeries>>();
  const seriesOf = (route: string, method: string, status: number): RequestSeries => {
    let ofRoute = resolved.get(route);
    if (ofRoute === undefined) {
      ofRoute = new Map();
      resolved.set(route, ofRoute);
    }
    const key = status * METHOD_LABELS.length + METHOD_LABELS.indexOf(method);
    let series = ofRoute.get(key);
    if (series === undefined) {
      const labels = { method, route, status: String(status) };
      series = { count: o.metrics.httpRequests.series(labels), duration: o.metrics.httpDuration.series(labels) };
      ofRoute.set(key, series);
    }
    return series;
  };
  return (c, { requestId, route, status: answered, started, escaped }) => {
    // The client hung up: whatever the route answered goes nowhere, so the request counts as nginx counts it.
    const status = clientGone(c) ? CLIENT_CLOSED_REQUEST : answered;
    const m = c.req.method;
    const method = KNOWN_METHODS.has(m) ? m : "OTHER";
    const series = seriesOf(route, method, status);
    series.count.inc();
    series.duration.observe((performance.now() - started) / 1000);
    // Aggregators poll the supply routes at any rate, and load balancers and scrapers the probes and metrics:
    // their successes are counted above and logged only at debug, so access logs stay readable; every
    // failure (a 503 /ready included) is still logged at info.
    const polled = route.startsWith(SUPPLY_PREFIX) || PROBE_ROUTES.has(route);
    const level = status < 400 && polled ? "debug" : "info";
    if (o.logger.enabled?.(level) === false) return;
    const failure = escaped ?? c.error;
    const error = failure === undefined ? undefined : failure instanceof ApiError ? failure.code : "INTERNAL_ERROR";
    o.logger[level]("request", {
      requestId,
      method,
      route,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      clientIp: truncateIp(o.clientIp(c)),
      ...(error === undefined ? {} : { error }),
    });
    // The raw path only at debug, where full addresses are allowed (scrubbing still drops URL secrets).
    o.logger.debug("request path", { requestId, path: c.req.path });
  };
}
