/**
 * Bounds the memory clients can pin with answers they do not read. Node parses every request of a TCP read
 * at once and hands each to the app, so a client that pipelines requests and never reads makes the server
 * compute all of them and hold every answer (120 sockets pipelining the 4.35 MB docs bundle took a replica
 * from 145 MB to 1.8 GB). Here:
 * - a connection's requests are answered one at a time: the next is handed to the app only once the
 *   previous answer has gone to the kernel, and while one waits the socket is not read (back-pressure), so
 *   an unread connection costs one answer however much it sends; more than `maxQueued` outstanding closes it,
 *   and ends the parse of what it sent: Node parses a whole read (64 kB, ~1,500 short GETs) and hands every
 *   request in it on even after its socket is closed, which held the event loop for seconds under 50 clients
 *   pipelining thousands of GETs (red team supply F4). A connection closed here costs at most `maxQueued` + 2
 *   requests parsed, whatever it sent;
 * - the bytes of answers written but not yet taken by the client are counted per connection, per peer
 *   address and in total; an answer that leaves its connection, its address or the process over its cap
 *   closes that connection (the memory is freed), and a connection whose address is already over its
 *   cap is closed before its next request is computed. A client that reads stays under every cap: its
 *   answers leave as they are written. An answer still being written (an event stream, which never ends) is
 *   recounted every RECOUNT_MS while it is open, so its unsent bytes count and are shed like any other's.
 * A stalled reader is closed by the server's send timeout (api/server/sendTimeout.ts), so the caps hold
 * memory only for as long as a reader makes progress.
 * Its registry of open connections is the one the drain reads (which answer each is writing, since when it is
 * idle), so a request pays for one connection lookup, not for a second bookkeeping of its own.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { normalizeIp, type TrustedProxies } from "../net/ip";
import type { ConnectionMetrics } from "../observability/metrics";
import { peerKey } from "./connectionLimit";

/**
 * Requests one connection may have outstanding (one being answered, the rest waiting): a client that pipelines
 * up to this many and reads its answers is served in order. Browsers do not pipeline; a waiting request holds
 * ~2 KB (its request and response objects), so a connection holds at most ~32 KB of them.
 */
export const MAX_QUEUED_PER_CONNECTION = 16;

/**
 * llhttp's HPE_PAUSED. Returned where Node's parser asks what to do with a request whose headers it has read
 * (`parser.onIncoming`, called from llhttp's on_headers_complete), it ends the parse of the read in progress there;
 * Node reports it as a client error on a socket that is already closed, which needs nothing more. `parser.pause()`
 * does not: llhttp only looks at it once the read is parsed.
 */
const HPE_PAUSED = 21;
const endParse = () => HPE_PAUSED;
type HttpParser = { onIncoming: unknown };

/**
 * How often the answers in flight are recounted: a stream's bytes are written over its whole life, with no end
 * (`prefinish`) to count them at. Between two recounts a stream adds only what the heads of that time write to it,
 * and never more than STREAM_MAX_QUEUED_BYTES (api/index/streamHub.ts) before it is closed as unread.
 */
export const RECOUNT_MS = 250;

export type PendingBytesLimits = { perConnection: number; perIp: number; total: number };

export type ConnectionGuardOptions = {
  pendingBytes: PendingBytesLimits;
  maxQueued?: number;
  /** Peers (our own proxies) the per-address cap does not apply to. */
  trusted?: TrustedProxies;
  metrics?: ConnectionMetrics;
};

type ShedReason = "pipelined" | "pending_connection" | "pending_ip" | "pending_total";

/** What the drain reads of an open connection. */
export type ConnectionState = {
  /** The answer being written (handed to the app, not yet closed), if any. */
  readonly answering: ServerResponse | undefined;
  /** performance.now() when it last had no answer in progress: its open, or its last answer's close. */
  readonly idleSince: number;
};

/** One connection's state: its peer (undefined: a trusted proxy), the answer being written, those waiting. */
type Connection = {
  key: string | undefined;
  answering: ServerResponse | undefined;
  idleSince: number;
  waiting: [IncomingMessage, ServerResponse][];
  paused: boolean;
  /** Unsent bytes of its current answer, as counted in the totals. */
  pending: number;
};

export type ConnectionGuard = {
  /** Unsent answer bytes: of one peer address (peerKey), or of the whole process. */
  pendingBytes(key?: string): number;
  /** Every open connection (from its accept to its close), with its state. */
  connections: ReadonlyMap<Socket, ConnectionState>;
};

export function guardConnections(server: Server, o: ConnectionGuardOptions): ConnectionGuard {
  const maxQueued = o.maxQueued ?? MAX_QUEUED_PER_CONNECTION;
  const limits = o.pendingBytes;
  const connections = new Map<Socket, Connection>();
  const byAddress = new Map<string, number>();
  let total = 0;

  const count = (conn: Connection, bytes: number) => {
    conn.pending += bytes;
    total += bytes;
    if (conn.key !== undefined) {
      const n = (byAddress.get(conn.key) ?? 0) + bytes;
      if (n === 0) byAddress.delete(conn.key);
      else byAddress.set(conn.key, n);
    }
    o.metrics?.pendingBytes.set(total);
  };
  const shed = (socket: Socket, reason: ShedReason) => {
    o.metrics?.shed.inc({ reason });
    // Its bytes are let go now (destroy drops them), not at its 'close' a tick later: the connections recounted after
    // it in the same pass are measured against what is really held, and one passing a cap sheds itself alone.
    const conn = connections.get(socket);
    if (conn !== undefined) count(conn, -conn.pending);
    // The rest of the read being parsed (if one is) is not handed on: the parse ends at the next request's headers.
    const parser = (socket as Socket & { parser?: HttpParser | null }).parser;
    if (parser) parser.onIncoming = endParse;
    socket.destroy();
  };

  /** The answer's unsent bytes now in the counts; one that grew past a cap closes its connection. */
  const recount = (res: ServerResponse) => {
    const socket = res.req.socket;
    const conn = connections.get(socket);
    if (conn === undefined || socket.destroyed) return;
    const grown = res.writableLength - conn.pending;
    if (grown === 0) return;
    count(conn, grown);
    if (grown < 0) return;
    if (conn.pending > limits.perConnection) shed(socket, "pending_connection");
    else if (conn.key !== undefined && (byAddress.get(conn.key) ?? 0) > limits.perIp) shed(socket, "pending_ip");
    else if (total > limits.total) shed(socket, "pending_total");
  };
  // The answers dispatched and not yet closed (each connection's `answering`): the ones a recount looks at. Read
  // from the registry, so a request pays for no bookkeeping of the recount's own.
  const recounting = setInterval(() => {
    for (const conn of connections.values()) if (conn.answering?.headersSent) recount(conn.answering);
  }, RECOUNT_MS);
  recounting.unref();
  server.once("close", () => clearInterval(recounting));

  // The answer is handed to the socket (end() ran): what the kernel did not take yet is pending.
  function onPrefinish(this: ServerResponse) {
    recount(this);
  }
  // Sent (or the connection is gone): its bytes are released, and the next waiting request goes on.
  function onClose(this: ServerResponse) {
    const socket = this.req.socket;
    const conn = connections.get(socket);
    if (conn === undefined) return; // the socket closed first: forget() released its bytes
    count(conn, -conn.pending);
    conn.answering = undefined;
    conn.idleSince = performance.now();
    if (socket.destroyed) return; // Node aborts the waiting requests itself
    let next = conn.waiting.shift();
    while (next?.[1].destroyed) next = conn.waiting.shift();
    if (conn.waiting.length === 0 && conn.paused) {
      conn.paused = false;
      socket.resume();
    }
    if (next !== undefined) dispatch(conn, socket, next[0], next[1]);
  }

  // The app's handlers (the server's own, registered before this) run only for requests let through.
  const handlers = server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners("request");
  function dispatch(conn: Connection, socket: Socket, req: IncomingMessage, res: ServerResponse) {
    if (conn.key !== undefined && (byAddress.get(conn.key) ?? 0) >= limits.perIp) {
      shed(socket, "pending_ip");
      return;
    }
    conn.answering = res;
    // `on`, not `once`: each fires once per response anyway, and once's wrapper is an allocation per request.
    res.on("prefinish", onPrefinish);
    res.on("close", onClose);
    for (const handler of handlers) handler.call(server, req, res);
  }

  // Registered from the accept, so the drain also finds a connection that has not sent a request yet.
  const forget = (socket: Socket) => {
    const conn = connections.get(socket);
    if (conn === undefined) return;
    connections.delete(socket);
    count(conn, -conn.pending);
  };
  server.on("connection", (socket: Socket) => {
    const trusted = o.trusted?.has(normalizeIp(socket.remoteAddress ?? "") ?? "") ?? false;
    const key = trusted ? undefined : peerKey(socket);
    const now = performance.now();
    connections.set(socket, { key, answering: undefined, idleSince: now, waiting: [], paused: false, pending: 0 });
    socket.once("close", () => forget(socket));
  });

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const conn = connections.get(socket);
    // Parsed after the connection was closed (closed elsewhere, mid-read): Node aborts it.
    if (conn === undefined || socket.destroyed) return;
    if (conn.answering === undefined) {
      dispatch(conn, socket, req, res);
      return;
    }
    // Pipelined behind an answer not yet sent: it waits, and nothing more is read meanwhile.
    if (conn.waiting.length + 1 >= maxQueued) {
      shed(socket, "pipelined");
      return;
    }
    conn.waiting.push([req, res]);
    if (!conn.paused) {
      conn.paused = true;
      socket.pause();
    }
  });
  return { pendingBytes: (key) => (key === undefined ? total : (byAddress.get(key) ?? 0)), connections };
}
