/**
 * One stateless MCP request as a client sends it, in either era this service speaks: the 2025-11-25 wire (a plain
 * JSON-RPC POST) or 2026-07-28's (its version, method and tool name also in headers, and the version and client
 * capabilities in the request's `_meta`). Tests POST it over HTTP or hand it to `app.request`.
 */
export const MCP_ERAS = ["2025", "2026"] as const;
export type McpEra = (typeof MCP_ERAS)[number];
export const MODERN_MCP_VERSION = "2026-07-28";

type McpRequestInit = { method: "POST"; headers: Record<string, string>; body: string };

/** The method, headers and body of one JSON-RPC request `method` with `params` in `era` (`name`: a tool's). */
export function mcpRequestInit(
  era: McpEra,
  method: string,
  params: Record<string, unknown>,
  id: number | string = 1,
  name?: string,
): McpRequestInit {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const sent: Record<string, unknown> = { ...params };
  if (era === "2026") {
    Object.assign(headers, { "mcp-protocol-version": MODERN_MCP_VERSION, "mcp-method": method });
    if (name !== undefined) headers["mcp-name"] = name;
    sent._meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN_MCP_VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
  }
  return { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method, params: sent }) };
}

/** One tools/call of `name` with `args` in `era` (`extra`: more of the call's params, e.g. a `task`). */
export const toolCallInit = (
  era: McpEra,
  name: string,
  args: Record<string, unknown>,
  id: number | string = 1,
  extra: Record<string, unknown> = {},
): McpRequestInit => mcpRequestInit(era, "tools/call", { name, arguments: args, ...extra }, id, name);
