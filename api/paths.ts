/**
 * Where everything is mounted: the one place a path is spelled. The app mounts from here; the route list
 * (api/routes.ts), OpenAPI, MCP, the rate limit and the request log only read it.
 */
export const SUPPLY_BASE = "/api/supply";
export const V1_BASE = "/api/mcp/v1";
/** The lock index as an API (docs/api.md#the-index-api-apiindexv1): lock pages, history, the ve board, stats. */
export const INDEX_BASE = "/api/index/v1";
export const OPENAPI_PATH = `${V1_BASE}/openapi.json`;
export const DOCS_PATH = "/docs";
/** The reference page's static assets (the pinned Scalar bundle, its start script), by content-hashed name. */
export const DOCS_ASSETS_PATH = "/docs/assets";
/** MCP Streamable HTTP, exactly this path (no trailing slash, nothing below it). */
export const MCP_PATH = "/api/mcp";
/** Probes: the process is up; the process can answer with its index (api/server/indexDatabase.ts). */
export const HEALTH_PATH = "/health";
export const READY_PATH = "/ready";
/** The API's own Prometheus metrics. */
export const METRICS_PATH = "/api/metrics";
/** GraphQL over the lock index (api/graphql): POST, or GET for queries. */
export const GRAPHQL_PATH = "/graphql";
