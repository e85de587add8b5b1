/**
 * The send timeout (nginx's send_timeout, SEND_TIMEOUT_MS): a connection holding bytes it has written but the kernel
 * has not taken — an answer, an event stream, an error written before a close — and whose kernel took none of them
 * for `ms` is closed, so an unread answer holds its bytes for a bounded time. Progress is the kernel taking bytes, not
 * the server writing more: a stream's heartbeats queued behind an unread catch-up are not progress. A connection with
 * nothing unsent (idle between requests, or an answer still being computed) is not watched: the keep-alive timeout and
 * its route's deadline close those.
 *
 * Node's own socket timer (`server.timeout`), which this replaces, closed a stalled answer only after twice the time:
 * it suppresses its first expiry whenever the write in flight went out in part, as a stalled write always has (a
 * never-reading stream was shed after 120 s, red team rtlive F7). Here the connections are checked every CHECK_MS, so
 * one is closed between `ms` and `ms` + 2 × CHECK_MS after the kernel last took any of its bytes.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionMetrics } from "../observability/metrics";

/** How often the connections are checked: a stalled one closes at most twice this after SEND_TIMEOUT_MS. */
export const SEND_TIMEOUT_CHECK_MS = 250;

/**
 * libuv's counters on the socket's handle (what Node's own timer reads): bytes handed to the handle, and those of them
 * the kernel has not taken yet. Their difference grows exactly when the kernel takes bytes.
 */
type StreamHandle = { readonly bytesWritten: number; readonly writeQueueSize: number };
type Watch = { taken: number; since: number };

/**
 * Closes, counted as `send_timeout`, every connection of `connections` (the guard's registry of open connections,
 * api/server/connectionGuard.ts) whose unsent bytes made no progress for `ms`.
 */
export function closeStalled(
  server: Server,
  connections: ReadonlyMap<Socket, unknown>,
  ms: number,
  metrics: ConnectionMetrics | undefined,
): void {
  const watched = new WeakMap<Socket, Watch>();
  const check = () => {
    const now = performance.now();
    for (const socket of connections.keys()) {
      const handle = (socket as Socket & { _handle?: StreamHandle | null })._handle;
      if (socket.writableLength === 0 || !handle) {
        watched.delete(socket);
        continue;
      }
      const taken = handle.bytesWritten - handle.writeQueueSize;
      const watch = watched.get(socket);
      if (watch === undefined) watched.set(socket, { taken, since: now });
      else if (watch.taken !== taken) {
        watch.taken = taken;
        watch.since = now;
      } else if (now - watch.since >= ms) {
        metrics?.shed.inc({ reason: "send_timeout" });
        socket.destroy();
      }
    }
  };
  const timer = setInterval(check, SEND_TIMEOUT_CHECK_MS);
  timer.unref();
  server.once("close", () => clearInterval(timer));
}
