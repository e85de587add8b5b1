/**
 * Requests the HTTP layer refuses before any route: Node's parser (a bad request line, an unknown method,
 * conflicting framing, headers over 16 KiB, a request too slow to arrive), Node's own checks (an `Expect`
 * other than 100-continue, CONNECT) and the adapter's (no Host on HTTP/1.1, a Host it cannot use, a target
 * that is neither a path nor an absolute http URL). Each gets the service's envelope, with CORS and a
 * request id, and `connection: close` (RFC 9112 §9.6: after a framing error the connection cannot be
 * trusted), where HTTP still allows an answer; each is counted by reason.
 */
import { randomUUID } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { CORS_HEADERS } from "../http/edge";
import { ERROR_STATUS, type ErrorCode, type ErrorEnvelope, MethodNotAllowedError } from "../http/errors";
import { hostAccepted } from "../http/nodeHotPath";
import type { ConnectionMetrics } from "../observability/metrics";

const answer = (code: ErrorCode, message: string): ErrorEnvelope => ({ ok: false, error: code, message });

/** Every reason, its envelope, and any header the status calls for. */
export const PROTOCOL_ERRORS = {
  header_overflow: { envelope: answer("HEADERS_TOO_LARGE", "The URL and headers exceed 16 KiB.") },
  request_timeout: { envelope: answer("REQUEST_TIMEOUT", "The request did not arrive in time.") },
  malformed: { envelope: answer("BAD_REQUEST", "The HTTP request could not be parsed.") },
  missing_host: { envelope: answer("BAD_REQUEST", "An HTTP/1.1 request must carry a Host header.") },
  duplicate_host: { envelope: answer("BAD_REQUEST", "A request must carry one Host header, not several.") },
  bad_host: { envelope: answer("BAD_REQUEST", "The Host header is not a valid host[:port].") },
  asterisk_target: { envelope: answer("BAD_REQUEST", "The target `*` is not served; request a path.") },
  bad_target: { envelope: answer("BAD_REQUEST", "The request target must be a path or an absolute http(s) URL.") },
  expectation: { envelope: answer("EXPECTATION_FAILED", "Only Expect: 100-continue is supported.") },
  connect: { envelope: new MethodNotAllowedError("CONNECT").toEnvelope(), allow: "GET, HEAD, OPTIONS" },
} as const satisfies Record<string, { envelope: ErrorEnvelope; allow?: string }>;

export type ProtocolErrorReason = keyof typeof PROTOCOL_ERRORS;

/** Node's error codes (the parser's HPE_*, its timeouts) by reason; any other is `malformed`. */
const NODE_ERROR_REASONS: Record<string, ProtocolErrorReason> = {
  HPE_HEADER_OVERFLOW: "header_overflow",
  ERR_HTTP_REQUEST_TIMEOUT: "request_timeout",
};

function headersOf(reason: ProtocolErrorReason, body: string): Record<string, string> {
  const spec: { envelope: ErrorEnvelope; allow?: string } = PROTOCOL_ERRORS[reason];
  return {
    "content-type": "application/json; charset=UTF-8",
    ...CORS_HEADERS,
    "x-request-id": randomUUID(),
    "cache-control": "no-store",
    ...(spec.allow ? { allow: spec.allow } : {}),
    connection: "close",
    "content-length": String(Buffer.byteLength(body)),
  };
}

/** The complete HTTP answer to write on a socket no ServerResponse owns (a parse error, CONNECT). */
export function protocolErrorAnswer(reason: ProtocolErrorReason): Buffer {
  const { envelope } = PROTOCOL_ERRORS[reason];
  const status = ERROR_STATUS[envelope.error];
  const body = JSON.stringify(envelope);
  const head = Object.entries(headersOf(reason, body))
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return Buffer.from(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
}

/** Answers `res` with the envelope of `reason`; the connection closes after it. */
export function writeProtocolError(res: ServerResponse, reason: ProtocolErrorReason): void {
  const { envelope } = PROTOCOL_ERRORS[reason];
  const body = JSON.stringify(envelope);
  res.writeHead(ERROR_STATUS[envelope.error], headersOf(reason, body));
  res.end(body);
}

/**
 * Why the adapter could not serve `req` as it stands, or undefined (the common case costs a few property
 * reads). HTTP/1.1 needs exactly one Host (RFC 9112 §3.2); a target is origin-form or absolute-form (§3.2).
 */
export function requestFault(req: IncomingMessage): ProtocolErrorReason | undefined {
  const host = req.headers.host;
  if (host === undefined) {
    const v11 = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
    return v11 ? "missing_host" : undefined;
  }
  if (!hostAccepted(host)) return "bad_host";
  // Node keeps the first of several Hosts: counted on the raw list (names of four letters only are compared).
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === "host") hosts++;
  if (hosts > 1) return "duplicate_host";
  const target = req.url ?? "";
  if (target.charCodeAt(0) === 47 /* "/" */) return undefined;
  if (target === "*") return "asterisk_target";
  return /^https?:\/\//i.test(target) && URL.canParse(target) ? undefined : "bad_target";
}

/**
 * Installs the envelope on every refusal of `server`'s HTTP layer. The server is created with
 * `requireHostHeader: false` (Node's bare 400 for a missing Host gives way to requestFault's answer), and its
 * request listener checks requestFault.
 */
export function answerProtocolErrors(server: Server, metrics?: ConnectionMetrics): void {
  server.on("clientError", (error: Error & { code?: string }, socket: Socket) => {
    // A reset needs no answer; nor can one be written into an answer already under way (it would corrupt it).
    const owner = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || owner?.headersSent) {
      socket.destroy();
      return;
    }
    const reason = NODE_ERROR_REASONS[error.code ?? ""] ?? "malformed";
    metrics?.protocolErrors.inc({ reason });
    socket.end(protocolErrorAnswer(reason));
  });
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    metrics?.protocolErrors.inc({ reason: "expectation" });
    writeProtocolError(res, "expectation");
  });
  // Node hands a CONNECT's socket over bare (its error and timeout handling removed): closed once answered.
  server.on("connect", (_req: IncomingMessage, socket: Socket) => {
    metrics?.protocolErrors.inc({ reason: "connect" });
    socket.on("error", () => socket.destroy());
    socket.end(protocolErrorAnswer("connect"), () => socket.destroy());
  });
}

/** Counts and answers a request-level fault. */
export function refuseRequest(res: ServerResponse, reason: ProtocolErrorReason, metrics?: ConnectionMetrics): void {
  metrics?.protocolErrors.inc({ reason });
  writeProtocolError(res, reason);
}
