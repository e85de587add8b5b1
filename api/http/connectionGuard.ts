import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/**
 * Bounds what one connection can make the server hold. Node parses every request of a TCP read at once,
 * so a client that pipelines requests and never reads the answers makes the server compute and buffer
 * all of them (an attack with 20 sockets × 10 pipelined 2 MB MCP answers took a replica from 529 to 1,131 MB). Browsers
 * and HTTP clients do not pipeline; a connection with more than `maxInFlight` requests still unanswered
 * is closed before the extra request is handled, so the memory a connection can pin is at most
 * `maxInFlight` answers (each bounded: an MCP answer by MCP_MAX_RESPONSE_BYTES, every other a few KiB).
 */
export const MAX_IN_FLIGHT_PER_CONNECTION = 4;

export function guardConnections(server: Server, maxInFlight = MAX_IN_FLIGHT_PER_CONNECTION): void {
  const inFlight = new WeakMap<Socket, number>();
  // One shared listener (no closure per request): a response closes once, finished or aborted.
  function answered(this: ServerResponse) {
    const socket = this.req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1);
  }
  // The server's own handler (@hono/node-server's) runs only for requests within the bound.
  const handlers = server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const n = (inFlight.get(socket) ?? 0) + 1;
    if (n > maxInFlight) {
      socket.destroy();
      return;
    }
    inFlight.set(socket, n);
    res.on("close", answered);
    for (const handler of handlers) handler(req, res);
  });
}
