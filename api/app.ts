import { Hono } from "hono";
import { memoizeSuccess } from "./cache/memo";
import { RpcBackoff } from "./chain/backoff";
import { simulationSupported } from "./chain/simulate";
import type { AppDeps, AppDepsInput } from "./deps";
import { GRAPHQL_METHODS, graphqlEndpoint } from "./graphql/endpoint";
import { GRAPHQL_LIMITS } from "./graphql/limits";
import { answerError } from "./http/answerError";
import { answerTurns } from "./http/answerTurns";
import { deadline, v1DeadlineMs, v1TimeoutError } from "./http/cancellation";
import { createClientIpResolver } from "./http/clientIp";
import { edge } from "./http/edge";
import { type AppBindings, type AppEnv, STREAM_HUB_REQUEST } from "./http/env";
import { NotFoundError } from "./http/errors";
import { methodPolicy } from "./http/methods";
import type { NodeHotPath } from "./http/nodeHotPath";
import { registerProbes } from "./http/probes";
import { chargeRateLimit, rateLimit } from "./http/rateLimit";
import { REQUEST_COST } from "./http/requestCost";
import { builtStaticAssets } from "./http/staticAssets";
import { indexRouter } from "./index/router";
import { MCP_CORS_METHODS, withInProcessClientIp } from "./mcp/inProcess";
import { createGate } from "./mcp/v1/gate";
import { v1Router } from "./mcp/v1/router";
import { createLogger } from "./observability/logger";
import { createMetrics, PROMETHEUS_CONTENT_TYPE } from "./observability/metrics";
import { throttledWarnings } from "./observability/throttle";
import { registerDocsRoutes } from "./openapi/docsRoutes";
import { GRAPHQL_PATH, INDEX_BASE, MCP_PATH, SUPPLY_BASE, V1_BASE } from "./paths";
import { createRateLimiter } from "./ratelimit/createRateLimiter";
import { admission } from "./read/admission";
import { chainReadiness } from "./read/indexChain";
import { readHealthReadiness } from "./read/readHealth";
import { createIndexRuntime, NO_INDEX, ofChain } from "./read/runtime";
import { V1_OPERATIONS } from "./routes";
import { assumedMulticallVia } from "./startup/multicall3";
import { supplyApi } from "./supply/router";
import { registerWebhookRoutes, WEBHOOKS_PATH } from "./webhooks/routes";

/** The deps createApp runs on: `input` with every default filled in. */
export function appDeps(input: AppDepsInput): AppDeps {
  const metrics = input.metrics ?? createMetrics();
  const logger = input.logger ?? createLogger({ level: input.config.logLevel });
  // A node outage is in the log with its cause, once a minute with a count (operations.md, outage logs).
  const warnOutage = throttledWarnings(logger);
  const rpcBackoff =
    input.rpcBackoff ??
    new RpcBackoff({
      onOutage: (error) =>
        warnOutage(`node-read:${error.kind}`, "node read failed; state, quote and prepare back off", {
          kind: error.kind,
          cause: error.message,
        }),
    });
  return {
    ...input,
    metrics,
    logger,
    limiter: input.limiter ?? createRateLimiter({ config: input.config, logger, metrics }),
    rpcBackoff,
    gate:
      input.gate ??
      createGate({
        rpc: rpcBackoff.wrap(input.rpc),
        manifest: input.config.manifest,
        readTimeoutMs: v1DeadlineMs(input.config.rpcTimeoutMs),
      }),
    index: { ...NO_INDEX, ...input.index },
    staticAssets: input.staticAssets === undefined ? builtStaticAssets(logger) : input.staticAssets,
    multicall: input.multicall ?? assumedMulticallVia(input.config),
  };
}

/**
 * The app, and the supply hot path at the Node level for a server of our own to ask before
 * @hono/node-server (startApiServer). `fetch` alone stays complete (in-process requests, app.request).
 */
export type ApiApp = Hono<AppEnv> & {
  nodeHotPath: NodeHotPath;
  /** Loads what the app defers to its first use (the MCP endpoint, GraphQL's engine), so no request waits for it. */
  warm(): Promise<void>;
};

export function createApp(input: AppDepsInput): ApiApp {
  const deps = appDeps(input);
  const { config, metrics, logger } = deps;
  const app = new Hono<AppEnv>();
  // MCP tool calls are in-process requests that carry their MCP client's address (api/mcp/server.ts).
  const clientIp = createClientIpResolver({
    trustedProxies: config.trustedProxies,
    peerAddress: withInProcessClientIp(deps.peerAddress),
  });
  const rateLimitOptions = { limiter: deps.limiter, policy: config.rateLimit, clientIp, metrics };

  // The edge: request id, CORS * on every response, request log + metrics; then methods; then, before any route is
  // mounted (so a 404 under a limited prefix counts too), each prefix's budget and one deadline per request.
  app.use("*", edge({ logger, metrics, clientIp }));
  app.use(
    "*",
    methodPolicy({
      ownMethods: { [MCP_PATH]: MCP_CORS_METHODS },
      withPost: { [GRAPHQL_PATH]: GRAPHQL_METHODS },
      operatorPrefixes: [INDEX_BASE + WEBHOOKS_PATH],
    }),
  );
  // What the node last said of eth_simulateV1 (a -32601 is believed a minute, then asked again: api/chain/simulate.ts).
  const rpc = deps.rpc;
  if (rpc) metrics.simulationSupported.sample(() => simulationSupported(rpc));
  const overall = deadline({ ms: v1DeadlineMs(config.rpcTimeoutMs), timeoutError: v1TimeoutError });
  for (const base of [V1_BASE, INDEX_BASE]) app.use(`${base}/*`, rateLimit(rateLimitOptions), overall);
  // The features' runtime of the read model first: /ready asks it how the index's reads are going.
  const index = createIndexRuntime({
    source: deps.index,
    config,
    rpc: deps.rpc,
    logger,
    onBoardComputed: () => metrics.veBoardComputations.inc(),
    onVeBoardDerived: () => metrics.veBoardDerivations.inc(),
    onVeBoardAnchored: () => metrics.veBoardAnchors.inc(),
    onVeBoardTakenAhead: () => metrics.veBoardTakenAhead.inc(),
    onVeBoardPatchedAhead: () => metrics.veBoardPatchedAhead.inc(),
    onHeadPinned: (how) => metrics.headPins.inc({ how }),
    onQuietBlock: (outcome) => metrics.quietBlocks.inc({ outcome }),
    onDurationBoardComputed: () => metrics.durationBoardComputations.inc(),
    onDurationBoardDerived: () => metrics.durationBoardDerivations.inc(),
    onDurationBoardAnchored: () => metrics.durationBoardAnchors.inc(),
    onAhead: (answer, outcome) => metrics.computedAhead.inc({ answer, outcome }),
    onWait: (outcome) => metrics.minBlockWaits.inc({ of: "index", outcome }),
    // The branch check's node calls go through the back-off: during an outage it fails at once and concludes nothing.
    branchRpc: deps.rpcBackoff.wrap(deps.rpc),
    onBranch: (orphaned) => metrics.indexReplacedBranch.set(orphaned ? 1 : 0),
    onChain: (other) => metrics.indexOtherChain.set(other ? 1 : 0),
    // A GraphQL field's computation is charged to the `graphql` budget its request was counted in; REST's and the
    // MCP tools' (in-process REST requests) to `index`; the stream hub's reads (code-only marker) to nobody.
    chargeCompute: async (c, computations) => {
      if ((c.env as AppBindings | undefined)?.[STREAM_HUB_REQUEST] === true) return;
      const budget = c.req.path === GRAPHQL_PATH ? "graphql" : "index";
      await chargeRateLimit(c, budget, rateLimitOptions, REQUEST_COST.computedBlock * computations);
    },
    onGate: {
      onChange: (gate) => {
        metrics.indexComputations.inFlight.set(gate.inFlight);
        metrics.indexComputations.queued.set(gate.queued);
      },
      onRefused: (lane, why) => metrics.indexComputations.refused.inc({ lane, why }),
    },
  });
  registerProbes(app, {
    readiness: deps.index.atBlock
      ? chainReadiness({
          chain: index.chain,
          probe: (signal) => ofChain(index, () => index.index.probe(null, signal)),
          base: readHealthReadiness({
            base: deps.readiness,
            health: index.health,
            index: index.index,
            failAfterMs: config.readyIndexFailureMs,
          }),
        })
      : deps.readiness,
    metrics:
      config.metrics.port === null
        ? { render: () => metrics.render(), contentType: PROMETHEUS_CONTENT_TYPE, token: config.metrics.token }
        : null,
  });
  if (deps.gate.cache) metrics.caches.register("preflight", deps.gate.cache);
  if (deps.index.watermark?.cache) metrics.caches.register("index_watermark", deps.index.watermark.cache);
  const shared = deps.index.shared;
  if (shared?.shared) {
    metrics.caches.register("index_shared", {
      stats: shared.shared,
      ...(shared.breaker ? { breaker: shared.breaker } : {}),
    });
  }

  // The features, side by side; the index routes and GraphQL share one runtime of the read model.
  const supply = supplyApi(deps);
  app.route(SUPPLY_BASE, supply.router);
  app.route(V1_BASE, v1Router(deps));
  // Index pages, REST and GraphQL, share one budget of rows in flight, and large ones are built and written one per
  // turn of the event loop, in one queue.
  const pages = { turns: answerTurns(), rows: admission(GRAPHQL_LIMITS.rowsInFlight) };
  const indexRoutes = indexRouter(index, pages, {
    limits: config.streams,
    clientIp: (c) => clientIp(c),
    metrics: metrics.streams,
  });
  // The operators' webhook routes sit beside the index routes, under the same base and middleware, and their
  // deliveries are those routes' answers (api/live/routeAnswers.ts); before the mount, which copies the routes.
  registerWebhookRoutes(indexRoutes, index, {
    webhooks: deps.webhooks ?? null,
    operatorToken: config.webhooks.operatorToken,
  });
  app.route(INDEX_BASE, indexRoutes);
  const graphql = graphqlEndpoint({ deps, runtime: index, rateLimit: rateLimitOptions, ...pages });
  app.on(["GET", "POST"], GRAPHQL_PATH, ...graphql.handlers);
  registerDocsRoutes(app, { assets: deps.staticAssets, rateLimit: rateLimitOptions });
  // The MCP endpoint is loaded on its first request (or by warm(), once the process serves): its two SDKs and their
  // protocol schemas were ~15 % of a start (bench/lean-process.ts). GraphQL's engine likewise (api/graphql/endpoint.ts).
  const mcp = memoizeSuccess(async () =>
    (await import("./mcp/server")).mcpEndpoint({
      app,
      operations: V1_OPERATIONS,
      clientIp,
      rateLimit: rateLimitOptions,
    }),
  );
  app.all(MCP_PATH, async (c, next) => (await mcp())(c, next));
  app.notFound(() => {
    throw new NotFoundError();
  });
  app.onError(answerError(logger));

  // A cached supply figure is answered before routing (api/supply/router.ts: same answer, same count).
  const routed = app.fetch;
  app.fetch = (request, env, executionCtx) => supply.hotPath(request, env) ?? routed(request, env, executionCtx);
  return Object.assign(app, {
    nodeHotPath: supply.nodeHotPath,
    // Each in a turn of its own (GraphQL's schema ~25 ms, the MCP modules ~40 ms), so no request waits for both.
    warm: async () => {
      graphql.warm();
      await new Promise((resolve) => setImmediate(resolve));
      await mcp();
    },
  });
}
