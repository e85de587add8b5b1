import type { Hono } from "hono";
import { clientGone } from "../http/cancellation";
import type { AppContext, AppEnv } from "../http/env";
import { BadParamsError, IndexOfAnotherChainError, IndexUnavailableError, RateLimitedError } from "../http/errors";
import { PARAM_PATTERNS } from "../http/params";
import { routeAnswers } from "../live/routeAnswers";
import { parseTopics } from "../live/topics";
import { rateLimitSubject } from "../net/ip";
import type { StreamMetrics } from "../observability/streamMetrics";
import { BOARD_WINDOWS, DURATION_BOARDS } from "../read/contract";
import type { IndexRuntime } from "../read/runtime";
import type { RouteDefinition } from "../route/definition";
import { ADDRESS_PATTERN, UINT256_PATTERN } from "../route/jsonSchema";
import { StreamHub, type StreamLimits } from "./streamHub";

/**
 * GET /stream — Server-Sent Events of what changed in the index, per topic and per indexed block (api/index/streamHub.ts).
 * The topics are judged before the stream opens (400 in the envelope), and so are the limits (429, Retry-After).
 */
export const STREAM_PATH = "/stream";

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};
/** @hono/node-server's mark of a response its handler wrote itself (its RESPONSE_ALREADY_SENT). */
const ALREADY_SENT = "x-hono-already-sent";

const EXAMPLE_EVENTS =
  "retry: 2000\n\n" +
  'id: 1234567\nevent: stats\ndata: {"ok":true,"chainId":8453,"blockNumber":"1234567",…}\n\n' +
  ":\n\n" +
  'id: 1234540\nevent: reorg\ndata: {"orphaned":{"from":"1234568","to":"1234570"},"head":"1234570"}\n\n';

/**
 * The stream's OpenAPI operation (api/openapi/document.ts writes it beside the JSON routes'; not an MCP tool: a tool
 * call answers once). Its parameters repeat, so they are described here rather than as ParamDocs.
 */
export const streamRoute = {
  path: STREAM_PATH,
  operationId: "stream_index",
  summary: "Stream what changed in the index (SSE)",
  description:
    "Server-Sent Events (`text/event-stream`), one per indexed block in which a topic's answer changed: `id:` the " +
    "block number, `event:` the topic (`lock`, `account`, `board`, `stats`, `activity`), `data:` exactly the JSON the " +
    "topic's REST route answers at that block (`GET /locks/{id}`, `GET /accounts/{address}/locks`, the first page of " +
    "`GET /leaderboards/ve` or `GET /leaderboards/{board}?window=`, `GET /stats`, the first page of " +
    "`GET /activity?kind=`, with `block=` the event's id). A change is an indexed event that concerns the topic (a " +
    "lock's events; an account's lock events and the Furnace, royalty and MineCore events naming it; ve and stats: " +
    "any lock event; a duration board: an event of its source kind; activity: an event of its kinds) or, for a " +
    "windowed duration board, an entry leaving the window (at the first block whose timestamp T ≥ the entry's + the " +
    "window); time alone (ve decaying) is not. A duration board's window is `window=` (one for the stream's boards, " +
    "default 7d) or its own (`board=takeovers:24h`); activity's kinds are `kind=` or its value " +
    "(`activity=takeover,unlock`). On open, each topic's answer at the head; " +
    "with `Last-Event-ID` (the header EventSource sends on reconnect, or `?lastEventId=`), instead the blocks missed " +
    "since (at most STREAM_REPLAY_BLOCKS, else one `reset` event: re-read). On a reorg, one `reorg` event names the " +
    "orphaned blocks (`id:` the finalized block the revert named), then the new branch's blocks are replayed " +
    "from there as any catch-up, with every topic's answer at the new head; a stream still catching up is first sent the " +
    "blocks below it that it had not reached, and one resumed from a block a reorg may have replaced is told the same. " +
    "A comment line (`:`) every 15 s keeps proxies open. " +
    "Limits: streams per client address and per process (429 RATE_LIMITED); a client that leaves events unread is " +
    "disconnected.",
  query: {},
  errors: ["BAD_PARAMS", "INDEX_UNAVAILABLE"],
  response: { schema: { type: "string" }, example: EXAMPLE_EVENTS },
} as const satisfies RouteDefinition;

const WINDOWS = Object.keys(BOARD_WINDOWS).join("|");

/** The stream's query parameters, for the OpenAPI document. */
export const STREAM_PARAMETERS = [
  {
    name: "lock",
    in: "query",
    description: "A lock's token id (repeatable): its GET /locks/{tokenId} answer in each block with an event of it.",
    schema: { type: "array", items: { type: "string", pattern: UINT256_PATTERN } },
    style: "form",
    explode: true,
    example: ["42"],
  },
  {
    name: "account",
    in: "query",
    description:
      "An address (repeatable): its GET /accounts/{address}/locks answer in each block with an event it sent, " +
      "received or owns.",
    schema: { type: "array", items: { type: "string", pattern: ADDRESS_PATTERN } },
    style: "form",
    explode: true,
  },
  {
    name: "board",
    in: "query",
    description:
      "A leaderboard (repeatable): `ve` (its first page in each block with a lock event), or a duration board, " +
      "optionally with its window (`takeovers`, `takeovers:24h`): its first page in each block with an event of its " +
      "source kind or an entry leaving its window.",
    schema: {
      type: "array",
      items: { type: "string", pattern: `^(ve|(${DURATION_BOARDS.join("|")})(:(${WINDOWS}))?)$` },
    },
    style: "form",
    explode: true,
    example: ["takeovers:24h"],
  },
  {
    name: "window",
    in: "query",
    description: "The window of the duration board topics that name none (default 7d); only with one of them.",
    schema: { type: "string", enum: Object.keys(BOARD_WINDOWS) },
  },
  {
    name: "activity",
    in: "query",
    description:
      "The activity feed (`?activity`, or `?activity=takeover,unlock` for those kinds): its first page in each " +
      "block with an event of its kinds.",
    schema: { type: "string", pattern: PARAM_PATTERNS.kinds },
    allowEmptyValue: true,
  },
  {
    name: "kind",
    in: "query",
    description: "The kinds of an `activity` topic given without a value, comma-separated (as GET /activity's).",
    schema: { type: "string", pattern: PARAM_PATTERNS.kinds },
  },
  {
    name: "stats",
    in: "query",
    description: "Present without a value (`?stats`): GET /stats in each block with any lock event.",
    schema: { type: "string", enum: [""] },
    allowEmptyValue: true,
  },
  {
    name: "Last-Event-ID",
    in: "header",
    description:
      "The last event id seen (a block number): replay the blocks missed since, then continue (when a reorg this " +
      "replica heard may have replaced that block, a `reorg` first and the replay from the block after the finalized " +
      "one its revert named).",
    schema: { type: "string", pattern: UINT256_PATTERN },
  },
  {
    name: "lastEventId",
    in: "query",
    description: "As the Last-Event-ID header, for a client that cannot set it (the header wins when both are given).",
    schema: { type: "string", pattern: UINT256_PATTERN },
  },
] as const;

export type StreamRouteOptions = {
  limits: StreamLimits;
  clientIp: (c: AppContext) => string | null;
  metrics?: StreamMetrics;
};

/** `Last-Event-ID`: a block number, as this route's ids are; anything else is a 400 (a client's bug, not a resume). */
function lastEventId(c: AppContext): bigint | null {
  const given = new URL(c.req.url).searchParams.getAll("lastEventId");
  // As every other single-valued parameter: twice is a client's bug, not "the first one".
  if (given.length > 1) {
    throw new BadParamsError("Parameter lastEventId is given more than once.", { param: "lastEventId" });
  }
  const raw = c.req.header("last-event-id") ?? given[0];
  if (raw === undefined || raw === null || raw === "") return null;
  if (!/^(0|[1-9]\d{0,19})$/.test(raw)) {
    throw new BadParamsError("Last-Event-ID must be a block number, as this stream's event ids are.", {
      param: "Last-Event-ID",
    });
  }
  return BigInt(raw);
}

export function registerStreamRoute(
  router: Hono<AppEnv>,
  rt: IndexRuntime,
  options: StreamRouteOptions,
): StreamHub | null {
  if (rt.signal === null) {
    router.get(STREAM_PATH, (c) => {
      const url = new URL(c.req.url);
      url.searchParams.delete("lastEventId");
      parseTopics(url.toString());
      throw new IndexUnavailableError("unconfigured");
    });
    return null;
  }
  const hub = new StreamHub(rt, routeAnswers(router, "stream"), options.limits, options.metrics);
  router.get(STREAM_PATH, (c) => {
    const url = new URL(c.req.url);
    const last = lastEventId(c);
    url.searchParams.delete("lastEventId");
    const topics = parseTopics(url.toString());
    // An index on a replaced branch has nothing true to stream (api/read/branchCheck.ts): refused as its reads are.
    if (rt.branch?.orphaned) throw new IndexUnavailableError("replaced branch");
    // Nor has an index of another chain (api/read/indexChain.ts): its answers would be labelled this chain's.
    const other = rt.chain.other;
    if (other) throw new IndexOfAnotherChainError(other.indexChainId, other.chainId);
    // Counted as the rate limiter counts a client: an IPv6 host by its /64, which it can rotate addresses within.
    const client = options.clientIp(c);
    const ip = client === null ? "unknown" : rateLimitSubject(client);
    const refused = hub.refusal(ip);
    if (refused !== null) {
      options.metrics?.refused.inc({ reason: refused });
      throw new RateLimitedError(refused === "total" ? 5 : 1);
    }
    // A HEAD is answered as the GET would be, without its body, and at once: Node sends a body-less response's head
    // only at its end, so a HEAD handed to the hub was never answered, and held a stream's place while its peer waited.
    if (c.req.method === "HEAD") return c.body(null, 200, SSE_HEADERS);
    const outgoing = c.env?.outgoing;
    if (outgoing && !outgoing.headersSent) {
      // A client that hung up while its request waited (the rate limit's store, the middleware before) has nothing to
      // stream to, and its response's "close" was emitted already: a stream opened now would never hear it and would
      // hold its slots (STREAM_MAX_PER_IP, STREAM_MAX) for good. Nothing is written; the request log counts a 499.
      if (clientGone(c)) return new Response(null, { headers: { [ALREADY_SENT]: "true" } });
      // Served: written straight to Node's response, so an idle stream pins no web stream or Request (bench/stream-idle.ts).
      // The headers the edge and the rate limit prepared (CORS, x-request-id, RateLimit) go with it.
      const headers: Record<string, string> = {};
      c.res.headers.forEach((v, k) => {
        headers[k] = v;
      });
      outgoing.writeHead(200, { ...headers, ...SSE_HEADERS });
      const stream = hub.open(topics, ip, last, outgoing);
      outgoing.once("close", () => stream.close());
      return new Response(null, { headers: { [ALREADY_SENT]: "true" } });
    }
    const stream = hub.open(topics, ip, last);
    return c.body(stream.body, 200, SSE_HEADERS);
  });
  return hub;
}
