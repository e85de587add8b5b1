/**
 * The HTTP server of the API process: @hono/node-server serving the app, behind the app's hot path at
 * the Node level (a cached supply figure written without a Request or a Response: api/supply/router.ts), with
 * - deliberate limits and timeouts (SERVER_LIMITS and the connection limits of the config, in the README);
 * - connection caps per address and in total (api/server/connectionLimit.ts; a refused connection is answered
 *   429, api/server/refusal.ts), the bound on what unread answers may hold (api/server/connectionGuard.ts),
 *   and MCP requests started one per event-loop turn, in turns across clients, so they cannot crowd out cheap
 *   reads (api/server/turnstile.ts); a connection refused twice in a row (429, 503) has its next request held
 *   for the refusal's Retry-After (api/server/refusalHold.ts); an answer whose bytes the client does not take for
 *   SEND_TIMEOUT_MS closes its connection (api/server/sendTimeout.ts);
 * - the error envelope even for requests Node or the adapter rejects before any route
 *   (api/server/protocolErrors.ts), with CORS and a request id, where HTTP still allows an answer;
 * - a graceful drain: stop accepting, let requests in flight finish within `drainMs`, then close.
 */
import { readFileSync } from "node:fs";
import { createServer, type RequestListener, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, Server as NetServer, type Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { ApiApp } from "../app";
import { CONNECTION_DEFAULTS, type ConnectionLimits } from "../config";
import type { NodeHotPath } from "../http/nodeHotPath";
import { parseTrustedProxies } from "../net/ip";
import type { Logger } from "../observability/logger";
import type { ConnectionMetrics } from "../observability/metrics";
import { type ConnectionGuard, type ConnectionState, guardConnections } from "./connectionGuard";
import { limitConnections } from "./connectionLimit";
import { totalConnectionCap } from "./descriptorLimit";
import { answerProtocolErrors, refuseRequest, requestFault } from "./protocolErrors";
import { holdRefused } from "./refusalHold";
import { closeStalled } from "./sendTimeout";
import { takeTurns } from "./turnstile";

export const SERVER_LIMITS = {
  /** Request line + headers; beyond it: 431 HEADERS_TOO_LARGE. Node's default, stated. */
  maxHeaderSize: 16 * 1024,
  /** The headers must have arrived within this long (slowloris); also closes a connection that sends nothing. */
  headersTimeoutMs: 10_000,
  /** The whole request must have arrived within this long. */
  requestTimeoutMs: 30_000,
  /** Idle keep-alive connections close after this long: above the 60 s idle timeout of common load balancers. */
  keepAliveTimeoutMs: 65_000,
  /**
   * How much earlier than the close the `Keep-Alive: timeout=` header tells clients (Node's keepAliveTimeoutBuffer:
   * the socket closes at keepAliveTimeout + this), so a client that honours the hint stops reusing the connection
   * before the server closes it. Node adds it on top (its default 1 s made the documented 65 s close come at 66 s).
   */
  keepAliveAdvertisedEarlyMs: 1_000,
  /**
   * How often Node looks for connections past the headers and request timeouts: they fire up to this late (Node's
   * default, 30 s, let a 10 s header timeout fire at 26 s), so it is small against them. Each check is one pass over
   * the open connections.
   */
  connectionsCheckingIntervalMs: 500,
  /** listen()'s backlog: the kernel's own cap (net.core.somaxconn, 4096 by default since Linux 5.4) applies. */
  acceptBacklog: 65_535,
} as const;

/**
 * The accept queue the kernel gives listen()'s backlog: the smaller of it and net.core.somaxconn (Linux; elsewhere
 * the backlog asked). A storm of connections overflowed 4096 on a 2-core machine (bench/abuse-choices.ts): a new
 * client's completed handshake was dropped and it waited for the retransmission, 1 s. docs/operations.md says how
 * to raise the cap; "api listening" logs the queue in force.
 */
export function acceptQueue(backlog: number = SERVER_LIMITS.acceptBacklog, somaxconnFile = SOMAXCONN_FILE): number {
  try {
    const cap = Number(readFileSync(somaxconnFile, "utf8").trim());
    return Number.isInteger(cap) && cap > 0 ? Math.min(backlog, cap) : backlog;
  } catch {
    return backlog;
  }
}

const SOMAXCONN_FILE = "/proc/sys/net/core/somaxconn";

export type ApiServer = {
  server: Server;
  port: number;
  /**
   * The connection caps in force (the total as resolved against the descriptor limit), and how many refused
   * connections may be answered at once.
   */
  limits: ConnectionLimits & { max: number; refusing: number; acceptQueue: number };
  /** Unsent answer bytes held now; undefined without the guard. */
  guard: ConnectionGuard | undefined;
  /** Stops accepting, lets in-flight requests finish within `drainMs`, then closes every connection. */
  close(drainMs: number): Promise<void>;
};

export type ApiServerOptions = {
  port: number;
  hostname: string;
  /** config.connections; defaults to CONNECTION_DEFAULTS with the total from the descriptor limit. */
  connections?: ConnectionLimits;
  /** config.trustedProxies: peers the per-address caps do not apply to. */
  trustedProxies?: readonly string[];
  metrics?: { connections: ConnectionMetrics };
  logger?: Logger;
  /**
   * Only a test that proves the guard matters turns it off (with the connection caps and the turnstile). The drain
   * reads the guard's registry of connections: without it, connections close only at the drain's bound.
   */
  guard?: boolean;
};

export function startApiServer(app: ApiApp, options: ApiServerOptions): Promise<ApiServer> {
  const configured = options.connections ?? { ...CONNECTION_DEFAULTS, max: null };
  const total = totalConnectionCap(configured.max);
  if (total.clamped)
    options.logger?.warn("MAX_CONNECTIONS exceeds what the open-file limit leaves room for: lowered", {
      configured: configured.max,
      max: total.max,
      descriptorLimit: total.descriptorLimit,
    });
  const limits = { ...configured, max: total.max, refusing: total.refusing, acceptQueue: acceptQueue() };
  const metrics = options.metrics?.connections;
  return new Promise((resolve, reject) => {
    // What serve() from @hono/node-server builds (its listener keeps the hostname for a request without a
    // Host), with the hot path asked first: its answer is written here, else the request goes on to Hono.
    const routed = getRequestListener(app.fetch, { hostname: options.hostname });
    const trusted = parseTrustedProxies(options.trustedProxies ?? []);
    const answer = hotFirst(app.nodeHotPath, routed);
    const listener = refuseFaults(
      options.guard === false ? answer : holdRefused(takeTurns(answer, trusted), metrics?.held),
      metrics,
    );
    // requireHostHeader: a request without Host gets requestFault's envelope instead of Node's bare 400.
    const server = createServer(
      {
        maxHeaderSize: SERVER_LIMITS.maxHeaderSize,
        requireHostHeader: false,
        connectionsCheckingInterval: SERVER_LIMITS.connectionsCheckingIntervalMs,
      },
      listener,
    );
    // A port already taken fails the start with EADDRINUSE instead of an unhandled 'error' event.
    server.once("error", reject);
    server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
    server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs - SERVER_LIMITS.keepAliveAdvertisedEarlyMs;
    server.keepAliveTimeoutBuffer = SERVER_LIMITS.keepAliveAdvertisedEarlyMs;
    answerProtocolErrors(server, metrics);
    let guard: ConnectionGuard | undefined;
    if (options.guard !== false) {
      const { max, perIp, refusing } = limits;
      const percent = limits.pressurePercent ?? CONNECTION_DEFAULTS.pressurePercent;
      const pressure = percent >= 100 ? undefined : Math.ceil((max * percent) / 100);
      limitConnections(server, { max, perIp, refusing, pressure, trusted, metrics, logger: options.logger });
      guard = guardConnections(server, { pendingBytes: limits.pendingBytes, trusted, metrics });
      closeStalled(server, guard.connections, limits.sendTimeoutMs, metrics);
    }
    // The accept queue as deep as the kernel allows (net.core.somaxconn caps it): 400 addresses connecting at once
    // while the event loop is busy overflowed Node's default of 511, and a new client's SYN waited for its
    // retransmission (1 s, then 3 s) before it was even accepted.
    server.listen({ port: options.port, host: options.hostname, backlog: SERVER_LIMITS.acceptBacklog }, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, port, limits, guard, close: (drainMs) => drain(server, drainMs, guard?.connections) });
    });
  });
}

/** The listener: the envelope for a request the adapter could not serve as it stands, else `next`. */
function refuseFaults(next: RequestListener, metrics: ConnectionMetrics | undefined): RequestListener {
  return (req, res) => {
    const fault = requestFault(req);
    if (fault === undefined) next(req, res);
    else refuseRequest(res, fault, metrics);
  };
}

/** The listener: `hotPath`'s answer, else `routed`'s. */
function hotFirst(hotPath: NodeHotPath, routed: RequestListener): RequestListener {
  return (req, res) => {
    let answered: boolean;
    try {
      answered = hotPath(req, res);
    } catch {
      // A bug there must not become an uncaught exception, which ends the process: the request is served
      // as usual instead (where a failure answers 500), unless its answer had already begun.
      answered = res.headersSent;
      if (answered) res.destroy();
    }
    if (!answered) routed(req, res);
  };
}

/**
 * How long a keep-alive connection must have been idle before the drain closes it: one answered just before the
 * drain began may already carry its client's next request (on the wire, not yet parsed), which a close would reset;
 * that request is answered `connection: close` instead. A client pausing this long between requests is not mid-send.
 */
const DRAIN_IDLE_MS = 200;

/**
 * `Connection: close` on an answer whose headers are not written yet, and its socket closed after it; one already
 * begun (a stream, its headers said keep-alive) has its socket ended once it is written, and destroyed once that
 * is sent, so a request the client sends after it is not answered there (Node's own close after a last answer).
 */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) {
    res.shouldKeepAlive = false;
    res.setHeader("connection", "close");
    return;
  }
  // Node detaches the socket from the answer when it finishes: taken now.
  const socket = res.socket;
  if (socket) res.once("finish", () => socket.end(() => socket.destroy()));
}

/**
 * `connections`: the guard's registry (api/server/connectionGuard.ts), read only here, so that no request pays for a
 * bookkeeping of its own (a set entry, a lookup and a listener) that serves the drain alone.
 */
async function drain(
  server: Server,
  drainMs: number,
  connections: ReadonlyMap<Socket, ConnectionState> | undefined,
): Promise<void> {
  // net.Server's close, not http.Server's: that one also closes every idle connection at once (Node ≥ 19), among
  // them one just answered `keep-alive` whose client's next request is already on the wire — reset (closeIdle below
  // waits DRAIN_IDLE_MS). Its connection-check timer is unref'd: it holds nothing.
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  // Every answer written from now on says `connection: close` and its connection closes after it: those in flight
  // (answered `keep-alive`, a client sent its next request on the socket and the idle sweep reset it) and any
  // request still arriving on an open keep-alive connection. A connection idle for DRAIN_IDLE_MS is closed (swept
  // every 100 ms), so a client (a load balancer's pool) holding idle keep-alive connections does not hold the exit
  // until the bound.
  for (const { answering } of connections?.values() ?? []) if (answering) closeAfter(answering);
  server.prependListener("request", (_req, res: ServerResponse) => closeAfter(res));
  const closeIdle = () => {
    const now = performance.now();
    for (const [socket, state] of connections ?? []) {
      if (state.answering === undefined && now - state.idleSince >= DRAIN_IDLE_MS) socket.destroy();
    }
  };
  closeIdle();
  const sweep = setInterval(closeIdle, 100);
  const bound = new Promise<void>((resolve) => setTimeout(resolve, drainMs).unref());
  await Promise.race([closed, bound]);
  clearInterval(sweep);
  server.closeAllConnections();
  await closed;
}
