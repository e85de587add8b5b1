/**
 * What the app needs of the MCP endpoint before its first request: its CORS methods and the peer source aware of
 * in-process tool calls. Kept apart from the endpoint (api/mcp/server.ts), which the app loads on first use.
 */
import { type PeerAddressSource, socketPeerAddress } from "../http/clientIp";
import { IN_PROCESS_CLIENT_IP } from "../http/env";

/** What /api/mcp answers to a CORS preflight (GET only draws a 405 in stateless mode, but a browser may ask). */
export const MCP_CORS_METHODS = "GET, POST, OPTIONS";

/** The peer source of the app, aware of in-process MCP tool calls. */
export function withInProcessClientIp(source: PeerAddressSource = socketPeerAddress): PeerAddressSource {
  return (c) => c.env?.[IN_PROCESS_CLIENT_IP] ?? source(c);
}
