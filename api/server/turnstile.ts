/**
 * The requests whose answers cost CPU by the megabyte start one per turn of the event loop, taking turns
 * across clients: MCP messages and GraphQL (requests with a body; a batch of 10 × tools/list is an 840 kB answer
 * to copy and write), the static assets under /docs/ (the 4.35 MB docs bundle: megabytes copied into the
 * socket per answer) and the index's pages (up to 1,000 rows read, built and written). Node answers whatever is ready in one turn back to back, so 400 addresses each with
 * such a request ready held another client's cached GET for seconds; here at most one such start runs
 * between two polls of the sockets, and a client waits behind one request of each other active client,
 * not behind all of one client's. Nothing is held while a started request waits on I/O (a tool call's
 * RPC), so slow upstream calls cannot take every turn; when such waits end together, the large answers
 * they produce are written one per turn too (api/http/answerTurns.ts). Every other GET (cached reads,
 * probes) never waits.
 *
 * The turns are paced with the large answers' (api/http/loopPacer.ts): one per loop iteration, with empty iterations
 * after a long one, so connections are still accepted while the turns run.
 *
 * The client is the one the rate limit sees (the socket peer, or X-Forwarded-For from a trusted proxy).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { resolveClientIp } from "../http/clientIp";
import { pace } from "../http/loopPacer";
import { rateLimitSubject, type TrustedProxies } from "../net/ip";
import { DOCS_PATH, INDEX_BASE } from "../paths";

type Waiting = [IncomingMessage, ServerResponse];

const ASSETS = `${DOCS_PATH}/`;
const INDEX = `${INDEX_BASE}/`;
/** The index routes whose answer is a page of up to 1,000 rows: a history, an account's locks, the activity feed. */
const INDEX_PAGE = /\/(events|locks|activity)(\?|$)/;

/**
 * Whether `req` takes turns: it carries a body (MCP, GraphQL), asks for a static asset, or for an index page (a
 * history, an account's locks, the activity feed: 400 addresses each pipelining two started 800 reads in one turn,
 * and a new connection waited 3 s for its /health).
 */
export function takesTurns(req: IncomingMessage): boolean {
  const method = req.method;
  if (method !== "GET" && method !== "HEAD" && method !== "OPTIONS") return true;
  const url = req.url;
  if (url === undefined) return false;
  return url.startsWith(ASSETS) || (url.startsWith(INDEX) && INDEX_PAGE.test(url));
}

/** `next`, with the requests that take turns (takesTurns) started one per event-loop turn, round-robin over clients. */
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
      pace(turn);
    }
  };

  return (req, res) => {
    if (!takesTurns(req)) {
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
      pace(turn);
    }
  };
}
