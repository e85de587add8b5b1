/**
 * GraphQL over the index at /graphql (POST, and GET with `?query=` for simple queries): Ponder's schema of
 * the lock and lock-event tables (api/graphql/ponderSchema.ts), executed by graphql-yoga — the server Ponder
 * itself runs it with — behind this service's transport and limits (api/graphql/limits.ts).
 *
 * Two kinds of failure, two formats:
 * - the transport's, before any GraphQL is read, in the service's envelope (api/http/errors.ts), like every
 *   other route: a method other than GET/POST/OPTIONS (405), over the `graphql` rate-limit budget (429), a
 *   request that is not a GraphQL request (415, 413, 400: api/graphql/request.ts), no index configured (503
 *   INDEX_UNAVAILABLE);
 * - the request's, in GraphQL's own format (`{ errors: [...] }`, each with `extensions.code`:
 *   api/graphql/graphqlErrors.ts) with yoga's statuses (GraphQL over HTTP): a document refused before it runs
 *   (syntax, validation, a limit) is a 400 to a client that accepts application/graphql-response+json and a
 *   200 to one that takes application/json; one that ran answers 200 whatever failed in it (a field's error,
 *   a mutation or subscription, which this schema has none of, a timeout, an answer too large); an
 *   unexpected failure with no data is a 500, its cause in the log only.
 */
import { maxAliasesPlugin } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthPlugin } from "@escape.tech/graphql-armor-max-depth";
import { maxTokensPlugin } from "@escape.tech/graphql-armor-max-tokens";
import type { GraphQLError, ValidationContext } from "graphql";
import { createYoga, type Plugin } from "graphql-yoga";
import type { Context, Handler } from "hono";
import { edgeRequestId } from "../http/edge";
import { IndexUnavailableError, MethodNotAllowedError } from "../http/errors";
import { onHangUp } from "../http/hangUp";
import { chargeRateLimit, type RateLimitOptions } from "../http/rateLimit";
import type { Logger } from "../observability/logger";
import { errorsBody, GRAPHQL_ERROR_CODES, type GraphqlErrorCode, graphqlError } from "./graphqlErrors";
import { GRAPHQL_LIMITS, type GraphqlLimits } from "./limits";
import { ponderGraphql } from "./ponderSchema";
import { graphqlRequest } from "./request";
import { checkRowBudget } from "./rowBudget";
import { DeadlinePassedError, type GraphqlIndex } from "./source";

/** Methods of /graphql (a CORS preflight's answer too). */
export const GRAPHQL_METHODS = ["GET", "POST", "OPTIONS"] as const;

export type GraphqlEndpointOptions = {
  /** null: no index configured; every well-formed request answers 503 INDEX_UNAVAILABLE. */
  index: GraphqlIndex | null;
  rateLimit: RateLimitOptions;
  logger: Logger;
  /** Tests tighten them; the service runs on GRAPHQL_LIMITS. */
  limits?: Partial<GraphqlLimits>;
};

/** What this endpoint hands yoga per request, and what the resolvers' context is built on. */
type ServerContext = { signal: AbortSignal; requestId: string };

export function graphqlEndpoint(o: GraphqlEndpointOptions): Handler {
  const limits = { ...GRAPHQL_LIMITS, ...o.limits };
  const yoga = o.index ? buildYoga(o.index, limits, o.logger) : null;

  return async (c) => {
    const method = c.req.method;
    if (method !== "GET" && method !== "POST") {
      c.header("allow", GRAPHQL_METHODS.join(", "));
      throw new MethodNotAllowedError(method, GRAPHQL_METHODS);
    }
    await chargeRateLimit(c, "graphql", o.rateLimit);
    const request = await graphqlRequest(c, limits.maxBodyBytes);
    if (!yoga) throw new IndexUnavailableError("unconfigured");

    const deadline = new AbortController();
    // A client that hangs up gives its reads up as a passed deadline does (api/http/hangUp.ts).
    const stopWatching = onHangUp(c, () => deadline.abort());
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), limits.timeoutMs);
    });
    try {
      const answered = await Promise.race([
        Promise.resolve(yoga.fetch(request, { signal: deadline.signal, requestId: edgeRequestId(c) })),
        late,
      ]);
      if (answered === "late") {
        deadline.abort();
        return answer(c, errorsBody("QUERY_TIMEOUT", timeoutMessage(limits)), 200, ownMediaType(request));
      }
      const body = await answered.text();
      if (Buffer.byteLength(body) > limits.maxResponseBytes) {
        const message = `The answer exceeds ${limits.maxResponseBytes} bytes; ask for fewer rows or fields.`;
        return answer(c, errorsBody("RESPONSE_TOO_LARGE", message), 200, ownMediaType(request));
      }
      // yoga's 405 for a mutation over GET names the method that would do (none does here: only queries run).
      const allow = answered.headers.get("allow");
      if (allow) c.header("allow", allow);
      return answer(c, body, answered.status, answered.headers.get("content-type") ?? ownMediaType(request));
    } finally {
      clearTimeout(timer);
      stopWatching();
    }
  };
}

function answer(c: Context, body: string, status: number, contentType: string): Response {
  return c.body(body, status as 200, { "content-type": contentType, "cache-control": "no-store" });
}

/** The media type of an answer made here: the modern one when the client asks for it, as yoga chooses. */
function ownMediaType(request: Request): string {
  const accept = request.headers.get("accept") ?? "";
  return accept.includes("application/graphql-response+json")
    ? "application/graphql-response+json; charset=utf-8"
    : "application/json; charset=utf-8";
}

const timeoutMessage = (limits: GraphqlLimits) =>
  `The request took longer than ${limits.timeoutMs} ms; narrow its filters or ask for fewer rows.`;

function buildYoga(index: GraphqlIndex, limits: GraphqlLimits, logger: Logger) {
  const ponder = ponderGraphql();
  return createYoga<ServerContext>({
    schema: ponder.schema,
    graphqlEndpoint: "/graphql",
    graphiql: false,
    landingPage: false,
    logging: false,
    multipart: false,
    batching: false,
    maskedErrors: { maskError: (error) => masked(error, limits, logger) },
    plugins: [
      onlyQueries(),
      maxTokensPlugin({ n: limits.maxTokens, onReject: [refuse("MAX_TOKENS")], propagateOnRejection: false }),
      // Data fields: nothing in these tables nests beyond `locks { items { field } }`, so 8 is room to spare.
      maxDepthPlugin({
        n: limits.maxDepth,
        ignoreIntrospection: true,
        flattenFragments: true,
        onReject: [refuse("MAX_DEPTH")],
        propagateOnRejection: false,
      }),
      // Introspection counted too: its cycles (a filter's AND/OR hold filters) would otherwise nest without end.
      maxDepthPlugin({
        n: limits.maxIntrospectionDepth,
        ignoreIntrospection: false,
        flattenFragments: true,
        onReject: [refuse("MAX_DEPTH")],
        propagateOnRejection: false,
      }),
      maxAliasesPlugin({
        n: limits.maxAliases,
        allowList: [],
        onReject: [refuse("MAX_ALIASES")],
        propagateOnRejection: false,
      }),
      rowBudget(limits),
      inSnapshot(index, ponder.contextFor),
    ],
  });
}

/**
 * graphql-armor's refusal, with its message and our code: reported to validation (a 400 from yoga), or thrown
 * from the parser for the token limit (yoga answers a parse error with 400 too).
 */
function refuse(code: GraphqlErrorCode) {
  return (context: ValidationContext | null, error: GraphQLError) => {
    const coded = graphqlError(code, error.message.replace(/^Syntax Error: /, ""), { refused: true });
    if (context === null) throw coded;
    context.reportError(coded);
  };
}

/** Mutations and subscriptions are refused as a validation error, with a code, before anything runs. */
function onlyQueries(): Plugin {
  const rule = (context: ValidationContext) => ({
    OperationDefinition(node: { operation: string }) {
      if (node.operation === "query") return;
      const message = `Only queries are served; this ${node.operation} is refused (the index is read-only and pushes nothing).`;
      context.reportError(graphqlError("OPERATION_NOT_SUPPORTED", message, { refused: true }));
    },
  });
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(rule);
    },
  };
}

/** The rows a request may return, checked once its variables are known, before it touches the database. */
function rowBudget(limits: GraphqlLimits): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = checkRowBudget({
        schema: args.schema,
        document: args.document,
        operationName: args.operationName,
        variables: args.variableValues as Record<string, unknown> | undefined,
        limits,
      });
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

/** Every resolver of one request reads through one snapshot of the index (api/graphql/source.ts). */
function inSnapshot(index: GraphqlIndex, contextFor: ReturnType<typeof ponderGraphql>["contextFor"]): Plugin {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((args) => {
        const context = args.contextValue as ServerContext & Record<string, unknown>;
        return index.snapshot(
          async (db) => executeFn({ ...args, contextValue: Object.assign(context, contextFor(db)) }),
          context.signal,
        );
      });
    },
  };
}

/** Ponder's resolvers throw plain Errors for arguments they refuse; these messages are for the client. */
const PONDER_ARGUMENT_ERRORS = [
  /^Invalid limit\./,
  /^Cannot specify both /,
  /^Unknown column ".*" used in orderBy argument$/,
  /^Invalid query: /,
];

/** Postgres error codes: class 22 is a value that does not fit (a cursor or filter value); 57014 a timeout. */
function pgCode(error: unknown): string | undefined {
  for (let e = error, i = 0; e && typeof e === "object" && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** By name, as yoga tells them: graphql-armor brings a graphql-js of its own, whose errors fail instanceof. */
const isGraphQLError = (error: unknown): error is GraphQLError =>
  error instanceof Error && error.name === "GraphQLError";

/** What the client sees of an error raised while executing: its own mistakes in words, never internals. */
function masked(error: unknown, limits: GraphqlLimits, logger: Logger): Error {
  if (!isGraphQLError(error)) {
    if (error instanceof DeadlinePassedError) return graphqlError("QUERY_TIMEOUT", timeoutMessage(limits));
    logger.error("graphql: unexpected error", { error, stack: (error as Error | undefined)?.stack });
    return graphqlError("INTERNAL_SERVER_ERROR", GRAPHQL_ERROR_CODES.INTERNAL_SERVER_ERROR);
  }
  const original = error.originalError;
  if (!original || isGraphQLError(original)) return error; // parse, validation, our own
  if (original instanceof DeadlinePassedError) return graphqlError("QUERY_TIMEOUT", timeoutMessage(limits));
  const code = pgCode(original);
  if (code === "57014") return graphqlError("QUERY_TIMEOUT", timeoutMessage(limits), { from: error });
  if (code?.startsWith("22")) {
    const message = "A filter or cursor value does not fit its column (a cursor must come from pageInfo, unchanged).";
    return graphqlError("BAD_USER_INPUT", message, { from: error });
  }
  if (PONDER_ARGUMENT_ERRORS.some((re) => re.test(original.message)))
    return graphqlError("BAD_USER_INPUT", original.message, { from: error });
  if (original instanceof SyntaxError || /base64|superjson|JSON/i.test(original.message))
    return graphqlError("BAD_USER_INPUT", "A cursor is not one this API issued (use pageInfo's, unchanged).", {
      from: error,
    });
  logger.error("graphql: unexpected error", { path: error.path?.join("."), error: original, stack: original.stack });
  return graphqlError("INTERNAL_SERVER_ERROR", GRAPHQL_ERROR_CODES.INTERNAL_SERVER_ERROR, { from: error });
}
