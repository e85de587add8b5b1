import { accountLocksRoute } from "./index/accountLocks";
import { activityItemRoute, activityRoute } from "./index/activity";
import { durationBoardRoute, durationRankRoute } from "./index/boards";
import { accountEventsRoute, lockEventsRoute } from "./index/history";
import { veBoardRoute, veRankRoute } from "./index/leaderboard";
import { lockRoute } from "./index/lock";
import { profileRoute } from "./index/profile";
import { statsRoute } from "./index/stats";
import { preflightRoute } from "./mcp/v1/preflight";
import { ACTIONS, type PrepareAction } from "./mcp/v1/prepare";
import { PREPARE_SERVED_PATH, prepareRouteDefinition } from "./mcp/v1/prepare/routeDefinitions";
import { quoteRoute } from "./mcp/v1/quote";
import { stateRoute } from "./mcp/v1/state";
import {
  DOCS_ASSETS_PATH,
  DOCS_PATH,
  GRAPHQL_PATH,
  HEALTH_PATH,
  INDEX_BASE,
  MCP_PATH,
  METRICS_PATH,
  OPENAPI_PATH,
  READY_PATH,
  SUPPLY_BASE,
  V1_BASE,
} from "./paths";
import type { RouteDefinition } from "./route/definition";
import { SUPPLY_ROUTES } from "./supply/router";
import type { SupplyRouteDefinition } from "./supply/supplyError";

/**
 * Every documented route, in the order of the spec (§4.1, §4.2, §4.3), with where it is mounted. The
 * OpenAPI document and the MCP tools are both built from this list; test/openapi proves it equals the
 * routes the app serves.
 */

/** A JSON route of the v1 envelope: the preparation API (/api/mcp/v1) or the index API (/api/index/v1). */
export type V1Operation = {
  kind: "v1";
  /** The full path in OpenAPI form: /api/mcp/v1/state/{address}. */
  path: string;
  /** The full Hono pattern of the route that serves it: /api/mcp/v1/state/:address. */
  servedBy: string;
  tag: "Reads" | "Prepare" | "Index";
  route: RouteDefinition;
  /** Prepare actions only: the action, whose own pipeline computes the example. */
  action?: PrepareAction;
};

export type SupplyOperation = {
  kind: "supply";
  path: string;
  servedBy: string;
  tag: "Supply";
  route: SupplyRouteDefinition;
};

export type Operation = V1Operation | SupplyOperation;

/** Hono's `:name` → OpenAPI's `{name}`. */
export const openApiPath = (honoPath: string) => honoPath.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

const v1 = (route: RouteDefinition, tag: V1Operation["tag"], servedBy = route.path): V1Operation => ({
  kind: "v1",
  path: openApiPath(V1_BASE + route.path),
  servedBy: V1_BASE + servedBy,
  tag,
  route,
});

const indexOp = (route: RouteDefinition, servedBy = route.path): V1Operation => ({
  kind: "v1",
  path: openApiPath(INDEX_BASE + route.path),
  servedBy: INDEX_BASE + servedBy,
  tag: "Index",
  route,
});

export const OPERATIONS: readonly Operation[] = [
  ...Object.values(SUPPLY_ROUTES).map(
    (route): SupplyOperation => ({
      kind: "supply",
      path: openApiPath(SUPPLY_BASE + route.path),
      servedBy: SUPPLY_BASE + route.path,
      tag: "Supply",
      route,
    }),
  ),
  v1(stateRoute, "Reads"),
  v1(preflightRoute, "Reads"),
  v1(quoteRoute, "Reads"),
  ...ACTIONS.map((action) => ({ ...v1(prepareRouteDefinition(action), "Prepare", PREPARE_SERVED_PATH), action })),
  indexOp(lockRoute),
  indexOp(lockEventsRoute),
  indexOp(accountEventsRoute),
  indexOp(accountLocksRoute),
  // Served by the boards' patterns, whose handler answers "ve" with the ve board's own (api/index/router.ts).
  indexOp(veBoardRoute, durationBoardRoute.path),
  indexOp(veRankRoute, durationRankRoute.path),
  indexOp(durationBoardRoute),
  indexOp(durationRankRoute),
  indexOp(statsRoute),
  indexOp(activityRoute),
  indexOp(activityItemRoute),
  indexOp(profileRoute),
];

export const V1_OPERATIONS: readonly V1Operation[] = OPERATIONS.filter((o): o is V1Operation => o.kind === "v1");

/**
 * Served routes that are not API operations, so they are not in the document: each is the platform
 * around the API. The parity test requires each of them to be served, so this list cannot rot.
 */
export const INFRASTRUCTURE_ROUTES = [
  { method: "GET", path: OPENAPI_PATH, why: "this document itself" },
  { method: "GET", path: DOCS_PATH, why: "the interactive reference page rendered from this document" },
  {
    method: "GET",
    path: `${DOCS_ASSETS_PATH}/{file}`,
    why: "the reference page's UI bundle and start script, content-hashed, built from the pinned npm package",
  },
  { method: "GET", path: HEALTH_PATH, why: "liveness: the process is up" },
  { method: "GET", path: READY_PATH, why: "readiness: the index database answers within 500 ms and holds the index" },
  {
    method: "GET",
    path: METRICS_PATH,
    why:
      "Prometheus metrics for operators: open by default; METRICS_TOKEN requires a bearer token (else 401 " +
      "UNAUTHORIZED); with METRICS_PORT they are served on a listener of their own and this path is a 404",
  },
  {
    method: "POST",
    path: GRAPHQL_PATH,
    why:
      "GraphQL over the lock index: its schema is served by introspection and described in docs/api.md (fields, " +
      "limits, error codes), not here",
  },
  { method: "GET", path: GRAPHQL_PATH, why: "the same GraphQL endpoint, for queries passed as ?query=" },
  {
    method: "ALL",
    path: MCP_PATH,
    why: "the MCP endpoint: Streamable HTTP, JSON-RPC over POST; its tools are the v1 operations documented here",
  },
] as const;
