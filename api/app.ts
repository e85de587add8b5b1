import { Hono, type MiddlewareHandler } from "hono";
import { buildInfo } from "./buildInfo";
import type { AppDeps, AppDepsInput } from "./deps";
import { GRAPHQL_METHODS, graphqlEndpoint } from "./graphql/endpoint";
import { createClientIpResolver } from "./http/clientIp";
import { deadline, v1DeadlineMs, v1TimeoutError } from "./http/deadline";
import { edge, edgeHeaders, edgeRequestId } from "./http/edge";
import { ApiError, InternalError, MethodNotAllowedError, NotFoundError, UnauthorizedError } from "./http/errors";
import { metricsAccess } from "./http/metricsAccess";
import type { NodeHotPath } from "./http/nodeHotPath";
import { rateLimit } from "./http/rateLimit";
import { indexRouter, indexRuntime } from "./index/router";
import { MCP_CORS_METHODS, mcpEndpoint, withInProcessClientIp } from "./mcp/server";
import { createGate } from "./mcp/v1/gate";
import { v1Router } from "./mcp/v1/router";
import { createLogger } from "./observability/logger";
import { createMetrics, PROMETHEUS_CONTENT_TYPE } from "./observability/metrics";
import { registerDocsRoutes } from "./openapi/docsRoutes";
import { builtStaticAssets } from "./openapi/staticAssets";
import {
  GRAPHQL_PATH,
  HEALTH_PATH,
  INDEX_BASE,
  MCP_PATH,
  METRICS_PATH,
  READY_PATH,
  SUPPLY_BASE,
  V1_BASE,
} from "./paths";
import { createRateLimiter } from "./ratelimit/createRateLimiter";
import { assumedMulticallVia } from "./startup/multicall3";
import { supplyApi } from "./supply/router";

/** Only a preflight (OPTIONS) needs these; sending them on every GET costs the hot path for nothing. */
const PREFLIGHT_HEADERS = {
  "access-control-allow-methods": "GET, OPTIONS",
  "access-control-allow-headers": "*",
  "access-control-max-age": "86400",
} as const;

/** The deps createApp runs on: `input` with every default filled in. */
export function appDeps(input: AppDepsInput): AppDeps {
  const metrics = input.metrics ?? createMetrics();
  const logger = input.logger ?? createLogger();
  return {
    ...input,
    metrics,
    logger,
    limiter: input.limiter ?? createRateLimiter({ config: input.config, logger, metrics }),
    gate:
      input.gate ??
      createGate({
        rpc: input.rpc,
        manifest: input.config.manifest,
        readTimeoutMs: v1DeadlineMs(input.config.rpcTimeoutMs),
      }),
    locks: input.locks ?? null,
    staticAssets: input.staticAssets === undefined ? builtStaticAssets(logger) : input.staticAssets,
    multicall: input.multicall ?? assumedMulticallVia(input.config),
    lockIndex: input.lockIndex ?? null,
  };
}

/**
 * The app, and the supply hot path at the Node level for a server of our own to ask before
 * @hono/node-server (startApiServer). `fetch` alone stays complete (in-process requests, app.request).
 */
export type ApiApp = Hono & { nodeHotPath: NodeHotPath };

export function createApp(input: AppDepsInput): ApiApp {
  const deps = appDeps(input);
  const { metrics, logger } = deps;
  const app = new Hono();

  const clientIp = createClientIpResolver({
    trustedProxies: deps.config.trustedProxies,
    // MCP tool calls are in-process requests that carry their MCP client's address (api/mcp/server.ts).
    peerAddress: withInProcessClientIp(deps.peerAddress),
  });
  // Request id, CORS * on every response (errors included, design.md), request log + metrics: one layer.
  app.use("*", edge({ logger, metrics, clientIp }));
  // GET and HEAD go straight through (the hot path pays no extra async frame); everything else is
  // a CORS preflight, the MCP endpoint's own methods, or a 405.
  const otherMethods: MiddlewareHandler = async (c, next) => {
    // MCP Streamable HTTP is JSON-RPC over POST: exactly /api/mcp answers its own methods; /graphql takes POST.
    const mcp = c.req.path === MCP_PATH;
    const graphql = c.req.path === GRAPHQL_PATH;
    if (c.req.method === "OPTIONS") {
      for (const [k, v] of Object.entries(PREFLIGHT_HEADERS)) c.header(k, v);
      if (mcp) c.header("access-control-allow-methods", MCP_CORS_METHODS);
      if (graphql) c.header("access-control-allow-methods", GRAPHQL_METHODS.join(", "));
      return c.body(null, 204);
    }
    if (graphql && c.req.method !== "POST") {
      c.header("allow", GRAPHQL_METHODS.join(", "));
      throw new MethodNotAllowedError(c.req.method, ["GET", "POST", "OPTIONS"]);
    }
    if (!mcp && !graphql) {
      c.header("allow", "GET, HEAD, OPTIONS"); // RFC 9110 §15.5.6: a 405 names the methods that work
      throw new MethodNotAllowedError(c.req.method);
    }
    await next();
  };
  app.use("*", (c, next) => (c.req.method === "GET" || c.req.method === "HEAD" ? next() : otherMethods(c, next)));
  // Before any route is mounted, so every v1 and index handler (and a 404 under a limited prefix) is counted.
  const limit = rateLimit({ limiter: deps.limiter, policy: deps.config.rateLimit, clientIp, metrics });
  app.use(`${V1_BASE}/*`, limit);
  app.use(`${INDEX_BASE}/*`, limit);
  // One overall deadline per request; its upstream calls are cancelled when it passes (api/http/deadline.ts).
  const overall = deadline({ ms: v1DeadlineMs(deps.config.rpcTimeoutMs), timeoutError: v1TimeoutError });
  app.use(`${V1_BASE}/*`, overall);
  app.use(`${INDEX_BASE}/*`, overall);
  // Probes answer without touching the chain; /ready's check is bounded (api/server/indexDatabase.ts).
  // The release this process runs (api/buildInfo.ts); the commit and Node's version are on api_build_info.
  app.get(HEALTH_PATH, (c) =>
    c.json({ ok: true, status: "up", version: buildInfo().version }, 200, { "cache-control": "no-store" }),
  );
  app.get(READY_PATH, async (c) => {
    const state = deps.readiness ? await deps.readiness() : ({ ready: true } as const);
    return state.ready
      ? c.json({ ok: true, status: "ready" }, 200, { "cache-control": "no-store" })
      : c.json({ ok: false, status: "unready", reason: state.reason }, 503, { "cache-control": "no-store" });
  });
  // With METRICS_PORT the metrics are served on a listener of their own (api/server/metricsServer.ts) and not
  // here: an unknown route, 404. With METRICS_TOKEN a scrape must bring it.
  if (deps.config.metrics.port === null) {
    const allowed = metricsAccess(deps.config.metrics.token);
    app.get(METRICS_PATH, async (c) => {
      if (allowed && !allowed(c.req.header("authorization"))) throw new UnauthorizedError();
      return c.body(await metrics.render(), 200, {
        "content-type": PROMETHEUS_CONTENT_TYPE,
        "cache-control": "no-store",
      });
    });
  }
  if (deps.gate.cache) metrics.caches.register("preflight", deps.gate.cache);
  if (deps.indexWatermark?.cache) metrics.caches.register("index_watermark", deps.indexWatermark.cache);

  const supply = supplyApi(deps);
  app.route(SUPPLY_BASE, supply.router);
  app.route(V1_BASE, v1Router(deps));
  const index = indexRuntime(deps);
  app.route(INDEX_BASE, indexRouter(deps, index));
  const rateLimitOptions = { limiter: deps.limiter, policy: deps.config.rateLimit, clientIp, metrics };
  // GET and POST /graphql: GraphQL over the same index, its own budget and limits (api/graphql/limits.ts).
  const graphql = graphqlEndpoint({ deps, runtime: index, rateLimit: rateLimitOptions });
  app.on(["GET", "POST"], GRAPHQL_PATH, ...graphql);
  // GET /api/mcp/v1/openapi.json, GET /docs, GET /docs/assets/<hashed name>
  registerDocsRoutes(app, { assets: deps.staticAssets, rateLimit: rateLimitOptions });
  app.all(MCP_PATH, mcpEndpoint({ app, clientIp, rateLimit: rateLimitOptions }));

  app.notFound(() => {
    throw new NotFoundError();
  });

  app.onError((error, c) => {
    const apiError = error instanceof ApiError ? error : new InternalError();
    // The cause goes to the log (scrubbed of URL secrets and addresses), never into the response.
    if (!(error instanceof ApiError))
      logger.error("unhandled error", { requestId: edgeRequestId(c), error, stack: error.stack });
    for (const [k, v] of Object.entries(edgeHeaders(c))) c.header(k, v);
    c.header("cache-control", "no-store");
    if ("retryAfterSec" in apiError) c.header("retry-after", String(apiError.retryAfterSec));
    if (apiError instanceof UnauthorizedError) c.header("www-authenticate", apiError.challenge);
    return c.json(apiError.toEnvelope(), apiError.status);
  });

  // A cached supply figure is answered before routing (api/supply/router.ts: same answer, same count).
  const routed = app.fetch;
  app.fetch = (request, env, executionCtx) => supply.hotPath(request, env) ?? routed(request, env, executionCtx);
  return Object.assign(app, { nodeHotPath: supply.nodeHotPath });
}
