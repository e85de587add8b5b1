/**
 * The HTTP server of the API process: @hono/node-server serving the app, behind the app's hot path at
 * the Node level (a cached supply figure written without a Request or a Response: api/supply/router.ts), with
 * - deliberate limits and timeouts (SERVER_LIMITS, documented in the README);
 * - the connection guard (api/http/connectionGuard.ts);
 * - the error envelope even for requests Node rejects before any handler runs (`clientError`: a URL or
 *   headers too large, a bad request line, an unknown method, conflicting Content-Length /
 *   Transfer-Encoding, a request too slow to arrive), with CORS and a request id, where HTTP still
 *   allows an answer;
 * - a graceful drain: stop accepting, let requests in flight finish within `drainMs`, then close.
 */
import { randomUUID } from "node:crypto";
import { createServer, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { ApiApp } from "../app";
import { guardConnections } from "../http/connectionGuard";
import { ERROR_STATUS, type ErrorCode } from "../http/errors";
import type { NodeHotPath } from "../http/nodeHotPath";

export const SERVER_LIMITS = {
  /** Request line + headers; beyond it: 431 HEADERS_TOO_LARGE. Node's default, stated. */
  maxHeaderSize: 16 * 1024,
  /** The headers must have arrived within this long (slowloris). */
  headersTimeoutMs: 10_000,
  /** The whole request must have arrived within this long. */
  requestTimeoutMs: 30_000,
  /** Idle keep-alive connections close after this long: above the 60 s idle timeout of common load balancers. */
  keepAliveTimeoutMs: 65_000,
} as const;

const CLIENT_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: { code: "HEADERS_TOO_LARGE", message: "The URL and headers exceed 16 KiB." },
  ERR_HTTP_REQUEST_TIMEOUT: { code: "REQUEST_TIMEOUT", message: "The request did not arrive in time." },
};

/** The complete HTTP answer written on the socket for a request Node could not parse. */
export function clientErrorResponse(errorCode: string | undefined): Buffer {
  const known = errorCode === undefined ? undefined : CLIENT_ERRORS[errorCode];
  const code: ErrorCode = known?.code ?? "BAD_REQUEST";
  const message = known?.message ?? "The HTTP request could not be parsed.";
  const status = ERROR_STATUS[code];
  const body = JSON.stringify({ ok: false, error: code, message });
  const reason = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" }[
    status as 400 | 408 | 431
  ];
  return Buffer.from(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      "content-type: application/json; charset=UTF-8\r\n" +
      "access-control-allow-origin: *\r\n" +
      `x-request-id: ${randomUUID()}\r\n` +
      "cache-control: no-store\r\n" +
      "connection: close\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export type ApiServer = {
  server: Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish within `drainMs`, then closes every connection. */
  close(drainMs: number): Promise<void>;
};

export function startApiServer(
  app: ApiApp,
  options: {
    port: number;
    hostname: string /** Only a test that proves the guard matters turns it off. */;
    guard?: boolean;
  },
): Promise<ApiServer> {
  return new Promise((resolve, reject) => {
    // What serve() from @hono/node-server builds (its listener keeps the hostname for a request without a
    // Host), with the hot path asked first: its answer is written here, else the request goes on to Hono.
    const routed = getRequestListener(app.fetch, { hostname: options.hostname });
    const server = createServer({ maxHeaderSize: SERVER_LIMITS.maxHeaderSize }, hotFirst(app.nodeHotPath, routed));
    // A port already taken fails the start with EADDRINUSE instead of an unhandled 'error' event.
    server.once("error", reject);
    server.headersTimeout = SERVER_LIMITS.headersTimeoutMs;
    server.requestTimeout = SERVER_LIMITS.requestTimeoutMs;
    server.keepAliveTimeout = SERVER_LIMITS.keepAliveTimeoutMs;
    if (options.guard !== false) guardConnections(server);
    server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
      // A reset or an already-answered socket gets nothing more; anything else gets the envelope.
      if (error.code === "ECONNRESET" || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(clientErrorResponse(error.code));
    });
    server.listen(options.port, options.hostname, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, port, close: (drainMs) => drain(server, drainMs) });
    });
  });
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

async function drain(server: Server, drainMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // A request still arriving on an open keep-alive connection is served, then its connection closes; a
  // connection that falls idle is closed within 100 ms, so a client (a load balancer's pool) holding idle
  // keep-alive connections does not hold the exit until the bound.
  server.prependListener("request", (_req, res: ServerResponse) => res.setHeader("connection", "close"));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  const bound = new Promise<void>((resolve) => setTimeout(resolve, drainMs).unref());
  await Promise.race([closed, bound]);
  clearInterval(sweep);
  server.closeAllConnections();
  await closed;
}
