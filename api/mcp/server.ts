import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolRequest,
  type CallToolResult,
  GetPromptRequestSchema,
  ErrorCode as JsonRpcErrorCode,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Context, Handler, Hono } from "hono";
import type { StatusCode } from "hono/utils/http-status";
import { z } from "zod";
import { buildInfo } from "../buildInfo";
import { HANG_UP } from "../chain/rpc";
import { answerTurns, LARGE_ANSWER_BYTES } from "../http/answerTurns";
import { readBoundedBytes } from "../http/boundedBody";
import { CancelSource, onHangUp } from "../http/cancellation";
import type { ClientIpResolver } from "../http/clientIp";
import type { AppEnv } from "../http/env";
import { IN_PROCESS_CLIENT_IP, PARENT_HANG_UP } from "../http/env";
import { ApiError, BadParamsError, RateLimitedError } from "../http/errors";
import { parseParam } from "../http/params";
import { chargeRateLimit, limitedPrefix, type RateLimitOptions } from "../http/rateLimit";
import type { RouteDefinition } from "../route/definition";
import { type JsonSchema, kindRule, paramSchema } from "../route/jsonSchema";
import {
  assemble,
  chunkStream,
  costOf,
  errorAnswer,
  JSON_RPC,
  joinBytes,
  MCP_MAX_BODY_BYTES,
  MCP_MAX_RESPONSE_BYTES,
  modernRefusal,
  modernTextRefusal,
  overBudgetAnswers,
  parseBody,
  RefusedArgument,
  screen,
} from "./gatekeeper";
import { guideText, INSTRUCTIONS } from "./guide";
import { type ModernSurface, modernEndpoint, SUPPORTED_VERSIONS } from "./modern";
import { getPrompt, listedPrompts, PromptError } from "./prompts";
import {
  FIXED_RESOURCES,
  READ_ERROR_CODES,
  type ResourceRead,
  ResourceReadError,
  readResource,
  resourceSource,
  TEMPLATE_RESOURCES,
} from "./resources";

/**
 * The MCP endpoint (MCP Streamable HTTP, stateless, JSON responses) at /api/mcp. Its tools are the v1
 * operations of the route catalogue, so a tool's input schema is its route's parameters and its
 * description is its route's (in the user-facing verbs). A tool call is the REST request itself, made
 * in-process through the same app: the same strict parsing, gate, reads and envelope, and the same
 * per-client rate-limit bucket as the REST route it wraps (design.md).
 */

/** A documented v1 route the endpoint offers as a tool: the app gives them (api/routes.ts V1_OPERATIONS). */
export type ToolOperation = { path: string; route: RouteDefinition };

export type McpTool = Tool & { operation: ToolOperation };

/**
 * A route's 2020-12 response schema in a form both 2020-12 and draft-07 validators read the same way
 * (the SDK's client validates with Ajv's draft-07 default): a fixed sequence (`prefixItems` + `items:
 * false`) also gets `maxItems` and an `items` that admits any of its members, since under draft-07
 * `items: false` would forbid every element and `prefixItems` is unknown. Nested descriptions are dropped:
 * the tool's description and the OpenAPI document carry them, and tools/list (ten of which fit in one
 * answer, api/mcp/gatekeeper.ts) stays small.
 */
export function portableSchema(schema: unknown, nested = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => portableSchema(s, true));
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "properties" && typeof v === "object" && v !== null) {
      // Property names are field names, never keywords: only their schemas are rewritten.
      out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, portableSchema(sub, true)]));
    } else if (!(nested && k === "description")) {
      out[k] = portableSchema(v, true);
    }
  }
  if (Array.isArray(out.prefixItems) && out.items === false) {
    out.items = { anyOf: out.prefixItems };
    out.maxItems = out.prefixItems.length;
  }
  return out;
}

/** One tool per documented v1 operation, named by its operationId. */
export function mcpTools(operations: readonly ToolOperation[]): McpTool[] {
  return operations.map((operation) => {
    const r = operation.route;
    const params = { ...r.pathParams, ...r.query };
    return {
      name: r.operationId,
      title: r.summary,
      description: `${r.description}\n\nSame as GET ${operation.path}; returns its JSON envelope.`,
      // The route's 200 body (with the route's documented example, when it has a fixed one); an error envelope
      // comes as text with isError and no structuredContent.
      outputSchema: {
        ...(portableSchema(r.response.schema) as Tool["outputSchema"] & JsonSchema),
        ...(r.response.example === undefined ? {} : { examples: [r.response.example] }),
      },
      inputSchema: {
        type: "object",
        properties: Object.fromEntries(
          Object.entries(params).map(([name, doc]) => [
            name,
            { ...paramSchema(doc), description: `${doc.description} ${kindRule(doc.kind)}` },
          ]),
        ),
        required: Object.entries(params)
          .filter(([name, doc]) => doc.required || name in (r.pathParams ?? {}))
          .map(([name]) => name),
        additionalProperties: false,
        // The arguments of the documented example (the OpenAPI document's parameter examples).
        ...(r.exampleRequest === undefined ? {} : { examples: [r.exampleRequest] }),
      },
      // Reads and calldata only: nothing is written, and the same arguments give the same answer at one block.
      annotations: { title: r.summary, readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      operation,
    };
  });
}

/**
 * An argument as it goes into the URL. Strings go as given, so the route's strict parser judges them.
 * MCP clients (the inspector, most assistants) send integers as JSON numbers and flags as JSON
 * booleans: a safe integer is written in decimal (exactly the number sent; the route still judges
 * its range) and a boolean as true/false. A float, an unsafe integer (beyond 2^53 − 1 a JSON number
 * may already have lost digits in the client) or any other type is refused: nothing is rounded.
 */
function argumentText(name: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof RefusedArgument) throw new BadParamsError(value.message, { param: name });
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (typeof value === "boolean") return String(value);
  // null is not "not given": an omitted optional takes its default, and several defaults move money or drop a safety
  // gate (requireSimulationOk null would hand out a batch the caller asked to have simulated first, targetTokenId null
  // would be a new lock instead of a top-up, compound null a plain harvest). The inputSchema declares no null.
  if (value === null) {
    throw new BadParamsError(`${name} is null; omit the argument to use its default, or give a value.`, {
      param: name,
    });
  }
  throw new BadParamsError(
    `${name} must be a string (decimal for amounts, exactly true or false for flags), or a safe integer.`,
    { param: name },
  );
}

/**
 * The REST path of a tool call (argument by argument: argumentText). An argument given as `null` is BAD_PARAMS, as
 * any other type the inputSchema does not declare: only an omitted argument takes its default.
 */
export function toolCallPath(operation: ToolOperation, args: Record<string, unknown> = {}): string {
  const pathParams = operation.route.pathParams ?? {};
  const query = new URLSearchParams();
  const given: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const text = argumentText(name, value);
    // Own names only: `toString` or `__proto__` is not a path parameter (the route refuses it as unknown).
    if (Object.hasOwn(pathParams, name)) given[name] = text;
    else query.append(name, text);
  }
  // operation.path is the concrete OpenAPI path ("/api/mcp/v1/state/{address}", "/api/mcp/v1/prepare/lock").
  const path = operation.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const value = given[name];
    if (value === undefined) throw new BadParamsError(`Missing required parameter ${name}.`, { param: name });
    // Judged here, as its kind's pattern says (the tool's inputSchema): a path segment can name another route — `..`
    // (URL parsing removes it before routing, encoded or not) or a board `ve` (the ve board's own route).
    parseParam(name, pathParams[name]!, value);
    return encodeURIComponent(value);
  });
  const q = query.toString();
  return q ? `${path}?${q}` : path;
}

/**
 * The route's JSON as text (for clients that read content) and, on success, as structuredContent
 * (MCP 2025-06-18: what the tool's outputSchema describes). An error envelope is not what the output
 * schema describes, so it comes as text with isError only.
 */
function envelopeResult(text: string, isError: boolean): CallToolResult {
  if (isError) return { content: [{ type: "text", text }], isError };
  return { content: [{ type: "text", text }], structuredContent: JSON.parse(text) as Record<string, unknown>, isError };
}

export type McpEndpointOptions = {
  /** The app whose routes the tools call (the one this endpoint is mounted on). */
  app: Hono<AppEnv>;
  /** The routes offered as tools, each called through `app`. */
  operations: readonly ToolOperation[];
  clientIp: ClientIpResolver;
  /** Every message spends the client's `mcp` budget (api/mcp/gatekeeper.ts). */
  rateLimit: RateLimitOptions;
  /**
   * Who answers the 2025 era: this module's path over SDK 1.x (the default, and what the app mounts), or SDK v2's
   * stateless fallback (the alternative bench/mcp-eras.ts measures; docs/benchmarks.md has why it is not used).
   */
  legacyVia?: "sdk1" | "sdk2";
};

const JSON_TYPE = { "content-type": "application/json" } as const;

/**
 * A tools/call as the SDK hands it to its handler after the gatekeeper screened it: the method checked, the params
 * passed through as they are (screen parsed them with CallToolRequestSchema before forwarding the message).
 */
const SCREENED_TOOL_CALL = z.object({ method: z.literal("tools/call") }).passthrough();

/**
 * A tools/call without its `task` (2025-11-25 task augmentation). This server declares no `tasks` capability, and the
 * tasks utility says a receiver that does not declare it for a request type MUST process such requests normally,
 * ignoring the task metadata; SDK 1.x instead answered -32603 "Server does not support task creation".
 */
function withoutTask(message: unknown): unknown {
  const m = message as { method?: unknown; params?: unknown };
  if (m.method !== "tools/call" || typeof m.params !== "object" || m.params === null) return message;
  if (!Object.hasOwn(m.params, "task")) return message;
  const { task: _task, ...params } = m.params as Record<string, unknown>;
  return { ...m, params };
}

/** The revisions this path answers (2026-07-28 is api/mcp/modern.ts's). */
const LEGACY_VERSIONS: readonly string[] = SUPPORTED_VERSIONS.filter((v) => v < "2026");

/**
 * The Origin rule of the MCP transport (2025-06-18: servers must validate Origin, and answer 403 to an
 * invalid one). Its purpose is DNS rebinding: a web page reaching a server only the browser's network
 * can see, with the browser's ambient credentials. This server is public, answers every origin with
 * `Access-Control-Allow-Origin: *` already, and has no cookies, sessions or auth — only public reads and
 * unsigned calldata — so a rebinding page gains nothing it could not fetch directly. Any well-formed
 * origin (scheme://host[:port], or the opaque `null` of sandboxed pages and files) is accepted; a
 * malformed Origin header is refused with 403.
 */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

export function acceptableOrigin(origin: string | undefined): boolean {
  return origin === undefined || origin === "null" || ORIGIN.test(origin);
}

export function mcpEndpoint(o: McpEndpointOptions): Handler {
  const tools = mcpTools(o.operations);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listed: Tool[] = tools.map(({ operation: _operation, ...tool }) => tool);
  const guide = guideText(listed);
  // tools/list is answered from these bytes (api/mcp/gatekeeper.ts): they never change while the process runs.
  const toolsOf = {
    isTool: (name: string) => byName.has(name),
    isRoutedResource: (uri: string) => {
      const source = resourceSource(uri);
      return source !== null && byName.has(source.tool);
    },
    listResult: Buffer.from(JSON.stringify({ tools: listed }), "utf8"),
  };
  const turns = answerTurns();
  // Each Server would otherwise build its own Ajv (used only for elicitation, which these tools never
  // ask for): one per endpoint keeps a stateless request cheap.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  /** A tool's route, asked in-process with the MCP request's client address, request id and hang-up. */
  async function requestRoute(c: Context, hangUp: CancelSource, path: string): Promise<Response> {
    const ip = o.clientIp(c);
    const requestId = c.res.headers.get("x-request-id");
    // The MCP client's hang-up goes along, so it stops the tool call's work too (api/http/cancellation.ts).
    return o.app.request(
      path,
      { headers: { accept: "application/json", ...(requestId ? { "x-request-id": requestId } : {}) } },
      { ...(ip === null ? {} : { [IN_PROCESS_CLIENT_IP]: ip }), [PARENT_HANG_UP]: hangUp },
    );
  }

  /** A tool call, the same in both eras; null for an unknown tool (each era refuses it its own way). */
  async function callTool(
    c: Context,
    hangUp: CancelSource,
    name: string,
    args: Record<string, unknown> | undefined,
  ): Promise<CallToolResult | null> {
    const tool = byName.get(name);
    if (!tool) return null;
    let path: string;
    try {
      path = toolCallPath(tool.operation, args);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Never sent to its route, so it pays the route's budget here: a refused call is not free.
      const prefix = limitedPrefix(tool.operation.path);
      const refused =
        prefix === null
          ? error
          : await chargeRateLimit(c, prefix, o.rateLimit).then(
              () => error,
              (e) => e,
            );
      return envelopeResult(JSON.stringify((refused as ApiError).toEnvelope()), true);
    }
    const res = await requestRoute(c, hangUp, path);
    return envelopeResult(await res.text(), !res.ok);
  }

  /** A resource read, the same in both eras: an index resource is its tool's route, at one block. */
  function read(c: Context, hangUp: CancelSource, uri: string): Promise<ResourceRead> {
    return readResource(uri, guide, async (name, args) => {
      const tool = byName.get(name);
      if (!tool) throw new ResourceReadError("not-found", `Resource not found: ${uri.slice(0, 128)}`, { uri });
      let path: string;
      try {
        path = toolCallPath(tool.operation, args);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        throw new ResourceReadError("invalid", error.message, { uri, ...error.toEnvelope() });
      }
      return requestRoute(c, hangUp, path);
    });
  }

  const surface: ModernSurface = {
    name: "asset-protocol",
    title: "Asset protocol (Base)",
    version: buildInfo().version,
    instructions: INSTRUCTIONS,
    tools: listed,
    resources: FIXED_RESOURCES,
    resourceTemplates: TEMPLATE_RESOURCES,
    prompts: listedPrompts(),
    callTool,
    readResource: read,
    getPrompt,
  };
  const legacyViaSdk2 = o.legacyVia === "sdk2";
  const modern = modernEndpoint(surface, { legacy: legacyViaSdk2 ? "stateless" : "reject" });

  /** A stateless 2025-era server per HTTP request (the SDK's stateless pattern): nothing outlives the request. */
  function serverFor(c: Context, hangUp: CancelSource): Server {
    const server = new Server(
      { name: surface.name, title: surface.title, version: surface.version },
      {
        capabilities: {
          tools: { listChanged: false },
          resources: { listChanged: false, subscribe: false },
          prompts: { listChanged: false },
        },
        instructions: INSTRUCTIONS,
        jsonSchemaValidator,
      },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
    // Every tools/call reaching here fit CallToolRequestSchema in the gatekeeper (screen), parsed there once: Server's
    // own registration would parse it twice more (its tools/call wrapper, then Protocol's) and the result once.
    // Registered on Protocol with a schema that names the method only, its params are taken as parsed.
    Protocol.prototype.setRequestHandler.call(server, SCREENED_TOOL_CALL, async (screened) => {
      const { params } = screened as unknown as CallToolRequest;
      const result = await callTool(c, hangUp, params.name, params.arguments);
      if (!result) throw new McpError(JsonRpcErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
      return result;
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [...FIXED_RESOURCES] }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [...TEMPLATE_RESOURCES],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      try {
        const { uri, mimeType, text } = await read(c, hangUp, request.params.uri);
        return { contents: [{ uri, mimeType, text }] };
      } catch (error) {
        if (!(error instanceof ResourceReadError)) throw error;
        const code = READ_ERROR_CODES[error.kind];
        throw new McpError(code, error.message, error.data);
      }
    });
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: listedPrompts() }));
    server.setRequestHandler(GetPromptRequestSchema, async (request) => {
      try {
        return getPrompt(request.params.name, request.params.arguments);
      } catch (error) {
        if (error instanceof PromptError) throw new McpError(JsonRpcErrorCode.InvalidParams, error.message);
        throw error;
      }
    });
    return server;
  }

  return async (c) => {
    if (c.req.method !== "POST") {
      // Stateless: no session to open a server-to-client stream on (GET) or to end (DELETE).
      c.header("allow", "POST, OPTIONS");
      throw new ApiError("METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed on /api/mcp; use POST.`, {
        allowed: ["POST", "OPTIONS"],
      });
    }
    if (!acceptableOrigin(c.req.header("origin"))) {
      return c.body(errorAnswer(null, JSON_RPC.SERVER_ERROR, "Forbidden: malformed Origin header"), 403, JSON_TYPE);
    }
    // The transport's own header checks, first, so a message answered here meets them too.
    const accept = c.req.header("accept") ?? "";
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      const message = "Not Acceptable: Client must accept both application/json and text/event-stream";
      return c.body(errorAnswer(null, JSON_RPC.SERVER_ERROR, message), 406, JSON_TYPE);
    }
    if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
      const message = "Unsupported Media Type: Content-Type must be application/json";
      return c.body(errorAnswer(null, JSON_RPC.SERVER_ERROR, message), 415, JSON_TYPE);
    }
    const body = parseBody(await readBoundedBytes(c.req.raw, MCP_MAX_BODY_BYTES));
    // 2026-07-28 (a per-request envelope, or its protocol-version header): the modern era's own server.
    const message = body.kind === "ok" ? (body.batch ? body.messages : body.messages[0]) : undefined;
    // A message refused for its text (vetText) is refused alike in both eras, and is not handed to the SDK's classifier
    // (whose validator a deep message overflows); a batch with such a message is the 2025 era's (2026-07-28 has none).
    const refusedText = body.kind === "ok" && body.refused.size > 0;
    const claimed =
      body.kind === "ok" && (legacyViaSdk2 || (refusedText ? !body.batch : await modern.claims(c.req.raw, message)));
    if (body.kind === "ok" && claimed) {
      // The same budget as the 2025 era: one per message, a tool call (or a routed read) its route's.
      const cost = body.messages.length - screen(body.messages, toolsOf, body.refused).toolCalls;
      if (cost > 0) {
        try {
          await chargeRateLimit(c, "mcp", o.rateLimit, cost);
        } catch (error) {
          if (!(error instanceof RateLimitedError)) throw error;
          c.header("retry-after", String(error.retryAfterSec));
          return c.body(overBudgetAnswers(body, error.retryAfterSec), 429, JSON_TYPE);
        }
      }
      // What the text showed (too deep, a member given twice), an id too large to echo and params of the wrong shape get a
      // short error here, as in the 2025 era (SDK v2 answers some with -32603 and its validator's dump, a too deep one
      // with a 500, a large id under its rounded value).
      const refused = body.refused.size > 0 ? modernTextRefusal(body) : modernRefusal(message);
      if (refused !== null) return c.body(refused, 200, JSON_TYPE);
      return modern.serve(c, message);
    }
    // The 2025 transport: a request after initialize names its revision in MCP-Protocol-Version; one this server does
    // not speak is 400 (the SDK checks it only on what reaches it; ping and tools/list are answered here).
    // A body that is not JSON-RPC at all is answered as such first (-32700, 413, a bad batch), whichever revision the
    // header names: its revision cannot be known from it.
    const revision = c.req.header("mcp-protocol-version");
    if (body.kind === "ok" && !refusedText && revision !== undefined && !LEGACY_VERSIONS.includes(revision)) {
      const message = `Bad Request: Unsupported protocol version: ${revision.slice(0, 32)} (supported versions: ${SUPPORTED_VERSIONS.join(", ")})`;
      return c.body(errorAnswer(null, JSON_RPC.SERVER_ERROR, message), 400, JSON_TYPE);
    }
    const parsed = body.kind === "ok" ? { ...body, ...screen(body.messages, toolsOf, body.refused) } : body;
    const cost = costOf(parsed);
    if (cost > 0) {
      try {
        await chargeRateLimit(c, "mcp", o.rateLimit, cost);
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        c.header("retry-after", String(error.retryAfterSec));
        return c.body(overBudgetAnswers(parsed, error.retryAfterSec), 429, JSON_TYPE);
      }
    }
    if (parsed.kind === "error") return c.body(parsed.answer, parsed.status, JSON_TYPE);

    const { answers, forward } = parsed;
    let sdkAnswers: Record<string, unknown>[] = [];
    if (forward.length > 0) {
      const forwarded = forward.map((f) => withoutTask(f.message));
      const res = await viaSdk(c, parsed.batch ? forwarded : forwarded[0]);
      // An HTTP-level refusal of the transport (protocol version, one initialize per request…) is the answer.
      if (res.status !== 200 && res.status !== 202) {
        res.headers.forEach((value, key) => {
          c.header(key, value);
        });
        return c.newResponse(res.body, res.status as StatusCode);
      }
      if (res.body) {
        const body = JSON.parse(res.body) as Record<string, unknown> | Record<string, unknown>[];
        sdkAnswers = Array.isArray(body) ? body : [body];
      }
    }
    const answer = assemble(parsed.batch, parsed.messages.length, answers, forward, sdkAnswers);
    if (answer === null) return c.body(null, 202);
    if (answer.byteLength > MCP_MAX_RESPONSE_BYTES) {
      const message = `Invalid Request: the answers would exceed ${MCP_MAX_RESPONSE_BYTES} bytes; send fewer messages.`;
      return c.body(errorAnswer(null, JSON_RPC.INVALID_REQUEST, message), 400, JSON_TYPE);
    }
    // A large answer is written in a turn of its own (api/http/answerTurns.ts), from the shared bytes.
    await turns.turnFor(answer.byteLength);
    if (answer.byteLength < LARGE_ANSWER_BYTES) return c.body(joinBytes(answer), 200, JSON_TYPE);
    // Its length declared, so it goes out as it would in one piece (no chunked encoding): the same bytes.
    const headers = { ...JSON_TYPE, "content-length": String(answer.byteLength) };
    return c.body(chunkStream(answer), 200, headers);
  };

  /** The messages the SDK must handle (initialize, tools/call, notifications), through a stateless server. */
  async function viaSdk(
    c: Context,
    parsedBody: unknown,
  ): Promise<{ status: number; body: string | null; headers: Headers }> {
    const hangUp = new CancelSource();
    const stopWatching = onHangUp(c, () => hangUp.abort(HANG_UP));
    const server = serverFor(c, hangUp);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(c.req.raw, { parsedBody });
      // JSON mode: the body is already complete.
      return { status: res.status, body: res.body ? await res.text() : null, headers: res.headers };
    } finally {
      stopWatching();
      await server.close();
    }
  }
}
