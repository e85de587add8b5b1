/**
 * What the app needs of the MCP endpoint before its first request: its CORS methods and the peer source aware of
 * in-process tool calls. Kept apart from the endpoint (api/mcp/server.ts), which the app loads on first use.
 */
import { type PeerAddressSource, socketPeerAddress } from "../http/clientIp";
import { IN_PROCESS_CLIENT_IP } from "../http/env";

/**
 * What /api/mcp answers to a CORS preflight: the methods it serves, as its 405's Allow names them. Streamable HTTP's GET
 * (a server-to-client SSE stream) is a 405 here in both eras: stateless, there is no session to stream on (SDK v2's
 * handler, which answers 2026-07-28, serves POST alone too).
 */
export const MCP_CORS_METHODS = "POST, OPTIONS";

/** The peer source of the app, aware of in-process MCP tool calls. */
export function withInProcessClientIp(source: PeerAddressSource = socketPeerAddress): PeerAddressSource {
  return (c) => c.env?.[IN_PROCESS_CLIENT_IP] ?? source(c);
}
