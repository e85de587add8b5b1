/**
 * What a connection refused by a connection cap (api/server/connectionLimit.ts) receives: a 429 in the
 * service's envelope, encoded once at start and written as the connection arrives, before Node's HTTP layer
 * parses anything — so a client sees a limit it can honour (`Retry-After`) instead of a reset. The bytes are
 * the same for every refusal of a reason, so there is no request id (one would be shared by every refusal).
 *
 * The connection is closed once the client has the answer: whatever the client sends is read and dropped
 * (closing a socket with unread bytes makes the kernel reset the connection, and a reset can discard the
 * answer before the client reads it), the answer goes out with a FIN, and the socket ends when the client
 * closes its side. A client that neither reads nor closes holds the socket at most `lingerMs`; then it is
 * destroyed whatever was sent.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { CORS_HEADERS } from "../http/edge";
import { ERROR_STATUS, type ErrorEnvelope } from "../http/errors";

/**
 * Why a connection is refused, what it is told, and when to try again: a client's own connections free up as
 * its requests finish (1 s); a full server needs longer (5 s), and clients retrying at once would only add to it.
 */
export const REFUSALS = {
  per_ip: { message: "too many open connections from your address", retryAfterSec: 1 },
  total: { message: "the server is at its connection limit", retryAfterSec: 5 },
} as const;

export type RefusalReason = keyof typeof REFUSALS;

/** A refused connection the client neither reads nor closes is destroyed after this long. */
export const REFUSAL_LINGER_MS = 1_000;

/** The envelope of a refusal: RATE_LIMITED, as a spent rate-limit budget is. */
export function refusalEnvelope(reason: RefusalReason): ErrorEnvelope {
  const { message, retryAfterSec } = REFUSALS[reason];
  return { ok: false, error: "RATE_LIMITED", message, retryAfterSec };
}

/** The complete HTTP answer of a refusal, status line to body. */
export function refusalAnswer(reason: RefusalReason): Buffer {
  const body = JSON.stringify(refusalEnvelope(reason));
  const status = ERROR_STATUS.RATE_LIMITED;
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    "content-type: application/json; charset=UTF-8",
    ...Object.entries(CORS_HEADERS).map(([k, v]) => `${k}: ${v}`),
    "cache-control: no-store",
    `retry-after: ${REFUSALS[reason].retryAfterSec}`,
    "connection: close",
    `content-length: ${Buffer.byteLength(body)}`,
  ];
  return Buffer.from(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/** Writes `answer` on `socket` (which no HTTP parser owns) and closes it as above; `done` runs once it is closed. */
export function answerAndClose(socket: Socket, answer: Buffer, done: () => void, lingerMs = REFUSAL_LINGER_MS): void {
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once("close", () => {
    clearTimeout(timer);
    done();
  });
  // A reset by the client: nothing more to send.
  socket.on("error", () => socket.destroy());
  socket.resume();
  socket.end(answer);
}
