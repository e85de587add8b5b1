/**
 * What one GraphQL request may cost, each bound stated once (the README's table is this one). Every query
 * reads the index only; these keep any one request — however written — to a bounded parse, a bounded
 * number of rows, a bounded time and a bounded answer.
 */
export type GraphqlLimits = {
  /** POST body; beyond it 413 PAYLOAD_TOO_LARGE (envelope). A GET's URL is bounded by the server (16 KiB). */
  maxBodyBytes: number;
  /** Lexical tokens of the document (graphql-armor max-tokens); the standard introspection query has 160. */
  maxTokens: number;
  /** Field nesting of data fields, fragments flattened (graphql-armor max-depth, `__schema` not counted). */
  maxDepth: number;
  /** Field nesting including introspection: the standard introspection query is 15 deep. */
  maxIntrospectionDepth: number;
  /** Aliases in the operation, fragments expanded (graphql-armor max-aliases). */
  maxAliases: number;
  /** `limit` of one list field (Ponder's own ceiling, MAX_LIMIT in ponder/dist/esm/graphql). */
  maxListLimit: number;
  /** Rows all list fields of one request may return together: the sum of their `limit`s (default 50 each). */
  maxRows: number;
  /** `offset` of one list field; page further with the `after` cursor, which costs no skipped rows. */
  maxOffset: number;
  /** The whole request, from parse to answer; then an error answer (QUERY_TIMEOUT). */
  timeoutMs: number;
  /** The serialised answer; beyond it an error answer (RESPONSE_TOO_LARGE) instead of the data. */
  maxResponseBytes: number;
};

export const GRAPHQL_LIMITS: GraphqlLimits = {
  maxBodyBytes: 64 * 1024,
  maxTokens: 1_000,
  maxDepth: 8,
  maxIntrospectionDepth: 15,
  maxAliases: 30,
  maxListLimit: 1_000,
  maxRows: 2_000,
  maxOffset: 10_000,
  timeoutMs: 2_000,
  maxResponseBytes: 1024 * 1024,
};
