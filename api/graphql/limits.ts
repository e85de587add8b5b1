/**
 * The limits of POST /graphql, in one place (docs/api.md#graphql-graphql prints this table). Each bounds a
 * different way one request could cost much: the document's shape before anything runs (tokens, depth, aliases),
 * the rows the index is asked for (each list's `limit`, their sum), the time it may take and the bytes it may send.
 */
export const GRAPHQL_LIMITS = {
  /** Request body (POST), bytes: above it 413 PAYLOAD_TOO_LARGE, before any parsing. */
  bodyBytes: 64 * 1024,
  /** Lexical tokens of the document (graphql-js's own parse option `maxTokens`). */
  tokens: 1000,
  /** Nested selections, the root field counting 1 (@escape.tech/graphql-armor-max-depth). */
  depth: 8,
  /**
   * Fields once the document's fragments are expanded where they are spread, introspection included
   * (api/graphql/fieldCount.ts): what graphql-jit compiles and an executor visits. The standard introspection query
   * is 217-226; 30 aliased event pages asking every field 600. An 813-byte document of nested fragments was 9,840 (graphql-jit: 5 s to compile).
   */
  fields: 1000,
  /** Aliased fields (@escape.tech/graphql-armor-max-aliases). */
  aliases: 30,
  /** A list's `limit`: 1 to this; default `defaultLimit`. */
  listLimit: 1000,
  defaultLimit: 100,
  /** The rows one request may ask for: the sum of its lists' `limit`s, one per `lock` and `rank`, 8 per `profile`. */
  rows: 2000,
  /**
   * Rows all GraphQL requests of one process may have in flight (read, executed, encoded) at once; a request waits
   * for its rows to fit, and the wait counts toward its time (api/read/admission.ts). 2,000 rather than 4,000:
   * under 50 unread connections asking 200 different 1,000-row queries, another client's p99 was 36–69 ms, median
   * 46 (5 runs), against 41–82 ms, median 54 (13 runs; bench/graphql-page.ts, flood 2b): fewer answers finish in
   * one turn, and half the rows are alive across a scavenge.
   */
  rowsInFlight: 2000,
  /** The whole execution; then every index read still open is cancelled. */
  timeMs: 2000,
  /** The serialised answer, bytes. */
  responseBytes: 1024 * 1024,
} as const;
