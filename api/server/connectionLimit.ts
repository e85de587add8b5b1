/**
 * Caps the connections clients hold: per peer address and in total. Without them, 20,300 idle keep-alive
 * connections from one address used up the process's descriptors and /health went unanswered. Past a cap a
 * new connection is answered 429 as it arrives and closed (api/server/refusal.ts), before Node's HTTP layer
 * spends anything on it, counted, and logged at most once a minute. Answering holds a refused socket until
 * the client has the answer (at most a second), so refusals in flight are bounded too (`refusing`, out of the
 * descriptors the total cap leaves): past it a refused connection is closed unanswered, as all were before,
 * and counted alike.
 *
 * Headroom for new clients (as Envoy's overload manager sheds idle connections near its limit): with 20,000 idle
 * sockets from 400 reconnecting addresses, 71 addresses at the per-address cap filled the total and a new client
 * was refused 10 times in 13. Once the connections open pass `pressure` (a share of the total), an address's cap is
 * its fair share — the total over the addresses connected, the newcomer counted — so a connection past it is
 * refused (the same 429), and a connection from an address under it is taken by closing the oldest idle
 * connection (no request in progress) of the address holding the most; at the total itself too. A new client is
 * answered as long as any address above its share holds an idle connection. Closed so: api_connections_shed_total
 * {reason="pressure"}.
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
  /** Open connections past which an address's cap is its fair share (undefined: never). */
  pressure?: number;
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
  /** Connections within the caps, per address (oldest first) and in all; refusals being answered. */
  const perAddress = new Map<string, Set<Socket>>();
  let open = 0;
  let refusing = 0;
  const pressure = o.pressure === undefined ? Number.POSITIVE_INFINITY : Math.min(o.pressure, o.max);
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
  const counted = new Set<Socket>();
  /** Addresses by how many connections each holds, and the most any holds: the heaviest found in O(1). */
  const byCount = new Map<number, Set<string>>();
  let most = 0;
  const recount = (key: string, from: number, to: number) => {
    const was = byCount.get(from);
    was?.delete(key);
    if (was?.size === 0) byCount.delete(from);
    if (to > 0) {
      const now = byCount.get(to);
      if (now === undefined) byCount.set(to, new Set([key]));
      else now.add(key);
    }
    if (to > most) most = to;
    while (most > 0 && !byCount.has(most)) most--;
  };
  const admit = (socket: Socket, key: string) => {
    const mine = perAddress.get(key);
    if (mine === undefined) perAddress.set(key, new Set([socket]));
    else mine.add(socket);
    recount(key, (mine?.size ?? 1) - 1, mine?.size ?? 1);
  };
  /** Forgets `socket`'s place (once: on its close, or when it is closed for a newcomer). */
  const forget = (socket: Socket, key: string | undefined) => {
    if (!counted.delete(socket)) return;
    open--;
    if (key === undefined) return;
    const mine = perAddress.get(key);
    if (mine === undefined || !mine.delete(socket)) return;
    if (mine.size === 0) perAddress.delete(key);
    recount(key, mine.size + 1, mine.size);
  };
  /**
   * Closes the oldest idle connection of an address holding the most (more than `share`); whether it found one.
   * Only the heaviest addresses are looked at: if all their connections are busy, the newcomer is refused.
   */
  const makeRoom = (share: number): boolean => {
    if (most <= share) return false;
    for (const key of byCount.get(most) ?? []) {
      for (const victim of perAddress.get(key) ?? []) {
        if (isBusy(victim)) continue;
        forget(victim, key);
        victim.destroy();
        o.metrics?.shed.inc({ reason: "pressure" });
        return true;
      }
    }
    return false;
  };

  server.on("connection", (socket: Socket) => {
    const trusted = o.trusted?.has(normalizeIp(socket.remoteAddress ?? "") ?? "") ?? false;
    const key = trusted ? undefined : peerKey(socket);
    const n = key === undefined ? 0 : (perAddress.get(key)?.size ?? 0);
    let reason: RefusalReason | undefined =
      key !== undefined && n >= o.perIp ? "per_ip" : open >= o.max ? "total" : undefined;
    if (reason !== "per_ip" && key !== undefined && open >= pressure) {
      // The newcomer's address counted among those connected.
      const share = Math.max(1, Math.floor(o.max / (perAddress.size + (n === 0 ? 1 : 0))));
      if (n >= share) reason = "per_ip";
      else if (makeRoom(share)) reason = undefined;
    }
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
    counted.add(socket);
    if (key !== undefined) admit(socket, key);
    socket.once("close", () => forget(socket, key));
    for (const handler of handlers) handler.call(server, socket);
  });
}

/** Whether Node's HTTP layer has an answer in progress on `socket` (a request being served, or its answer unsent). */
function isBusy(socket: Socket): boolean {
  return Boolean((socket as Socket & { _httpMessage?: unknown })._httpMessage) || socket.writableLength > 0;
}
