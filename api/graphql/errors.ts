/**
 * GraphQL's failures, each with its `extensions.code`, mapped from the API's own errors in this one place. Refusals
 * before GraphQL runs (429, 413, 415, 405) are not here: they are the API's JSON envelope (api/http/errors.ts).
 */
import { GraphQLError } from "graphql";
import {
  ApiError,
  BadParamsError,
  IndexBehindError,
  IndexBusyError,
  IndexUnavailableError,
  RateLimitedError,
} from "../http/errors";
import { QueryCancelledError } from "../read/contract";

export const GRAPHQL_CODES = [
  /** The request is not a GraphQL request yoga can run: no query, a mutation (there are none), a GET mutation. */
  "BAD_REQUEST",
  /** yoga's: the document has several operations and no `operationName`, or `operationName` names none of them. */
  "OPERATION_RESOLUTION_FAILURE",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "TOKEN_LIMIT_EXCEEDED",
  "DEPTH_LIMIT_EXCEEDED",
  "ALIAS_LIMIT_EXCEEDED",
  /** More than GRAPHQL_LIMITS.fields fields once the fragments are expanded (api/graphql/fieldCount.ts). */
  "FIELD_LIMIT_EXCEEDED",
  "ROW_LIMIT_EXCEEDED",
  "RESPONSE_TOO_LARGE",
  "EXECUTION_TIMEOUT",
  /** A new document found no compile permit in time (api/graphql/compileGate.ts): HTTP 503 with Retry-After. */
  "COMPILE_QUEUE_FULL",
  "BAD_USER_INPUT",
  /** A field's computation at a past block over the request's `graphql` budget (api/read/runtime.ts): retryAfterSec. */
  "RATE_LIMITED",
  "INDEX_UNAVAILABLE",
  "INDEX_BEHIND",
  "STATE_READ_FAILED",
  "INTERNAL_ERROR",
] as const;
export type GraphqlCode = (typeof GRAPHQL_CODES)[number];

const DOCUMENTED: ReadonlySet<string> = new Set(GRAPHQL_CODES);
/** yoga's names for what we document under another. */
export const LIBRARY_RENAMES: Readonly<Record<string, GraphqlCode>> = { INTERNAL_SERVER_ERROR: "INTERNAL_ERROR" };

/**
 * The code a refusal of graphql-js's or yoga's own is answered with: its own when it is one of ours (documented in
 * docs/api.md), INTERNAL_ERROR for yoga's INTERNAL_SERVER_ERROR, BAD_REQUEST for any other, so a library upgrade
 * cannot put an undocumented code on the wire (test/docs/errorCodes.test.ts lists the libraries' codes).
 */
export function answeredCode(code: unknown): GraphqlCode {
  if (typeof code === "string" && DOCUMENTED.has(code)) return code as GraphqlCode;
  return (typeof code === "string" && LIBRARY_RENAMES[code]) || "BAD_REQUEST";
}

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
  if (error instanceof IndexBehindError) {
    return graphqlError("INDEX_BEHIND", error.message, {
      ...(error.detail as Record<string, unknown>),
      retryAfterSec: error.retryAfterSec,
    });
  }
  // A past block's computation refused: the lane is full (busy), or the client's budget is spent.
  if (error instanceof IndexBusyError) {
    return graphqlError("INDEX_UNAVAILABLE", error.message, {
      ...(error.detail as Record<string, unknown>),
      retryAfterSec: error.retryAfterSec,
    });
  }
  if (error instanceof RateLimitedError) {
    return graphqlError("RATE_LIMITED", error.message, { retryAfterSec: error.retryAfterSec });
  }
  if (error instanceof IndexUnavailableError) {
    return graphqlError("INDEX_UNAVAILABLE", error.message, error.detail as Record<string, unknown>);
  }
  // The node answering a block's time (pin.ts) failed or timed out.
  if (error instanceof ApiError && error.code === "STATE_READ_FAILED")
    return graphqlError("STATE_READ_FAILED", error.message);
  return null;
}
