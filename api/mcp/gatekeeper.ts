/**
 * What POST /api/mcp checks before the MCP SDK sees a message, so the endpoint cannot be used to amplify
 * traffic or burn CPU for free, and malformed messages get the JSON-RPC error their shape calls for:
 *
 * - the body is at most MCP_MAX_BODY_BYTES; a batch holds 1 to MCP_MAX_BATCH messages (-32600 otherwise);
 * - every message costs 1 from the client's `mcp` budget (the v1 policy: RATE_LIMIT_MAX per
 *   RATE_LIMIT_WINDOW_SEC), initialize, ping, tools/list, notifications and malformed messages included;
 *   a well-formed tool call (or a read of a resource an index route answers) instead spends its REST route's
 *   budget, as the REST request it makes (so an assistant's calls are limited exactly like the REST routes). Over budget: HTTP 429 with Retry-After
 *   and one JSON-RPC error per message (code -32000, data { error: "RATE_LIMITED", retryAfterSec });
 * - -32700 for a body that is not UTF-8 JSON (id null), -32600 for a message that is not a JSON-RPC 2.0 request
 *   (an integer id beyond 2^53 − 1 included: it could not be echoed exactly), -32601 for an unknown method, -32602 for
 *   params of the wrong shape, each with a short message (never a validator's dump);
 * - in a batch, every request whose id another request of the batch also uses is refused with -32600 (the others
 *   are answered as usual). JSON-RPC 2.0 leaves duplicate ids to the server; a client matches answers to requests
 *   by id, so two answers with one id cannot be told apart. Refusing each such request alike gives that client the
 *   same answer whichever one it reads, costs nothing upstream, and is the refusal a client can act on (renumber);
 *   answering them one by one would still leave it two answers under one id;
 * - ping and tools/list are answered here from precomputed JSON; the SDK sees only what needs it
 *   (initialize, tools/call, resources/*, prompts/*); a well-formed notification or response is taken and dropped
 *   (a stateless server has no use for either), a malformed one is its own -32600;
 * - a message is judged on its text too (vetText): nested deeper than MCP_MAX_DEPTH, a member given twice, a tool
 *   argument written as a number that is not exactly an integer;
 * - 2026-07-28 requests (a per-request envelope) never come here: api/mcp/modern.ts answers them;
 * - an answer is at most MCP_MAX_RESPONSE_BYTES.
 *
 * tools/list's result (84 kB of JSON) never changes while the process runs, so it is encoded to UTF-8 once and
 * an answer is that Buffer with its id's text spliced in front; a request's answer is one Buffer copied from
 * such parts (assemble): a small answer copied into one Buffer (joinBytes), a large one written chunk by chunk
 * from the shared bytes without copying them (chunkStream). Stringifying, measuring and encoding 840 kB of
 * JSON per batch of 10 cost 5–9 ms of the one event loop and 840 kB of memory per unread answer
 * (docs/benchmarks-log.md#abuse-memory).
 */

import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { utf8Text } from "../http/boundedBody";
import { promptNameProblem, promptValuesProblem } from "./prompts";
import { type JsonPath, scanJson } from "./rawJson";

export const MCP_MAX_BODY_BYTES = 64 * 1024;
/**
 * How deep a message may nest objects and arrays. An MCP request needs a handful of levels (`_meta`'s capabilities are
 * the deepest, ~6); the SDKs' validators recurse once a level, and a 5,000-deep object they are handed overflows the
 * stack (a 500 in SDK v2, the whole batch lost in 1.x).
 */
export const MCP_MAX_DEPTH = 32;
/** MCP 2025-06-18 dropped JSON-RPC batching; older clients may still batch, a few messages at a time. */
export const MCP_MAX_BATCH = 10;
export const MCP_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

export const JSON_RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  /** Implementation-defined server error: used for "over budget" (with data.error = RATE_LIMITED). */
  SERVER_ERROR: -32000,
} as const;

type Id = string | number | null;
type Json = Record<string, unknown>;

/** One JSON-RPC error answer, serialised. */
export function errorAnswer(id: Id, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } });
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
/**
 * MCP's RequestId as both SDKs check it: a string or a safe integer (SDK 1.x refused a request with any other number,
 * and every message of its batch with it).
 */
const isId = (v: unknown): v is string | number => typeof v === "string" || Number.isSafeInteger(v);

/**
 * Why an id is not one (isId). An integer beyond 2^53 − 1 has its own reason: JSON.parse has already rounded it, so
 * no answer could carry the id as sent (SDK v2 answered under the rounded one); a client whose ids grow that large can
 * send them as strings, which are echoed as sent.
 */
const idProblem = (v: unknown) =>
  typeof v === "number" && Number.isInteger(v)
    ? "id must be a string or an integer within ±(2^53 − 1): a larger number cannot be echoed exactly (send it as a string)"
    : "id must be a string or an integer";

/** The id to answer a message with: its own when well-formed, else null (JSON-RPC 2.0 §5). */
function idOf(message: unknown): Id {
  return isObject(message) && isId(message.id) ? message.id : null;
}

export type Parsed =
  | {
      kind: "ok";
      batch: boolean;
      messages: unknown[];
      /** The error answers of messages refused for what their text showed (vetText), by message index. */
      refused: Map<number, string>;
    }
  | { kind: "error"; status: 400 | 413; answer: string };

/**
 * A tool argument refused for how it was written (repeated, or a number that is not a plain integer): the call's
 * route never sees it, and argumentText (api/mcp/server.ts) answers BAD_PARAMS with this message, as the REST route
 * answers a repeated or malformed parameter.
 */
export class RefusedArgument {
  constructor(readonly message: string) {}
}

/** A message's own part of a path from the body's root (a batch's paths start with the message's index). */
const withinMessage = (path: JsonPath, batch: boolean): JsonPath => (batch ? path.slice(1) : path);
const isArgumentPath = (p: JsonPath) => p.length === 3 && p[0] === "params" && p[1] === "arguments";

/**
 * Acts on what the text shows and JSON.parse hides (api/mcp/rawJson.ts): a message nested deeper than MCP_MAX_DEPTH
 * is -32600; a tool call's argument given twice or written as a number that is not exactly an integer becomes a
 * RefusedArgument (BAD_PARAMS from the tool, naming it); a member given twice anywhere else is -32602 in params,
 * -32600 outside them (which of the two the sender meant cannot be known).
 */
function vetText(text: string, batch: boolean, messages: unknown[]): Map<number, string> {
  const refused = new Map<number, string>();
  const scan = scanJson(text, (path) => isArgumentPath(withinMessage(path, batch)));
  const indexOf = (path: JsonPath) => (batch ? (path[0] as number) : 0);
  const refuse = (index: number, code: number, message: string) => {
    if (!refused.has(index)) refused.set(index, errorAnswer(idOf(messages[index]), code, message));
  };
  messages.forEach((_, index) => {
    if ((scan.depths[index] ?? 0) > MCP_MAX_DEPTH) {
      refuse(index, JSON_RPC.INVALID_REQUEST, `Invalid Request: nested deeper than ${MCP_MAX_DEPTH} levels.`);
    }
  });
  for (const finding of scan.findings) {
    const index = indexOf(finding.path);
    const message = messages[index];
    const path = withinMessage(finding.path, batch);
    const args = isObject(message) && isObject(message.params) ? message.params.arguments : undefined;
    const toolArgs = isObject(message) && message.method === "tools/call" && isObject(args) ? args : undefined;
    if (finding.kind === "inexact") {
      const name = path[2] as string;
      if (toolArgs && Object.hasOwn(toolArgs, name) && typeof toolArgs[name] === "number") {
        const text = `${name} must be a string (decimal for amounts), or an integer written without a fraction or exponent.`;
        toolArgs[name] = new RefusedArgument(text);
      }
      continue;
    }
    const name = finding.name.slice(0, 64);
    if (toolArgs && path.length === 2 && path[0] === "params" && path[1] === "arguments") {
      toolArgs[finding.name] = new RefusedArgument(`Parameter ${name} is given more than once.`);
    } else if (path[0] === "params") {
      refuse(index, JSON_RPC.INVALID_PARAMS, `Invalid params: member ${name} is given more than once.`);
    } else refuse(index, JSON_RPC.INVALID_REQUEST, `Invalid Request: member ${name} is given more than once.`);
  }
  return refused;
}

/** The body (its bytes, null when over the limit) as JSON-RPC: one message or a batch within the limits. */
export function parseBody(bytes: Uint8Array | null): Parsed {
  if (bytes === null) {
    const message = `Request body larger than ${MCP_MAX_BODY_BYTES} bytes.`;
    return { kind: "error", status: 413, answer: errorAnswer(null, JSON_RPC.INVALID_REQUEST, message) };
  }
  // Decoded leniently, an invalid byte in an id string became U+FFFD and the answer went out under an id never sent.
  const text = utf8Text(bytes);
  if (text === null) {
    const answer = errorAnswer(null, JSON_RPC.PARSE_ERROR, "Parse error: the body is not valid UTF-8.");
    return { kind: "error", status: 400, answer };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      kind: "error",
      status: 400,
      answer: errorAnswer(null, JSON_RPC.PARSE_ERROR, "Parse error: invalid JSON."),
    };
  }
  if (!Array.isArray(body)) {
    const messages = [body];
    return { kind: "ok", batch: false, messages, refused: vetText(text, false, messages) };
  }
  if (body.length === 0 || body.length > MCP_MAX_BATCH) {
    const message = `Invalid Request: a batch holds 1 to ${MCP_MAX_BATCH} messages.`;
    return { kind: "error", status: 400, answer: errorAnswer(null, JSON_RPC.INVALID_REQUEST, message) };
  }
  return { kind: "ok", batch: true, messages: body, refused: vetText(text, true, body) };
}

/**
 * What a request costs the client's `mcp` budget: one per message, except well-formed tool calls (their
 * REST routes charge them); a body that is not JSON-RPC counts as one.
 */
export function costOf(parsed: Exclude<Parsed, { kind: "ok" }> | (Extract<Parsed, { kind: "ok" }> & Screened)): number {
  return parsed.kind === "ok" ? parsed.messages.length - parsed.toolCalls : 1;
}

/** The answers of an over-budget request: one per message that expects one. */
export function overBudgetAnswers(parsed: Parsed, retryAfterSec: number): string {
  const message = `Too many requests; retry after ${retryAfterSec} s.`;
  const data = { error: "RATE_LIMITED", retryAfterSec };
  if (parsed.kind !== "ok") return errorAnswer(null, JSON_RPC.SERVER_ERROR, message, data);
  const answers = parsed.messages.map((m) => errorAnswer(idOf(m), JSON_RPC.SERVER_ERROR, message, data));
  return parsed.batch ? `[${answers.join(",")}]` : answers[0]!;
}

/** The methods this server answers in the 2025 era. Anything else is -32601. */
const METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
]);

/**
 * Argument names the SDKs' own check of `arguments` (a zod record) cannot pass on: `constructor` SDK 1.x refuses with
 * an internal error and its dump, `__proto__` both SDKs drop. A tool call's arguments never go through that check: each
 * era hands its tool the arguments as parsed from the body, where either is an unknown parameter like any other (the
 * route's BAD_PARAMS). A prompt's arguments are judged here by name before either SDK sees them (promptNameProblem),
 * where either is an argument the prompt does not take like any other.
 */
const SDK_UNTAKEN_ARGUMENTS = ["constructor", "__proto__"];

/** The first argument name the SDKs cannot pass on, or undefined. */
const untakenArgument = (args: Json) => SDK_UNTAKEN_ARGUMENTS.find((name) => Object.hasOwn(args, name));

/** Why a prompt's arguments are not a map of strings (MCP: prompts/get's arguments are strings), or null. */
function promptArgumentsProblem(args: Json): string | null {
  for (const [name, value] of Object.entries(args)) {
    if (typeof value !== "string") return `prompt argument ${name.slice(0, 64)} must be a string.`;
  }
  return null;
}

/**
 * Why a request's params do not fit its method, or null when they do. Messages are short by design. The 2026-07-28
 * era (api/mcp/modern.ts) screens with it too (`modern`): there the SDK v2 parses initialize and `_meta` itself.
 */
function invalidParams(method: string, params: unknown, { modern = false } = {}): string | null {
  if (params !== undefined && !isObject(params)) return "params must be an object.";
  const p = (params ?? {}) as Json;
  switch (method) {
    case "initialize":
      if (modern) return null;
      if (typeof p.protocolVersion !== "string") return "initialize needs protocolVersion (a string).";
      if (!isObject(p.capabilities)) return "initialize needs capabilities (an object).";
      if (!isObject(p.clientInfo) || typeof p.clientInfo.name !== "string" || typeof p.clientInfo.version !== "string")
        return "initialize needs clientInfo { name, version } (strings).";
      return null;
    case "tools/call":
      if (typeof p.name !== "string") return "tools/call needs name (a string).";
      if (p.arguments !== undefined && !isObject(p.arguments)) return "arguments must be an object.";
      return null;
    case "tools/list":
    case "resources/list":
    case "resources/templates/list":
    case "prompts/list":
      if (p.cursor !== undefined && typeof p.cursor !== "string") return "cursor must be a string.";
      // Every list is answered whole (no nextCursor), so no cursor was ever handed out (MCP: an invalid one is -32602).
      if (p.cursor !== undefined) return "cursor is not one this server handed out (its lists come whole).";
      return null;
    case "resources/read":
      if (typeof p.uri !== "string") return "resources/read needs uri (a string).";
      return null;
    case "prompts/get":
      if (typeof p.name !== "string") return "prompts/get needs name (a string).";
      if (p.arguments !== undefined && !isObject(p.arguments)) return "arguments must be an object.";
      return (
        promptNameProblem(p.name, p.arguments ?? {}) ??
        promptArgumentsProblem(p.arguments ?? {}) ??
        promptValuesProblem(p.name, p.arguments ?? {})
      );
    default:
      return null;
  }
}

/**
 * A 2026-07-28 request's refusal made here, else null (a notification, or anything else, goes to the SDK as it is):
 * -32600 for an integer id beyond 2^53 − 1 (idProblem; as in the 2025 era), -32602 when its params do not fit its
 * method (invalidParams, `modern`).
 */
export function modernRefusal(message: unknown): string | null {
  if (!isObject(message) || typeof message.method !== "string") return null;
  const { id } = message;
  if (typeof id === "number" && Number.isInteger(id) && !isId(id)) {
    return errorAnswer(null, JSON_RPC.INVALID_REQUEST, `Invalid Request: ${idProblem(id)}.`);
  }
  if (!isId(id)) return null;
  const bad = invalidParams(message.method, message.params, { modern: true });
  return bad === null ? null : errorAnswer(id, JSON_RPC.INVALID_PARAMS, `Invalid params: ${bad}`);
}

/** A 2026-07-28 request's answer when its text refused one of its messages (vetText): those refusals, in order. */
export function modernTextRefusal(parsed: Extract<Parsed, { kind: "ok" }>): string {
  const answers = [...parsed.refused.entries()].sort(([a], [b]) => a - b).map(([, answer]) => answer);
  return parsed.batch ? `[${answers.join(",")}]` : answers[0]!;
}

/** One message's answer made here: its JSON text, or the parts of that text in order (text and UTF-8 bytes). */
export type Answer = string | readonly (string | Uint8Array)[];

/**
 * Sorts the messages of a request: an answer made here (errors, ping, tools/list), or handed to the SDK.
 * `listResult` is tools/list's `result` as UTF-8 JSON, encoded once per process.
 */
export type Screened = {
  /** Answers made here, by message index. */
  answers: Map<number, Answer>;
  /** What the SDK handles, with each message's index. */
  forward: { index: number; message: Json }[];
  /** How many of `forward` are well-formed calls of a known tool, or reads of a resource a tool's route answers. */
  toolCalls: number;
};

/** The ids that more than one request of the batch uses (1 and "1" are different ids). */
function sharedIds(messages: readonly unknown[]): Set<string> {
  const seen = new Set<string>();
  const shared = new Set<string>();
  for (const m of messages) {
    if (!isObject(m) || !("method" in m) || !isId(m.id)) continue;
    const key = idKey(m.id);
    if (seen.has(key)) shared.add(key);
    seen.add(key);
  }
  return shared;
}

const idKey = (id: string | number) => `${typeof id}:${id}`;

/**
 * The SDK 1.x schema each forwarded method's request must fit. The SDK checks them itself, but answers a misfit with
 * -32603 and zod's dump (a handler's parse), or refuses the whole HTTP request with -32700 (the transport's check of
 * every message): checked here first, a misfit is this message's own short -32602.
 */
const REQUEST_SCHEMAS: Record<string, { safeParse(value: unknown): { success: boolean; error?: ZodLikeError } }> = {
  initialize: InitializeRequestSchema,
  "tools/call": CallToolRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "prompts/get": GetPromptRequestSchema,
};
type ZodLikeError = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

/**
 * A tools/call as SDK 1.x's schema can judge it: an argument named `constructor` fails its record check (not a plain
 * object), so such arguments are judged without theirs. What the tool is handed is the message itself, where the name
 * is an unknown parameter like any other.
 */
function withTakenArguments(message: Json): Json {
  const params = message.params as Json;
  if (!isObject(params.arguments) || untakenArgument(params.arguments) === undefined) return message;
  const args = Object.fromEntries(Object.entries(params.arguments).filter(([n]) => !SDK_UNTAKEN_ARGUMENTS.includes(n)));
  return { ...message, params: { ...params, arguments: args } };
}

/** A validator's first complaint in one short line: where, and what (never the dump). */
function firstIssue(error: ZodLikeError | undefined): string {
  const issue = error?.issues[0];
  if (!issue) return "does not fit its schema";
  const where = issue.path.map(String).join(".").slice(0, 96);
  return `${where === "" ? "" : `${where}: `}${issue.message.slice(0, 96)}`;
}

/**
 * A notification's or a response's fate: taken and dropped when well-formed (nothing answers either), else the -32600
 * that is its own answer (handed to SDK 1.x, its transport refused every message of the request with -32700).
 */
function notificationOrResponse(message: Json): "drop" | string {
  if ("method" in message) {
    if (typeof message.method !== "string") return "Invalid Request: method must be a string.";
    // None means anything to a stateless server: `initialized` ends a handshake it does not keep, and `cancelled`
    // names a request of this batch at most (handed to SDK 1.x, it dropped that request's answer, and the transport
    // waited for it for ever: the HTTP request was never answered).
    return JSONRPCNotificationSchema.safeParse(message).success ? "drop" : "Invalid Request: not a valid notification.";
  }
  if (!("result" in message) && !("error" in message)) {
    return "Invalid Request: not a request, a notification or a response.";
  }
  // This server sends no requests, so a response answers nothing of its: taken (HTTP 202) and dropped.
  const valid = "result" in message ? JSONRPCResultResponseSchema : JSONRPCErrorResponseSchema;
  return valid.safeParse(message).success ? "drop" : "Invalid Request: not a valid response.";
}

export function screen(
  messages: readonly unknown[],
  tools: { isTool(name: string): boolean; isRoutedResource(uri: string): boolean; listResult: Uint8Array },
  refused: ReadonlyMap<number, string> = new Map(),
): Screened {
  const answers = new Map<number, Answer>();
  const forward: { index: number; message: Json }[] = [];
  let toolCalls = 0;
  const shared = messages.length > 1 ? sharedIds(messages) : new Set<string>();
  messages.forEach((message, index) => {
    const id = idOf(message);
    const refusal = refused.get(index);
    if (refusal !== undefined) {
      answers.set(index, refusal);
      return;
    }
    if (!isObject(message) || message.jsonrpc !== "2.0") {
      answers.set(index, errorAnswer(id, JSON_RPC.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message."));
      return;
    }
    if (id !== null && "method" in message && shared.has(idKey(id))) {
      const text = `Invalid Request: id ${JSON.stringify(id).slice(0, 64)} is used by more than one request of this batch.`;
      answers.set(index, errorAnswer(id, JSON_RPC.INVALID_REQUEST, text));
      return;
    }
    // A response (to a request this server never sends) or a notification: nothing is answered unless it is malformed.
    if (!("method" in message) || !("id" in message)) {
      const fate = notificationOrResponse(message);
      if (fate !== "drop") answers.set(index, errorAnswer(id, JSON_RPC.INVALID_REQUEST, fate));
      return;
    }
    if (!isId(message.id) || typeof message.method !== "string") {
      const why = isId(message.id) ? "method must be a string" : idProblem(message.id);
      answers.set(index, errorAnswer(id, JSON_RPC.INVALID_REQUEST, `Invalid Request: ${why}.`));
      return;
    }
    const method = message.method;
    if (!METHODS.has(method)) {
      answers.set(index, errorAnswer(id, JSON_RPC.METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 64)}`));
      return;
    }
    const bad = invalidParams(method, message.params);
    if (bad !== null) {
      answers.set(index, errorAnswer(id, JSON_RPC.INVALID_PARAMS, `Invalid params: ${bad}`));
      return;
    }
    const envelope = JSONRPCRequestSchema.safeParse(message);
    if (!envelope.success) {
      const where = firstIssue(envelope.error);
      const code = where.startsWith("params") ? JSON_RPC.INVALID_PARAMS : JSON_RPC.INVALID_REQUEST;
      const text = `${code === JSON_RPC.INVALID_PARAMS ? "Invalid params" : "Invalid Request"}: ${where}`;
      answers.set(index, errorAnswer(id, code, text));
      return;
    }
    const schema = REQUEST_SCHEMAS[method];
    const fit = schema?.safeParse(method === "tools/call" ? withTakenArguments(message) : message);
    if (fit && !fit.success) {
      answers.set(index, errorAnswer(id, JSON_RPC.INVALID_PARAMS, `Invalid params: ${firstIssue(fit.error)}`));
      return;
    }
    if (method === "tools/call") {
      const name = (message.params as Json).name as string;
      if (!tools.isTool(name)) {
        answers.set(index, errorAnswer(id, JSON_RPC.INVALID_PARAMS, `Unknown tool: ${name.slice(0, 64)}`));
        return;
      }
      toolCalls++;
    }
    // A resource an index route answers spends that route's budget, as its tool call would.
    if (method === "resources/read" && tools.isRoutedResource((message.params as Json).uri as string)) toolCalls++;
    if (method === "ping") answers.set(index, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{}}`);
    else if (method === "tools/list")
      answers.set(index, [`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`, tools.listResult, "}"]);
    else forward.push({ index, message });
  });
  return { answers, forward, toolCalls };
}

/** A request's answer as the parts of its UTF-8 JSON (text and shared bytes), with its size in bytes. */
export type AnswerParts = { parts: readonly (string | Uint8Array)[]; byteLength: number };

/**
 * The request's answer from both sources, in message order: one object for a single message, an array for a
 * batch, or null when nothing is answered (notifications and responses only → HTTP 202). Not yet copied into
 * one Buffer (joinBytes): what waits to be sent holds only references to the shared parts.
 */
export function assemble(
  batch: boolean,
  count: number,
  answers: Map<number, Answer>,
  forwarded: readonly { index: number; message: Json }[],
  sdkAnswers: readonly Json[],
): AnswerParts | null {
  const byId = new Map<unknown, Json>();
  for (const a of sdkAnswers) byId.set(a.id, a);
  for (const { index, message } of forwarded) {
    if (!("id" in message) || !("method" in message)) continue;
    const answer = byId.get(message.id);
    if (answer !== undefined) answers.set(index, JSON.stringify(answer));
  }
  const parts: (string | Uint8Array)[] = batch ? ["["] : [];
  let answered = 0;
  for (let i = 0; i < count; i++) {
    const a = answers.get(i);
    if (a === undefined) continue;
    if (answered++ > 0) parts.push(",");
    if (typeof a === "string") parts.push(a);
    else parts.push(...a);
  }
  if (answered === 0) return null;
  if (batch) parts.push("]");
  let byteLength = 0;
  for (const part of parts) byteLength += typeof part === "string" ? Buffer.byteLength(part, "utf8") : part.byteLength;
  return { parts, byteLength };
}

/** The parts as one Buffer: runs of text encoded together, bytes copied as they are. */
export function joinBytes({ parts, byteLength }: AnswerParts): Buffer<ArrayBuffer> {
  const out = Buffer.allocUnsafe(byteLength);
  let at = 0;
  for (const part of parts) {
    if (typeof part === "string") at += out.write(part, at, "utf8");
    else {
      out.set(part, at);
      at += part.byteLength;
    }
  }
  return out;
}

/**
 * The parts as a stream of chunks that are never copied: each run of text encoded into a small Buffer, the
 * shared bytes (tools/list's result) as they are. A large answer is written from it chunk by chunk, following
 * the socket's back-pressure; an answer its client does not read pins no copy of its bytes.
 */
export function chunkStream({ parts }: AnswerParts): ReadableStream<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let text = "";
  for (const part of parts) {
    if (typeof part === "string") text += part;
    else {
      if (text !== "") chunks.push(Buffer.from(text, "utf8"));
      text = "";
      chunks.push(part);
    }
  }
  if (text !== "") chunks.push(Buffer.from(text, "utf8"));
  // A default stream (not type "bytes"): enqueue() does not transfer, so the shared bytes stay usable.
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}
