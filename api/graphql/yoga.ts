/**
 * The GraphQL engine: graphql-yoga over the schema, with the document limits as validation rules and parse options,
 * the plan step before execution, and failures in GraphQL's `errors` format with `extensions.code`. Yoga's own
 * landing page, GraphiQL, CORS and logging are off: the API's edge does CORS, request ids and the request log.
 */
// First: before graphql-jit loads and makes its memos (api/graphql/jitMemory.ts).
import "./jitMemory";
import { useGraphQlJit } from "@envelop/graphql-jit";
import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import {
  type ASTVisitor,
  type DocumentNode,
  GraphQLError,
  getOperationAST,
  parse,
  type ValidationContext,
} from "graphql";
import { createYoga, type Plugin } from "graphql-yoga";
import type { Logger } from "../observability/logger";
import { blockVariablesTyped } from "./blockArg";
import type { ByteBoundedCache } from "./documentCache";
import { answeredCode, type GraphqlCode, graphqlError, toGraphqlError } from "./errors";
import { asksIntrospection, maxExpandedFieldsRule } from "./fieldCount";
import { GRAPHQL_LIMITS } from "./limits";
import { planOf, VariablesRefused } from "./plan";
import { buildSchema, type GraphqlContext } from "./schema";

/** A GraphQLError of any copy of graphql-js (yoga's helpers may build theirs with another). */
const isGraphqlError = (e: unknown): e is GraphQLError => e instanceof Error && e.name === "GraphQLError";

/** An error of graphql-js or yoga, with the code a client can act on (its own, else `code`). */
function withCode(error: GraphQLError, code: GraphqlCode): GraphQLError {
  // graphql-jit's errors may have no extensions at all.
  return typeof error.extensions?.code === "string" ? error : recoded(error, code);
}

/** `error` with `code` as its `extensions.code`. */
function recoded(error: GraphQLError, code: GraphqlCode): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code },
  });
}

/**
 * A refusal before execution: GraphQL over HTTP answers it 400 to a client that accepts
 * application/graphql-response+json, 200 to a legacy application/json one (yoga reads `http`, and strips it).
 */
function beforeExecution(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: { ...error.extensions, http: { spec: true, status: 400 } },
  });
}

/**
 * A request that is not a well-formed GraphQL-over-HTTP request (no `query`, an `operationName` that is not a string):
 * 400 whatever the client accepts (GraphQL over HTTP, application/json: "a request that does not constitute a
 * well-formed GraphQL-over-HTTP request SHOULD result in status code 400"), as yoga answers a `query` that is not a
 * string or `variables` that are not an object.
 */
function malformed(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "BAD_REQUEST", http: { status: 400 } } });
}

/** What yoga's own parameter check lets through and GraphQL over HTTP calls malformed: refused first, 400. */
const wellFormed: Plugin = {
  onParams({ params }) {
    const { query, operationName, extensions } = params as {
      query?: unknown;
      operationName?: unknown;
      extensions?: { persistedQuery?: unknown } | null;
    };
    if (query === undefined || query === null) {
      // An Apollo client's automatic persisted query (a hash, no text): it sends the text again on a 400.
      throw malformed(
        extensions?.persistedQuery === undefined
          ? "Must provide query string."
          : "Persisted operations are not supported: send the document as query.",
      );
    }
    if (operationName !== undefined && operationName !== null && typeof operationName !== "string") {
      throw malformed(`Expected "operationName" param to be a string, but given ${typeofParam(operationName)}.`);
    }
  },
};
const typeofParam = (v: unknown) => (Array.isArray(v) ? "array" : typeof v);

/**
 * The schema has no mutation or subscription type: an operation of either is refused as a validation error (GraphQL's
 * "Operation Type Existence" rule, which graphql-js 16 leaves to its executor), before execution — so a client that
 * accepts application/graphql-response+json gets 400, as for any request error, not 200 with no `data`.
 */
const operationTypeExists = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`Schema is not configured to execute ${node.operation} operation.`, {
        nodes: node,
        extensions: { code: "BAD_REQUEST" },
      }),
    );
  },
});

/** An armor rule's refusal, reported as a validation error with our code (not thrown: the other rules still run). */
const refuse = (code: GraphqlCode) => (context: ValidationContext | null, error: GraphQLError) =>
  context?.reportError(graphqlError(code, error.message.replace(/^Syntax Error: /, "")));

const limits: Plugin = {
  onParse({ setParseFn }) {
    setParseFn((source, options) => {
      try {
        return parse(source, { ...options, maxTokens: GRAPHQL_LIMITS.tokens });
      } catch (error) {
        // graphql-js says so only in its message ("Document contains more that N tokens. Parsing aborted.").
        if (error instanceof GraphQLError && /tokens\. Parsing aborted\.$/.test(error.message)) {
          const refused = graphqlError(
            "TOKEN_LIMIT_EXCEEDED",
            `The document has more than ${GRAPHQL_LIMITS.tokens} tokens.`,
          );
          throw beforeExecution(refused);
        }
        throw isGraphqlError(error) ? beforeExecution(withCode(error, "GRAPHQL_PARSE_FAILED")) : error;
      }
    });
  },
  onValidate({ addValidationRule }) {
    addValidationRule(operationTypeExists);
    addValidationRule(blockVariablesTyped);
    addValidationRule(
      maxDepthRule({
        n: GRAPHQL_LIMITS.depth,
        propagateOnRejection: false,
        onReject: [refuse("DEPTH_LIMIT_EXCEEDED")],
      }),
    );
    addValidationRule(maxExpandedFieldsRule(GRAPHQL_LIMITS.fields, refuse("FIELD_LIMIT_EXCEEDED")));
    addValidationRule(
      maxAliasesRule({
        n: GRAPHQL_LIMITS.aliases,
        propagateOnRejection: false,
        onReject: [refuse("ALIAS_LIMIT_EXCEEDED")],
      }),
    );
    return ({ valid, result, setResult }) => {
      if (!valid) setResult(result.map((e) => withCode(e, "GRAPHQL_VALIDATION_FAILED")));
    };
  },
  onExecute({ args, setResultAndStopExecution }) {
    const { scope } = args.contextValue as unknown as GraphqlContext;
    try {
      scope.plan = planOf(args, scope.rt.cursors);
    } catch (error) {
      const refused =
        error instanceof VariablesRefused
          ? error.errors.map((e) => withCode(e, "BAD_USER_INPUT"))
          : [
              isGraphqlError(error)
                ? withCode(error, "BAD_USER_INPUT")
                : graphqlError("BAD_USER_INPUT", "Bad arguments."),
            ];
      setResultAndStopExecution({ errors: refused.map(beforeExecution) });
    }
    return {
      onExecuteDone({ result }) {
        if ("errors" in result && (result.errors?.length ?? 0) > 0) scope.failed = true;
      },
    };
  },
};

/**
 * The documents yoga keeps by their text, bounded by bytes (api/graphql/documentCache.ts): the parsed ones (each
 * holding its validation result and compiled query, weakly keyed on it) and the texts that failed to parse.
 */
export type DocumentCaches = { documents: ByteBoundedCache<DocumentNode>; errors: ByteBoundedCache<unknown> };

export function createGraphqlEngine(logger: Logger, caches: DocumentCaches) {
  return createYoga<GraphqlContext>({
    schema: buildSchema(),
    graphqlEndpoint: "/graphql",
    graphiql: false,
    landingPage: false,
    cors: false,
    logging: false,
    batching: false,
    healthCheckEndpoint: undefined,
    parserAndValidationCache: { documentCache: caches.documents, errorCache: caches.errors },
    plugins: [
      wellFormed,
      limits,
      // Queries run as code compiled once per document (graphql-jit keeps it weakly on the parsed document, which
      // the bounded document cache holds):
      // a page's hundreds of fields cost a third of graphql-js's executor. Anything else (a mutation, which the
      // schema has none of) is left to graphql-js, which refuses it in GraphQL's terms; so is a document that reads
      // the schema (its answer is small and static, while compiling nested `__Type` fragments took seconds).
      useGraphQlJit(
        {},
        {
          enableIf: (args) =>
            getOperationAST(args.document, args.operationName)?.operation === "query" &&
            !asksIntrospection(args.document),
        },
      ),
    ],
    maskedErrors: {
      maskError(error) {
        const original = isGraphqlError(error) ? error.originalError : error;
        if (isGraphqlError(error) && (original === undefined || isGraphqlError(original))) {
          // graphql-js's and yoga's own refusals (no operation, a mutation): their code when it is documented.
          const code = answeredCode(error.extensions?.code);
          // GetOperation() failed (several operations and no operationName, or one naming none): a request error of a
          // well-formed request, so 200 to an application/json client (yoga answers it 400 to every client).
          if (code === "OPERATION_RESOLUTION_FAILURE") return beforeExecution(error);
          return code === error.extensions?.code ? error : recoded(error, code);
        }
        const mapped = toGraphqlError(original, GRAPHQL_LIMITS.timeMs);
        const located = isGraphqlError(error) ? { nodes: error.nodes, path: error.path } : {};
        if (mapped) return new GraphQLError(mapped.message, { ...located, extensions: mapped.extensions });
        // The cause goes to the log, never into the answer.
        logger.error("graphql resolver failed", { error: original, stack: (original as Error | undefined)?.stack });
        return new GraphQLError("Internal error.", { ...located, extensions: { code: "INTERNAL_ERROR" } });
      },
    },
  });
}
