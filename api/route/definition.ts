import type { ErrorCode } from "../http/errors";
import type { ParamDoc } from "../http/params";
import type { JsonSchema } from "./jsonSchema";

/**
 * The definition of one served GET route. The route file registers its handler with `path` and parses
 * with `query` (parseQuery(url, def.query)); api/openapi documents the same object and the MCP endpoint
 * turns it into a tool, so the served route, its documentation and its tool cannot drift apart.
 */
export type RouteDefinition = {
  /** The path as the route's own router registers it, in Hono syntax ("/state/:address"). */
  path: string;
  /** Unique across the API; also names the MCP tool of a v1 route. */
  operationId: string;
  summary: string;
  description: string;
  /** Path parameters by name, in path order. */
  pathParams?: Readonly<Record<string, ParamDoc>>;
  /** Query parameters: the very spec the handler gives to parseQuery. */
  query: Readonly<Record<string, ParamDoc>>;
  /** The 200 body: its schema and one example. */
  response: { schema: JsonSchema; example: unknown };
  /**
   * The error codes the route itself can answer with. The document adds RATE_LIMITED on rate-limited
   * prefixes and INTERNAL_ERROR everywhere.
   */
  errors: readonly ErrorCode[];
  /** The parameter values the example response answers (path and query, by name). */
  exampleRequest?: Readonly<Record<string, string>>;
  /** The user-facing verb (spec §4.3) an assistant narrates the action with; prepare actions only. */
  verb?: string;
  /** The steps a prepare action can return, in order; prepare actions only. */
  steps?: readonly string[];
};
