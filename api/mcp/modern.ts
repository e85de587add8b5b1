import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  type CacheHint,
  createMcpHandler,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type StandardSchemaV1,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { Context } from "hono";
import { HANG_UP } from "../chain/rpc";
import { CancelSource, onHangUp } from "../http/cancellation";
import { MCP_MAX_BODY_BYTES } from "./gatekeeper";
import { PromptError } from "./prompts";
import type { FixedResource, ResourceRead, TemplateResource } from "./resources";
import { READ_ERROR_CODES, ResourceReadError } from "./resources";

/**
 * The 2026-07-28 era of POST /api/mcp (stateless: no initialize, no session; every request carries its protocol
 * version and the client's capabilities in `_meta`), served by the official server SDK v2 (`createMcpHandler`,
 * modern-only: the 2025 era stays on api/mcp/server.ts's path, which answers tools/list from shared bytes). The SDK
 * judges what the revision requires of a request — the envelope, the `MCP-Protocol-Version` / `Mcp-Method` /
 * `Mcp-Name` headers against the body (-32020 HeaderMismatch on 400), an unsupported revision (-32022 naming the
 * supported ones) — answers `server/discover`, and writes each result's `resultType`, the cache hints and
 * `_meta["io.modelcontextprotocol/serverInfo"]`. The tools, resources and prompts are the same as the 2025 era's.
 */

/** What both eras offer, and how a call, a read and a prompt are answered (api/mcp/server.ts builds it). */
export type ModernSurface = {
  name: string;
  title: string;
  version: string;
  instructions: string;
  tools: readonly Tool[];
  resources: readonly FixedResource[];
  resourceTemplates: readonly TemplateResource[];
  prompts: readonly { name: string; title: string; description: string; arguments: object[] }[];
  callTool(
    c: Context,
    hangUp: CancelSource,
    name: string,
    args: Record<string, unknown> | undefined,
  ): Promise<CallToolResult | null>;
  readResource(c: Context, hangUp: CancelSource, uri: string): Promise<ResourceRead>;
  getPrompt(name: string, args?: Record<string, unknown>): object;
};

/**
 * Every revision this endpoint speaks, newest first: 2026-07-28 here, the rest through initialize (api/mcp/server.ts,
 * SDK 1.x). server/discover lists them all, so a client learns in one call that the legacy handshake also works; a
 * modern client picks the first of its own revisions that is listed.
 */
export const SUPPORTED_VERSIONS = [
  "2026-07-28",
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  // SDK 1.x still agrees to the pre-release revision in initialize: its requests are answered, not refused after it.
  "2024-10-07",
] as const;

/** A revision is a date; a header that is not one names no era (the 2025 transport refuses it as unsupported). */
const REVISION = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The lists and discovery are the same for everyone and change only with a release: public, for ten minutes (a
 * rolling redeploy is visible to a client within that). A resource read says its own (its block's).
 */
export const LIST_CACHE_HINT = { ttlMs: 600_000, cacheScope: "public" } as const satisfies CacheHint;

const LISTS = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover"] as const;

/** Whether a parsed body might be a 2026-07-28 request: cheap, so the 2025 path pays nothing for the check. */
function mayBeModern(request: Request, body: unknown): boolean {
  const header = request.headers.get("mcp-protocol-version");
  if (header !== null && REVISION.test(header) && header >= "2026") return true;
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    const meta = (m as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
    return typeof meta === "object" && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
  });
}

/** tools/call's params as the handler takes them (the SDK's own schema judged the request just before). */
type ScreenedCall = { name: string; arguments?: Record<string, unknown> };

/**
 * tools/call's params passed through as they are. Registered with the SDK's spec schema, a call was parsed twice by
 * SDK v2 (Server's tools/call wrapper, then the handler's registration) after the gatekeeper's own parse (screen:
 * what prices the call); registered with this one, the wrapper's parse is the SDK's only one. Its refusals are the
 * same (the wrapper judges first), and the handler is handed the params as parsed from the body: the spec schema's
 * copy dropped an own `__proto__` argument, which from the body is an unknown parameter like any other.
 */
const SCREENED_CALL: StandardSchemaV1<ScreenedCall> = {
  "~standard": { version: 1, vendor: "asset-protocol", validate: (value) => ({ value: value as ScreenedCall }) },
};

export type ModernEndpoint = {
  /** Whether the modern era answers this request (the SDK's own classification, after a cheap pre-check). */
  claims(request: Request, body: unknown): Promise<boolean>;
  /** The answer to a claimed request. */
  serve(c: Context, body: unknown): Promise<Response>;
};

/**
 * `legacy: "stateless"` lets the SDK serve the 2025 era too (its stateless fallback, from the same server): the
 * alternative bench/mcp-eras.ts measures against api/mcp/server.ts's path. The endpoint itself uses "reject".
 */
export type ModernEndpointOptions = { legacy?: "reject" | "stateless" };

export function modernEndpoint(s: ModernSurface, options: ModernEndpointOptions = {}): ModernEndpoint {
  /** The Hono context and hang-up of each request in flight, for the factory (handed the raw Request). */
  const inFlight = new WeakMap<Request, { c: Context; hangUp: CancelSource }>();
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const cacheHints = Object.fromEntries(LISTS.map((m) => [m, LIST_CACHE_HINT]));

  function serverFor(c: Context, hangUp: CancelSource): Server {
    const server = new Server(
      { name: s.name, title: s.title, version: s.version },
      {
        capabilities: {
          tools: { listChanged: false },
          resources: { listChanged: false, subscribe: false },
          prompts: { listChanged: false },
        },
        instructions: s.instructions,
        jsonSchemaValidator,
        cacheHints,
      },
    );
    // The SDK lists only modern revisions; this endpoint also serves the legacy ones (SUPPORTED_VERSIONS).
    const discover = server as unknown as { _ondiscover(): Record<string, unknown> };
    const sdkDiscover = discover._ondiscover.bind(server);
    discover._ondiscover = () => ({ ...sdkDiscover(), supportedVersions: [...SUPPORTED_VERSIONS] });

    server.setRequestHandler("tools/list", () => ({ tools: [...s.tools] as never }));
    server.setRequestHandler("tools/call", { params: SCREENED_CALL }, async (params) => {
      const result = await s.callTool(c, hangUp, params.name, params.arguments);
      if (!result) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
      return result as never;
    });
    server.setRequestHandler("resources/list", () => ({ resources: [...s.resources] }));
    server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [...s.resourceTemplates] }));
    server.setRequestHandler("resources/read", async (request) => {
      try {
        const { uri, mimeType, text, ttlMs } = await s.readResource(c, hangUp, request.params.uri);
        // How long this block's answer holds: about one block at the head, a day once final (the route's).
        return { contents: [{ uri, mimeType, text }], ttlMs, cacheScope: "public" } as never;
      } catch (error) {
        if (!(error instanceof ResourceReadError)) throw error;
        if (error.kind === "not-found") throw new ResourceNotFoundError(request.params.uri, error.message);
        throw new ProtocolError(READ_ERROR_CODES[error.kind], error.message, error.data);
      }
    });
    server.setRequestHandler("prompts/list", () => ({ prompts: [...s.prompts] as never }));
    server.setRequestHandler("prompts/get", (request) => {
      try {
        return s.getPrompt(request.params.name, request.params.arguments) as never;
      } catch (error) {
        if (error instanceof PromptError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
        throw error;
      }
    });
    return server;
  }

  const handler = createMcpHandler(
    ({ requestInfo }) => {
      const held = requestInfo && inFlight.get(requestInfo);
      if (!held) throw new Error("modern MCP request without its context");
      return serverFor(held.c, held.hangUp);
    },
    {
      legacy: options.legacy ?? "reject",
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
      // Nothing here ever changes while the process runs (no listChanged, no subscribe): a subscriptions/listen
      // stream would only hold a connection open. Each is refused in-band at once (-32603).
      maxSubscriptions: 0,
    },
  );

  return {
    async claims(request, body) {
      return mayBeModern(request, body) && !(await isLegacyRequest(request, body));
    },
    async serve(c, body) {
      const hangUp = new CancelSource();
      const stopWatching = onHangUp(c, () => hangUp.abort(HANG_UP));
      inFlight.set(c.req.raw, { c, hangUp });
      try {
        return await handler.fetch(c.req.raw, { parsedBody: body });
      } finally {
        stopWatching();
        inFlight.delete(c.req.raw);
      }
    },
  };
}
