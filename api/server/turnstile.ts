/**
 * The requests whose answers cost CPU by the megabyte start in turns of the event loop, taking turns across clients:
 * MCP messages and GraphQL (requests with a body; a batch of 10 × tools/list is an 840 kB answer to copy and write),
 * the static assets under /docs/ (the 4.35 MB docs bundle: megabytes copied into the socket per answer) and the
 * index's pages (up to 1,000 rows read, built and written). Node answers whatever is ready in one turn back to back,
 * so 400 addresses each with such a request ready held another client's cached GET for seconds; here a turn starts
 * requests only until it has taken `TURN_BUDGET_MS` (one heavy start fills it; starts whose work comes later, a body
 * still to read, go many to a turn), and a client waits behind one request of each other active client, not behind
 * all of one client's. Nothing is held while a started request waits on I/O (a tool call's RPC), so slow upstream
 * calls cannot take every turn; when such waits end together, the large answers they produce are written one per
 * turn too (api/http/answerTurns.ts). Every other GET (cached reads, probes) never waits.
 *
 * The turns are paced with the large answers' (api/http/loopPacer.ts): one per loop iteration, with empty iterations
 * after a long one, so connections are still accepted while the turns run.
 *
 * The client is the one the rate limit sees (the socket peer, or X-Forwarded-For from a trusted proxy).
 *
 * A client whose last such request was refused for load (429, 503: over its budget, a queue full) waits behind the
 * clients in good standing for the next `REFUSED_BEHIND_MS`: round-robin alone put another client's one GraphQL query
 * behind one request of each of 400 addresses flooding new documents, every one of which was refused.
 *
 * A client that is known and light — its last such request answered, and nothing asked since for at least
 * `LIGHT_GAP_MS` — starts before the clients in good standing: 400 addresses opening a flood together are all in good
 * standing (unknown yet), and another client's one query waited behind one start of each of them (341 ms). A client
 * asking back to back, or with a request still in flight, is not light; an unknown one is not either, so a flood of
 * new addresses cannot take the front. A light client's request also does not wait for the next paced turn: the
 * light lane has turns of its own, in the next loop iteration, at most one every `LIGHT_TURN_GAP_MS`. The paced turns
 * come after the empty iterations owed for the last (api/http/loopPacer.ts), and under a flood each iteration is busy:
 * another client's cached GraphQL query, light and first in line, waited 35–130 ms for the next one (issue 30).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { BoundedMap } from "../cache/boundedMap";
import { resolveClientIp } from "../http/clientIp";
import { pace } from "../http/loopPacer";
import { rateLimitSubject, type TrustedProxies } from "../net/ip";
import { DOCS_PATH, INDEX_BASE } from "../paths";

type Waiting = [IncomingMessage, ServerResponse];

/** A turn starts requests until it has taken this long (at least one). */
export const TURN_BUDGET_MS = 1;
/** How long a client refused for load waits behind the others, from the refusal. */
export const REFUSED_BEHIND_MS = 2_000;
/** Clients remembered as refused (the oldest forgotten first): any number of addresses may be refused. */
const REFUSED_REMEMBERED = 100_000;
/** How long a client must have asked nothing after its last answer to start before the others. */
export const LIGHT_GAP_MS = 50;
/**
 * The light lane's own turns come at most this often: a client is light at most once per LIGHT_GAP_MS, but many
 * clients may be, so what these turns start (1 ms of starts each, as a paced turn) is bounded to a tenth of the time.
 */
export const LIGHT_TURN_GAP_MS = 10;
/** Clients remembered with their last answer's time (the oldest forgotten first). */
const ANSWERED_REMEMBERED = 100_000;

const CLIENT = Symbol("turnClient");
type Turning = ServerResponse & { [CLIENT]?: string };

const ASSETS = `${DOCS_PATH}/`;
const INDEX = `${INDEX_BASE}/`;
/** The index routes whose answer is a page of up to 1,000 rows: a history, an account's locks, the activity feed. */
const INDEX_PAGE = /\/(events|locks|activity)(\?|$)/;
/** An index request naming its block: `block=`, or a `cursor` (its list's block); another spelling is a 400 anyway. */
const NAMED_BLOCK = /[?&](block|cursor)=/;

/**
 * Whether `req` takes turns: it carries a body (MCP, GraphQL), asks for a static asset, for an index page (a
 * history, an account's locks, the activity feed: 400 addresses each pipelining two started 800 reads in one turn,
 * and a new connection waited 3 s for its /health), or names a block of the index (time travel: a past block's
 * ranking or stats may be computed; 400 addresses opening their floods together held the loop ~0.4 s with their
 * first requests, and the head's readers waited up to 300 ms). The head's reads never wait.
 */
export function takesTurns(req: IncomingMessage): boolean {
  const method = req.method;
  if (method !== "GET" && method !== "HEAD" && method !== "OPTIONS") return true;
  const url = req.url;
  if (url === undefined || !(url.startsWith(ASSETS) || url.startsWith(INDEX))) return false;
  return url.startsWith(ASSETS) || INDEX_PAGE.test(url) || NAMED_BLOCK.test(url);
}

/**
 * `next`, with the requests that take turns (takesTurns) started in event-loop turns of at most TURN_BUDGET_MS,
 * round-robin over clients, those refused lately behind the others.
 */
export function takeTurns(
  next: RequestListener,
  trusted: TrustedProxies,
  now: () => number = performance.now.bind(performance),
): RequestListener {
  /**
   * Waiting requests per client, those in good standing and those refused lately (served when no other waits); a
   * Map iterates in insertion order, so re-inserting rotates a client to the back of its lane.
   */
  const light = new Map<string, Waiting[]>();
  const waiting = new Map<string, Waiting[]>();
  const behind = new Map<string, Waiting[]>();
  /** When each client refused for load was last refused. */
  const refusedAt = new BoundedMap<string, number>(REFUSED_REMEMBERED, "recency");
  /** When each client's last started request was answered; absent while one is in flight (or never answered). */
  const answeredAt = new BoundedMap<string, number>(ANSWERED_REMEMBERED, "recency");
  let scheduled = false;
  let lightScheduled = false;
  let lastLightTurn = Number.NEGATIVE_INFINITY;

  /** Starts the next request of `lane` (rotating its client to the back); false when none is left to start. */
  const startFrom = (lane: Map<string, Waiting[]>): boolean => {
    for (const [client, queue] of lane) {
      lane.delete(client);
      const [req, res] = queue.shift()!;
      if (queue.length > 0) lane.set(client, queue);
      if (res.destroyed || req.socket.destroyed) continue; // gone while waiting: costs nothing
      (res as Turning)[CLIENT] = client;
      answeredAt.delete(client);
      res.on("finish", answered);
      next(req, res);
      return true;
    }
    return false;
  };
  function answered(this: Turning): void {
    const client = this[CLIENT]!;
    if (this.statusCode === 429 || this.statusCode === 503) refusedAt.set(client, now());
    else refusedAt.delete(client);
    answeredAt.set(client, now());
  }

  const turn = () => {
    scheduled = false;
    // Starts until the turn has taken TURN_BUDGET_MS: one heavy start (a docs asset written) fills it alone, while
    // the starts of requests whose work comes later (a body still to read) go many to a turn — 400 flooding clients
    // one per turn kept a newcomer's first request waiting behind their whole first round (0.3–1.1 s).
    const until = now() + TURN_BUDGET_MS;
    while (startFrom(light) || startFrom(waiting) || startFrom(behind)) if (now() >= until) break;
    if ((light.size > 0 || waiting.size > 0 || behind.size > 0) && !scheduled) {
      scheduled = true;
      pace(turn);
    }
  };

  /** Starts light clients' requests for up to TURN_BUDGET_MS, outside the paced turns. */
  const lightTurn = () => {
    lightScheduled = false;
    lastLightTurn = now();
    const until = lastLightTurn + TURN_BUDGET_MS;
    while (startFrom(light)) if (now() >= until) break;
    if (light.size > 0) scheduleLightTurn();
  };
  const scheduleLightTurn = () => {
    if (lightScheduled) return;
    lightScheduled = true;
    const wait = lastLightTurn + LIGHT_TURN_GAP_MS - now();
    if (wait > 0) setTimeout(lightTurn, wait);
    else setImmediate(lightTurn);
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
    const at = refusedAt.peek(client);
    const done = answeredAt.peek(client);
    const lane =
      at !== undefined && now() - at < REFUSED_BEHIND_MS
        ? behind
        : done !== undefined && now() - done >= LIGHT_GAP_MS
          ? light
          : waiting;
    // A client's requests stay in order: one already waiting in another lane keeps its place there.
    const queue = light.get(client) ?? waiting.get(client) ?? behind.get(client);
    if (queue === undefined) lane.set(client, [[req, res]]);
    else queue.push([req, res]);
    if (light.size > 0) scheduleLightTurn();
    if (!scheduled) {
      scheduled = true;
      pace(turn);
    }
  };
}
