/**
 * The MCP resources (both eras): what an assistant can attach as context. Each index resource is the answer of an
 * index tool, read the same way a tool call is (an in-process request to its route, so the same read model, block
 * pinning and envelope: `blockNumber` is in the content), at one block: a template's `{tokenId}` / `{address}` is the
 * tool's path parameter. How long a read holds is the route's own Cache-Control (about one Base block at the head,
 * a day once the block is final). `asset://guide` is fixed text: what each tool does and how values are written.
 */

export const JSON_MIME = "application/json";

/** A fixed resource, listed by resources/list. */
export type FixedResource = {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: typeof JSON_MIME;
};

/** A resource template, listed by resources/templates/list (RFC 6570 level 1: `{name}` in a path segment). */
export type TemplateResource = {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: typeof JSON_MIME;
};

/** Where an index resource's answer comes from: a tool (by name) and its arguments. */
type ToolSource = { tool: string; args: Record<string, string> };

const PINNED = "Read at one block (blockNumber and blockTimestamp in the content, the index's head).";

export const FIXED_RESOURCES: readonly FixedResource[] = [
  {
    uri: "asset://stats",
    name: "stats",
    title: "Lock statistics",
    description: `Totals of the vote-escrow locks: live locks, locked amount, ve supply. ${PINNED}`,
    mimeType: JSON_MIME,
  },
  {
    uri: "asset://leaderboards/ve",
    name: "ve-leaderboard",
    title: "ve leaderboard (first page)",
    description: `The accounts with the most voting power, the first page of get_ve_leaderboard. ${PINNED}`,
    mimeType: JSON_MIME,
  },
  {
    uri: "asset://guide",
    name: "guide",
    title: "How to use this server",
    description:
      "What each tool does, how amounts, wei, durations and AutoMax are written, and what this service never does.",
    mimeType: JSON_MIME,
  },
];

export const TEMPLATE_RESOURCES: readonly TemplateResource[] = [
  {
    uriTemplate: "asset://locks/{tokenId}",
    name: "lock",
    title: "A lock",
    description: `One vote-escrow lock by token id (decimal): owner, amount, end, AutoMax, ve. ${PINNED}`,
    mimeType: JSON_MIME,
  },
  {
    uriTemplate: "asset://accounts/{address}/locks",
    name: "account-locks",
    title: "An account's locks",
    description: `The live locks of an account (0x address), with their ve. ${PINNED}`,
    mimeType: JSON_MIME,
  },
];

export const GUIDE_URI = "asset://guide";

const SEGMENT = "([^/?#]+)";
const ROUTES: readonly { pattern: RegExp; source: (m: RegExpExecArray) => ToolSource }[] = [
  { pattern: /^asset:\/\/stats$/, source: () => ({ tool: "get_lock_stats", args: {} }) },
  { pattern: /^asset:\/\/leaderboards\/ve$/, source: () => ({ tool: "get_ve_leaderboard", args: {} }) },
  {
    pattern: new RegExp(`^asset://locks/${SEGMENT}$`),
    source: (m) => ({ tool: "get_lock", args: { tokenId: decodeURIComponent(m[1]!) } }),
  },
  {
    pattern: new RegExp(`^asset://accounts/${SEGMENT}/locks$`),
    source: (m) => ({ tool: "get_account_locks", args: { address: decodeURIComponent(m[1]!) } }),
  },
];

/** The tool call behind an index resource's URI, or null (the guide, or a URI this server does not have). */
export function resourceSource(uri: string): ToolSource | null {
  for (const r of ROUTES) {
    const m = r.pattern.exec(uri);
    if (m) {
      try {
        return r.source(m);
      } catch {
        return null; // a malformed %-escape: no such resource
      }
    }
  }
  return null;
}

/** Why a read failed, in terms both eras map to their own JSON-RPC error (api/mcp/server.ts, api/mcp/modern.ts). */
export class ResourceReadError extends Error {
  constructor(
    readonly kind: "not-found" | "invalid" | "rate-limited" | "unavailable",
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * The JSON-RPC code of a failed read, in both eras: -32002 not found (MCP 2025-11-25), -32602 a malformed URI, -32000
 * over the route's budget (as the endpoint's own budget answers, with the RATE_LIMITED envelope and its retryAfterSec
 * as data), -32603 the route could not answer.
 */
export const READ_ERROR_CODES: Record<ResourceReadError["kind"], number> = {
  "not-found": -32002,
  invalid: -32602,
  "rate-limited": -32000,
  unavailable: -32603,
};

/** One read: the content (JSON text) and how long it holds, in ms (the route's Cache-Control max-age). */
export type ResourceRead = { uri: string; mimeType: typeof JSON_MIME; text: string; ttlMs: number };

/** How a resource's route is asked: a tool call's in-process request (api/mcp/server.ts). */
export type CallRoute = (tool: string, args: Record<string, string>) => Promise<Response>;

const maxAgeMs = (cacheControl: string | null): number => {
  const m = /(?:^|,)\s*max-age=(\d+)/i.exec(cacheControl ?? "");
  return m ? Number(m[1]) * 1000 : 0;
};

export async function readResource(uri: string, guide: string, call: CallRoute): Promise<ResourceRead> {
  // The guide changes only with a release: a day, like a final block's answer.
  if (uri === GUIDE_URI) return { uri, mimeType: JSON_MIME, text: guide, ttlMs: 86_400_000 };
  const source = resourceSource(uri);
  if (source === null) throw new ResourceReadError("not-found", `Resource not found: ${uri.slice(0, 128)}`, { uri });
  const res = await call(source.tool, source.args);
  const text = await res.text();
  if (res.ok) return { uri, mimeType: JSON_MIME, text, ttlMs: maxAgeMs(res.headers.get("cache-control")) };
  let envelope: Record<string, unknown> = {};
  try {
    envelope = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not the envelope (never expected): the status still says what happened
  }
  const message = typeof envelope.message === "string" ? envelope.message : `HTTP ${res.status}`;
  const data = { uri, ...envelope };
  if (res.status === 404) throw new ResourceReadError("not-found", message, data);
  if (res.status === 400) throw new ResourceReadError("invalid", message, data);
  if (res.status === 429) throw new ResourceReadError("rate-limited", message, data);
  throw new ResourceReadError("unavailable", message, data);
}
