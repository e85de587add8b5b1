/**
 * Caps the connections clients hold: per peer address and in total. Without them, 20,300 idle keep-alive
 * connections from one address used up the process's descriptors and /health went unanswered. Past a cap a
 * new connection is answered 429 as it arrives and closed (api/server/refusal.ts), before Node's HTTP layer
 * spends anything on it, counted, and logged at most once a minute. Answering holds a refused socket until
 * the client has the answer (at most a second), so refusals in flight are bounded too (`refusing`, out of the
 * descriptors the total cap leaves): past it a refused connection is closed unanswered, as all were before,
 * and counted alike.
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
import { answerAndClose, type RefusalReason, refusalAnswer } from "./refusal";

export type ConnectionLimitOptions = {
  /** Open connections in all. */
  max: number;
  /** Refused connections answered at once (api/server/descriptorLimit.ts); past it one is closed unanswered. */
  refusing: number;
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
 * Installs the caps on `server` (before it listens). Connections within the caps are counted here: the
 * total cap is decided as a connection arrives, which Node's own count cannot do (it is asked asynchronously,
 * and it holds refusals still being answered); Node's count is what api_http_open_connections reads.
 */
export function limitConnections(server: Server, o: ConnectionLimitOptions): void {
  /** Connections within the caps, per address and in all; refusals being answered. */
  const perAddress = new Map<string, number>();
  let open = 0;
  let refusing = 0;
  const answers = { per_ip: refusalAnswer("per_ip"), total: refusalAnswer("total") };
  const warn = o.logger ? throttledWarnings(o.logger) : undefined;
  const refused = {
    per_ip: "connections refused: per-IP cap reached",
    total: "connections refused: total cap reached",
  };
  const count = (reason: RefusalReason, address: string | undefined) => {
    o.metrics?.refused.inc({ reason });
    const cap = reason === "per_ip" ? o.perIp : o.max;
    warn?.(reason, refused[reason], { cap, clientIp: truncateIp(address ? normalizeIp(address) : null) });
  };

  // Node's own connection handler (the HTTP parser's set-up) runs only for connections within the caps.
  const handlers = server.listeners("connection") as ((socket: Socket) => void)[];
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => {
    const trusted = o.trusted?.has(normalizeIp(socket.remoteAddress ?? "") ?? "") ?? false;
    const key = trusted ? undefined : peerKey(socket);
    const n = key === undefined ? 0 : (perAddress.get(key) ?? 0);
    const reason: RefusalReason | undefined =
      key !== undefined && n >= o.perIp ? "per_ip" : open >= o.max ? "total" : undefined;
    if (reason !== undefined) {
      count(reason, socket.remoteAddress);
      if (refusing >= o.refusing) {
        socket.destroy();
        return;
      }
      refusing++;
      answerAndClose(socket, answers[reason], () => refusing--);
      return;
    }
    open++;
    if (key !== undefined) perAddress.set(key, n + 1);
    socket.once("close", () => {
      open--;
      if (key === undefined) return;
      const left = (perAddress.get(key) ?? 1) - 1;
      if (left === 0) perAddress.delete(key);
      else perAddress.set(key, left);
    });
    for (const handler of handlers) handler.call(server, socket);
  });
}
