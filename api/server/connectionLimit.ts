/**
 * Caps the connections clients hold: per peer address and in total. Without them, 20,300 idle keep-alive
 * connections from one address used up the process's descriptors and /health went unanswered. Past a cap a
 * new connection is closed as it arrives, before Node's HTTP layer spends anything on it (the total by
 * Node itself: net.Server#maxConnections), counted, and logged at most once a minute.
 *
 * The address is the socket peer (an IPv6 /64, as the rate limit counts it): X-Forwarded-For is a request's,
 * not a connection's. A trusted proxy multiplexes many clients, so it counts only toward the total.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import { normalizeIp, rateLimitSubject, type TrustedProxies, truncateIp } from "../net/ip";
import type { Logger } from "../observability/logger";
import type { ConnectionMetrics } from "../observability/metrics";
import { throttledWarnings } from "../observability/throttle";

export type ConnectionLimitOptions = {
  /** Open connections in all. */
  max: number;
  /** Open connections per peer address. */
  perIp: number;
  /** Peers the per-address cap does not apply to. */
  trusted?: TrustedProxies;
  metrics?: ConnectionMetrics;
  logger?: Logger;
};

/** The peer's identity for per-address caps (shared with api/server/connectionGuard.ts). */
export function peerKey(socket: Socket): string {
  const ip = normalizeIp(socket.remoteAddress ?? "");
  return ip === null ? "unknown" : rateLimitSubject(ip);
}

/**
 * Installs the caps on `server` (before it listens). The open connections in all are Node's own count (what
 * maxConnections checks, and what api_http_open_connections reads); only the per-address count is kept here.
 */
export function limitConnections(server: Server, o: ConnectionLimitOptions): void {
  const perAddress = new Map<string, number>();
  const warn = o.logger ? throttledWarnings(o.logger) : undefined;
  const refused = {
    per_ip: "connections refused: per-IP cap reached",
    total: "connections refused: total cap reached",
  };
  const refuse = (reason: keyof typeof refused, address: string | undefined, cap: number) => {
    o.metrics?.refused.inc({ reason });
    warn?.(reason, refused[reason], { cap, clientIp: truncateIp(address ? normalizeIp(address) : null) });
  };

  server.maxConnections = o.max;
  server.on("drop", (data?: { remoteAddress?: string }) => refuse("total", data?.remoteAddress, o.max));

  // Node's own connection handler (the HTTP parser's set-up) runs only for connections within the caps.
  const handlers = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const trusted = o.trusted?.has(normalizeIp(socket.remoteAddress ?? "") ?? "") ?? false;
    const key = trusted ? undefined : peerKey(socket);
    if (key !== undefined) {
      const n = perAddress.get(key) ?? 0;
      if (n >= o.perIp) {
        refuse("per_ip", socket.remoteAddress, o.perIp);
        socket.destroy();
        return;
      }
      perAddress.set(key, n + 1);
      socket.once("close", () => {
        const left = (perAddress.get(key) ?? 1) - 1;
        if (left === 0) perAddress.delete(key);
        else perAddress.set(key, left);
      });
    }
    for (const handler of handlers) handler.call(server, socket);
  });
}
