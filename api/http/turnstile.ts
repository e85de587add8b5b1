/**
 * Requests with a body — MCP messages, the only POST route, and the only answers that cost CPU by the
 * megabyte (a batch of 10 × tools/list is 580 kB of JSON to build and encode) — start one per turn of the
 * event loop, taking turns across clients. Node answers whatever is ready in one turn back to back, so 400
 * addresses each with an MCP batch ready held another client's cached GET for seconds; here at most one
 * such start runs between two polls of the sockets, and a client waits behind one request of each other
 * active client, not behind all of one client's. Nothing is held while a started request waits on I/O (a
 * tool call's RPC), so slow upstream calls cannot take every turn. GETs (cached reads, probes) never wait.
 *
 * The client is the one the rate limit sees (the socket peer, or X-Forwarded-For from a trusted proxy).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { rateLimitSubject, type TrustedProxies } from "../net/ip";
import { resolveClientIp } from "./clientIp";

type Waiting = [IncomingMessage, ServerResponse];

/** `next`, with requests that carry a body started one per event-loop turn, round-robin over clients. */
export function takeTurns(next: RequestListener, trusted: TrustedProxies): RequestListener {
  /** Waiting requests per client; a Map iterates in insertion order, so re-inserting rotates a client to the back. */
  const waiting = new Map<string, Waiting[]>();
  let scheduled = false;

  const turn = () => {
    scheduled = false;
    for (const [client, queue] of waiting) {
      waiting.delete(client);
      const [req, res] = queue.shift()!;
      if (queue.length > 0) waiting.set(client, queue);
      if (res.destroyed || req.socket.destroyed) continue; // gone while waiting: costs nothing
      next(req, res);
      break;
    }
    if (waiting.size > 0 && !scheduled) {
      scheduled = true;
      setImmediate(turn);
    }
  };

  return (req, res) => {
    if (req.method === "GET" || req.method === "HEAD" || req.method === "OPTIONS") {
      next(req, res);
      return;
    }
    const forwarded = req.headers["x-forwarded-for"];
    const ip = resolveClientIp({
      peer: req.socket.remoteAddress,
      forwardedFor: Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
      trusted,
    });
    const client = ip === null ? "unknown" : rateLimitSubject(ip);
    const queue = waiting.get(client);
    if (queue === undefined) waiting.set(client, [[req, res]]);
    else queue.push([req, res]);
    if (!scheduled) {
      scheduled = true;
      setImmediate(turn);
    }
  };
}
