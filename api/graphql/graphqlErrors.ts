/**
 * The errors a GraphQL answer can carry, in GraphQL's own format (`{ errors: [{ message, extensions: { code }
 * }] }`), each with its code in `extensions.code` — the one table of them. Transport failures (method, rate
 * limit, body size, bad JSON, no index) are not here: they use the service's envelope (api/http/errors.ts).
 */
import type { GraphQLError } from "graphql";
// yoga's own constructor: yoga tells its errors apart by instanceof, and this builds them with yoga's copy of
// graphql-js whichever copy a module runner gives a bare `graphql` import (api/graphql/rowBudget.ts says why).
import { createGraphQLError } from "graphql-yoga";

export const GRAPHQL_ERROR_CODES = {
  /** The document has more lexical tokens than allowed. */
  MAX_TOKENS: "The document has too many tokens.",
  /** Fields nested deeper than allowed. */
  MAX_DEPTH: "Fields are nested too deep.",
  /** More aliases than allowed. */
  MAX_ALIASES: "The operation has too many aliases.",
  /** A mutation or a subscription: the index is read here, never written, and nothing is pushed. */
  OPERATION_NOT_SUPPORTED: "Only queries are served.",
  /** A list field's `limit` or `offset` out of range. */
  BAD_PAGE: "A list's limit or offset is out of range.",
  /** The lists of one request together ask for more rows than allowed. */
  MAX_ROWS: "The lists together ask for too many rows.",
  /** A filter, ordering or cursor Ponder's resolvers refuse, or a value that does not fit its column. */
  BAD_USER_INPUT: "An argument is not valid for the table.",
  /** The request ran out of time (the database's statement timeout, or the request's deadline). */
  QUERY_TIMEOUT: "The request took too long.",
  /** The answer would exceed the size allowed. */
  RESPONSE_TOO_LARGE: "The answer is too large.",
  /** Anything else: no internals are shown (the cause is logged with the request id). */
  INTERNAL_SERVER_ERROR: "Unexpected error.",
} as const;

export type GraphqlErrorCode = keyof typeof GRAPHQL_ERROR_CODES;

/**
 * A GraphQL error with its code. `refused`: the request is refused before it runs, answered as yoga answers
 * a syntax or validation error (its `extensions.http`, stripped from the answer): 400 to a client that accepts
 * application/graphql-response+json, 200 to one that takes application/json (GraphQL over HTTP).
 */
export function graphqlError(
  code: GraphqlErrorCode,
  message: string,
  options: { refused?: boolean; from?: GraphQLError } = {},
): GraphQLError {
  const from = options.from;
  return createGraphQLError(message, {
    ...(from ? { nodes: from.nodes, source: from.source, positions: from.positions, path: from.path } : {}),
    extensions: { code, ...(options.refused ? { http: { status: 400, spec: true } } : {}) },
  });
}

/** The body of an answer made outside GraphQL's execution, after it began (a deadline, an oversized answer). */
export function errorsBody(code: GraphqlErrorCode, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code } }], data: null });
}
