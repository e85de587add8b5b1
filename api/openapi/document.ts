import { buildInfo } from "../buildInfo";
import { ERROR_STATUS, type ErrorCode } from "../http/errors";
import { limitedPrefix } from "../http/rateLimit";
import { STREAM_PARAMETERS, STREAM_PATH, streamRoute } from "../index/stream";
import { loadManifest, type Manifest } from "../manifest";
import { prepareExample } from "../mcp/v1/prepare/routeDefinitions";
import { INDEX_BASE } from "../paths";
import type { JsonSchema } from "../route/jsonSchema";
import { openApiParameter } from "../route/jsonSchema";
import { INFRASTRUCTURE_ROUTES, OPERATIONS, openApiPath, type SupplyOperation, type V1Operation } from "../routes";
import { SUPPLY_ERROR_STATUS } from "../supply/supplyError";
import { WEBHOOK_DELIVERIES, WEBHOOK_OPERATIONS } from "../webhooks/openapi";
import {
  byStatus,
  ERROR_DOCS,
  ERROR_ENVELOPE_SCHEMA,
  SUPPLY_ERROR_MEANINGS,
  SUPPLY_ERROR_SCHEMA,
} from "./errorCatalogue";

/**
 * The OpenAPI 3.1 document of the API, built from the route catalogue (the definitions the routes are
 * served with). Served at /api/mcp/v1/openapi.json and rendered at /docs.
 */

export type OpenApiDocument = {
  openapi: "3.1.0";
  info: Record<string, unknown>;
  servers: { url: string; description: string }[];
  security: Record<string, string[]>[];
  tags: { name: string; description: string }[];
  /** The public reads are GETs; the operators' webhook routes add POST and DELETE (api/webhooks/openapi.ts). */
  paths: Record<string, PathItem>;
  /** Requests this API sends (OpenAPI 3.1): the webhook deliveries (api/webhooks/openapi.ts). */
  webhooks: Record<string, unknown>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
};
export type PathItem = { get?: Operation; post?: Operation; delete?: Operation };
type Operation = Record<string, unknown> & { operationId: string; responses: Record<string, Response> };
type Response = {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: JsonSchema; example?: unknown; examples?: Record<string, { value: unknown }> }>;
};

/** The chosen `$ref` targets; documents refer to them by these names. */
const REF = {
  error: { $ref: "#/components/schemas/ErrorEnvelope" },
  supplyError: { $ref: "#/components/schemas/SupplyError" },
  requestId: { $ref: "#/components/headers/X-Request-Id" },
  rateLimit: { $ref: "#/components/headers/RateLimit" },
  rateLimitPolicy: { $ref: "#/components/headers/RateLimit-Policy" },
  retryAfter: { $ref: "#/components/headers/Retry-After" },
  cacheControl: { $ref: "#/components/headers/Cache-Control" },
  supplyErrorHeader: { $ref: "#/components/headers/X-Supply-Error" },
} as const;

/** The index answers' caching headers (docs/api.md#the-index-api-apiindexv1: its Caching and Conditional GETs). */
const INDEX_CACHING = {
  ETag: {
    description:
      '`W/"<chainId>-<block>-<digest>"`: the chain, the block the answer is of and a digest of what it says of it (a ' +
      "reorg's or a redeployed index's other answer at that block has another tag). Send it back in `If-None-Match`.",
    schema: { type: "string" },
  },
  "Cache-Control": {
    description:
      "`public, max-age=2` at the head (and at a past block the chain has not finalized); `public, max-age=86400, immutable` at a block both the indexer and the chain have finalized.",
    schema: { type: "string" },
  },
};

const SUPPLY_RESULT = "^[0-9]+\\.[0-9]{2}$";
/** A figure's age (docs/api.md#supply-api): caches count its max-age from the read, not from their copy. */
const supplyAge = (maxAgeSec: number) => ({
  description:
    "Whole seconds since the figures were read from the chain (RFC 9111 §5.1), on whichever replica answers; never " +
    `above ${maxAgeSec}. A cache keeps the figure max-age − Age more.`,
  schema: { type: "integer", minimum: 0, maximum: maxAgeSec },
});
/** The codes whose answers carry Retry-After (and `retryAfterSec`): their statuses' responses name the header. */
const RETRY_CODES: readonly ErrorCode[] = ["RATE_LIMITED", "INDEX_BEHIND", "UPSTREAM_UNAVAILABLE", "INDEX_UNAVAILABLE"];

function v1Operation(op: V1Operation, example: unknown): Operation {
  const r = op.route;
  const prefix = limitedPrefix(op.path);
  const limitHeaders = prefix ? { RateLimit: REF.rateLimit, "RateLimit-Policy": REF.rateLimitPolicy } : {};
  // Every index route takes minBlock (api/index/query.ts AT_PARAMS), so every one can answer INDEX_BEHIND.
  const behind =
    op.path.startsWith(INDEX_BASE) && !r.errors.includes("INDEX_BEHIND") ? (["INDEX_BEHIND"] as const) : [];
  const codes: ErrorCode[] = [...r.errors, ...behind, ...(prefix ? (["RATE_LIMITED"] as const) : []), "INTERNAL_ERROR"];
  const responses: Record<string, Response> = {
    "200": {
      description: "Success.",
      headers: { "X-Request-Id": REF.requestId, ...limitHeaders },
      content: { "application/json": { schema: r.response.schema, example } },
    },
  };
  if (op.path.startsWith(INDEX_BASE)) {
    // An index answer names its block and body in an ETag, and a request naming that tag gets 304 (api/index/answer.ts).
    responses["200"]!.headers = { ...responses["200"]!.headers, ...INDEX_CACHING };
    responses["304"] = {
      description:
        "Not Modified: `If-None-Match` named this answer's `ETag` (weak comparison, a list, or `*`). No body; the " +
        "caching headers of the 200.",
      headers: { ...INDEX_CACHING, "X-Request-Id": REF.requestId, ...limitHeaders },
    };
  }
  for (const [status, group] of byStatus(codes, ERROR_STATUS)) {
    responses[String(status)] = {
      description: group.map((code) => `\`${code}\`: ${ERROR_DOCS[code].meaning}`).join("\n\n"),
      headers: {
        "X-Request-Id": REF.requestId,
        ...limitHeaders,
        ...(RETRY_CODES.some((code) => group.includes(code)) ? { "Retry-After": REF.retryAfter } : {}),
      },
      content: {
        "application/json": {
          schema: { type: "object", allOf: [REF.error], properties: { error: { enum: group } } },
          examples: Object.fromEntries(group.map((code) => [code, { value: ERROR_DOCS[code].example }])),
        },
      },
    };
  }
  return {
    operationId: r.operationId,
    summary: r.summary,
    description: r.description,
    tags: [op.tag],
    ...(r.verb ? { "x-user-facing-verb": r.verb, "x-steps": r.steps } : {}),
    ...(op.action ? { "x-contract": op.action.contract, "x-function": op.action.function } : {}),
    "x-mcp-tool": r.operationId,
    ...(prefix ? { "x-rate-limit-bucket": prefix } : {}),
    parameters: [
      ...Object.entries(r.pathParams ?? {}).map(([n, d]) => openApiParameter(n, "path", d, r.exampleRequest?.[n])),
      ...Object.entries(r.query).map(([n, d]) => openApiParameter(n, "query", d, r.exampleRequest?.[n])),
    ],
    responses,
  };
}

/** The event stream: the index's envelope of errors, but a text/event-stream 200, no ETag, and not an MCP tool. */
function streamOperation(): Operation {
  const op: V1Operation = {
    kind: "v1",
    path: openApiPath(INDEX_BASE + STREAM_PATH),
    servedBy: INDEX_BASE + STREAM_PATH,
    tag: "Index",
    route: streamRoute,
  };
  const { "x-mcp-tool": _tool, ...base } = v1Operation(op, streamRoute.response.example);
  const { "304": _notModified, ...responses } = base.responses;
  const ok = responses["200"]!;
  const { ETag: _etag, "Cache-Control": _cache, ...headers } = ok.headers ?? {};
  responses["200"] = {
    description: "The stream: events as they are indexed, until the client closes it.",
    headers,
    content: {
      "text/event-stream": {
        schema: { type: "string", description: "Server-Sent Events (WHATWG HTML §9.2)." },
        example: streamRoute.response.example,
      },
    },
  };
  return { ...base, parameters: [...STREAM_PARAMETERS], responses };
}

function supplyOperation(op: SupplyOperation): Operation {
  const r = op.route;
  const result: JsonSchema =
    r.example === null
      ? { type: "null", description: "Always null: there is no maximum." }
      : { type: "string", pattern: SUPPLY_RESULT, description: "Tokens with exactly 2 decimals, truncated." };
  const responses: Record<string, Response> = {
    "200": {
      description: `Success; cacheable for ${r.maxAgeSec} s.`,
      // max is made as it is answered: no Age (an absent one counts as 0).
      headers:
        r.example === null
          ? { "Cache-Control": REF.cacheControl, "X-Request-Id": REF.requestId }
          : { "Cache-Control": REF.cacheControl, Age: supplyAge(r.maxAgeSec), "X-Request-Id": REF.requestId },
      content: {
        "application/json": {
          schema: { type: "object", properties: { result }, required: ["result"], additionalProperties: false },
          example: { result: r.example },
        },
        "text/plain": {
          schema:
            r.example === null
              ? { const: "null", description: "The four characters null." }
              : { type: "string", pattern: SUPPLY_RESULT, description: "Only the number." },
          example: r.example ?? "null",
        },
      },
    },
  };
  for (const [status, group] of byStatus(r.errors, SUPPLY_ERROR_STATUS)) {
    const json = {
      schema: { type: "object", allOf: [REF.supplyError], properties: { error: { enum: group } } },
      examples: Object.fromEntries(group.map((code) => [code, { value: { result: null, error: code } }])),
    };
    responses[String(status)] = {
      description: group.map((code) => `\`${code}\`: ${SUPPLY_ERROR_MEANINGS[code]}`).join("\n\n"),
      headers: { "X-Supply-Error": REF.supplyErrorHeader, "X-Request-Id": REF.requestId },
      content:
        status === 400
          ? { "application/json": json } // a bad format is always answered in JSON
          : { "application/json": json, "text/plain": { schema: { type: "string", maxLength: 0 }, example: "" } },
    };
  }
  return {
    operationId: r.operationId,
    summary: r.summary,
    description: r.description,
    tags: [op.tag],
    parameters: [
      {
        name: "format",
        in: "query",
        required: false,
        description:
          "`bare` answers text/plain with only the number (failures: empty body, the code in X-Supply-Error); " +
          "any other value, or none, the JSON shape (spec §4.1). Other query parameters are ignored (cache-busters).",
        schema: { type: "string", enum: ["json", "bare"], default: "json" },
      },
    ],
    responses,
  };
}

const DESCRIPTION = `Two public, unauthenticated HTTP APIs of the protocol on Base.

**Supply API** (\`/api/supply/*\`): total, circulating and max supply for market-data aggregators; JSON \`{ "result": "123.45" }\` or plain text with \`?format=bare\`. Never rate-limited.

**Preparation API v1** (\`/api/mcp/v1/*\`): reads protocol state and returns unsigned transactions for AI assistants. A prepare route answers \`{ ok, chain, chainId, transactions: [{ step, to, data, value, chainId }] }\`; the wallet's \`send_calls\` sends \`transactions\` in order. The service never signs, holds keys or broadcasts.

**Narration.** Each prepare action has a user-facing verb (\`x-user-facing-verb\`): ETH royalties are *collected*, LP rewards *harvested*, tokens *locked* (plain or via the Furnace), LP *staked*, *unbonded* and *withdrawn*. On-chain function names keep a legacy \`claim*\` form; never use "claim" as a verb with users.

**Errors.** Every v1 failure is \`{ ok: false, error, message, detail? }\` (\`retryAfterSec\` and \`Retry-After\` on 429, 409 \`INDEX_BEHIND\` and 503 \`UPSTREAM_UNAVAILABLE\` / \`INDEX_UNAVAILABLE\` busy); the codes each route can answer are listed under its responses.

**Rate limits.** 300 requests per 60 s per client IP for each prefix (\`state/\`, \`preflight\`, \`quote/\`, \`prepare/\`, and \`index\` for all of /api/index/v1), advertised in the \`RateLimit\` / \`RateLimit-Policy\` headers; over budget: 429 \`RATE_LIMITED\` with \`Retry-After\`.

**Index API** (\`/api/index/v1/*\`): the lock index as data — a lock, its history, an account's locks and history, the ve leaderboard with rank lookup, protocol lock statistics. Every answer names the block it is of (\`blockNumber\`, \`blockTimestamp\`); \`?block=N\` answers as of any block from the lock contract's start block to the index's head; list pages carry an opaque \`nextCursor\` pinned to the first page's block. Rate-limited as one prefix (\`index\`).

**MCP.** The same v1 operations are MCP tools at \`POST /api/mcp\` (Streamable HTTP, stateless); each tool is named by its operation's \`x-mcp-tool\` and returns the same envelope as text.

Not in this document (platform routes): ${INFRASTRUCTURE_ROUTES.map((r) => `\`${r.path}\` (${r.why})`).join("; ")}.`;

const COMPONENTS = {
  schemas: { ErrorEnvelope: ERROR_ENVELOPE_SCHEMA, SupplyError: SUPPLY_ERROR_SCHEMA },
  securitySchemes: {
    operatorToken: {
      type: "http",
      scheme: "bearer",
      description: "The deployment's OPERATOR_TOKEN (the webhook routes only; every other operation is public).",
    },
  },
  headers: {
    "X-Request-Id": {
      description: "Echoes a valid incoming X-Request-Id, else a fresh UUID; quote it when reporting a problem.",
      schema: { type: "string" },
    },
    RateLimit: {
      description:
        'Budget left in this prefix\'s window, e.g. `"state";r=299;t=60` (draft-ietf-httpapi-ratelimit-headers).',
      schema: { type: "string" },
    },
    "RateLimit-Policy": {
      description: 'The prefix\'s quota per window, e.g. `"state";q=300;w=60`.',
      schema: { type: "string" },
    },
    "Retry-After": {
      description:
        "Seconds until the budget resets (429), until the index may have reached `minBlock` (409), or until the " +
        "node or the index may be asked again (503 `UPSTREAM_UNAVAILABLE`, `INDEX_UNAVAILABLE` busy).",
      schema: { type: "integer", minimum: 0 },
    },
    "Cache-Control": {
      description: "public, max-age=300 (max: 86400) on success; no-store on failure.",
      schema: { type: "string" },
    },
    "X-Supply-Error": {
      description: "The supply error code; the only carrier of it in bare mode.",
      schema: { type: "string", enum: Object.keys(SUPPLY_ERROR_STATUS) },
    },
  },
};

export type BuildOpenApiOptions = {
  /** The deployment whose addresses the prepare examples show; default Base mainnet. */
  exampleManifest?: Manifest;
};

export async function buildOpenApiDocument(options: BuildOpenApiOptions = {}): Promise<OpenApiDocument> {
  const manifest = options.exampleManifest ?? loadManifest("base");
  const paths: OpenApiDocument["paths"] = {};
  for (const op of OPERATIONS) {
    if (paths[op.path]) throw new Error(`duplicate documented path ${op.path}`);
    if (op.kind === "supply") {
      paths[op.path] = { get: supplyOperation(op) };
    } else {
      const example = op.action ? await prepareExample(op.action, manifest) : op.route.response.example;
      paths[op.path] = { get: v1Operation(op, example) };
    }
  }
  paths[openApiPath(INDEX_BASE + STREAM_PATH)] = { get: streamOperation() };
  for (const [path, item] of Object.entries(WEBHOOK_OPERATIONS)) {
    if (paths[path]) throw new Error(`duplicate documented path ${path}`);
    paths[path] = item as unknown as PathItem;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Asset protocol: Supply API and Preparation API",
      // The release (package.json's version, api/buildInfo.ts); the paths carry the API's major version (/v1).
      version: buildInfo().version,
      description: DESCRIPTION,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/", description: "This deployment" }],
    // A public API: no operation needs credentials (the supply routes are polled anonymously, v1 is per-IP limited).
    security: [],
    tags: [
      { name: "Supply", description: "Supply figures for market-data aggregators (spec §4.1)." },
      { name: "Reads", description: "Protocol state for assistants (spec §4.2)." },
      { name: "Prepare", description: "Unsigned transactions for the user's wallet (spec §4.3)." },
      { name: "Index", description: "The lock index at any block: locks, histories, the ve leaderboard, stats." },
      {
        name: "Webhooks",
        description:
          "Operators register the URLs the index's changes are sent to (signed per Standard Webhooks; the requests " +
          "sent are this document's `webhooks`). Behind OPERATOR_TOKEN; not MCP tools.",
      },
    ],
    paths,
    webhooks: WEBHOOK_DELIVERIES,
    components: COMPONENTS,
  };
}
