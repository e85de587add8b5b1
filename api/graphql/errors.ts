/**
 * GraphQL's failures, each with its `extensions.code`, mapped from the API's own errors in this one place. Refusals
 * before GraphQL runs (429, 413, 415, 405) are not here: they are the API's JSON envelope (api/http/errors.ts).
 */
import { GraphQLError } from "graphql";
import { ApiError, BadParamsError, IndexUnavailableError } from "../http/errors";
import { QueryCancelledError } from "../read/contract";

export const GRAPHQL_CODES = [
  /** The request is not a GraphQL request yoga can run: no query, a mutation (there are none), a GET mutation. */
  "BAD_REQUEST",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "TOKEN_LIMIT_EXCEEDED",
  "DEPTH_LIMIT_EXCEEDED",
  "ALIAS_LIMIT_EXCEEDED",
  "ROW_LIMIT_EXCEEDED",
  "RESPONSE_TOO_LARGE",
  "EXECUTION_TIMEOUT",
  /** A new document found no compile permit in time (api/graphql/compileGate.ts): HTTP 503 with Retry-After. */
  "COMPILE_QUEUE_FULL",
  "BAD_USER_INPUT",
  "INDEX_UNAVAILABLE",
  "STATE_READ_FAILED",
  "INTERNAL_ERROR",
] as const;
export type GraphqlCode = (typeof GRAPHQL_CODES)[number];

/** A GraphQL error the client may read: its message and `extensions.code` (plus `extra`). */
export function graphqlError(code: GraphqlCode, message: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { ...extra, code } });
}

/** The request's time ran out (or its client left) while `error` was pending. */
export function timedOut(ms: number): GraphQLError {
  return graphqlError(
    "EXECUTION_TIMEOUT",
    `The request did not complete within ${ms} ms; its index reads were cancelled.`,
  );
}

/**
 * Any failure of a resolver, in GraphQL's terms; null for one the client must not see (logged, then answered as
 * INTERNAL_ERROR by the mask).
 */
export function toGraphqlError(error: unknown, timeoutMs: number): GraphQLError | null {
  if (error instanceof GraphQLError) return error;
  if (error instanceof QueryCancelledError) return timedOut(timeoutMs);
  if (error instanceof BadParamsError) {
    const detail = (error.detail ?? {}) as Record<string, unknown>;
    return graphqlError("BAD_USER_INPUT", error.message, detail);
  }
  if (error instanceof IndexUnavailableError) {
    return graphqlError("INDEX_UNAVAILABLE", error.message, error.detail as Record<string, unknown>);
  }
  // The node answering a block's time (pin.ts) failed or timed out.
  if (error instanceof ApiError && error.code === "STATE_READ_FAILED")
    return graphqlError("STATE_READ_FAILED", error.message);
  return null;
}
