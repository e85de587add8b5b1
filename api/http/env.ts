/**
 * The app's Hono environment, declared once: what a request's env carries (Bindings) and what the edge's middleware
 * sets on its context (Variables). The app and its routers are `new Hono<AppEnv>()`, so a handler or a middleware
 * reads both typed, without a cast.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { CancelSignal } from "../chain/rpc";
import type { ApiError, ProtocolAnswerError } from "./errors";

/** Env key of an in-process request: fires when the client of the served request it is made for hangs up. */
export const PARENT_HANG_UP = Symbol("hang-up of the served request an in-process request is made for");

/**
 * Env key of an in-process request made on behalf of an MCP client: that client's address. Only code can set it (a
 * client controls headers, never the env), so the rate limit and the logs see the MCP client, not the server itself.
 */
export const IN_PROCESS_CLIENT_IP = Symbol("in-process client IP");

/**
 * Env key of an in-process request the stream hub or the webhook feeder makes (api/live/routeAnswers.ts): a topic's
 * answer at a block, once for every stream or subscription that follows it. Its computation is the process's work
 * for all its streams, not one client's, so it is not charged to a compute budget (all of them would share the
 * "unknown" address's). Only code can set it.
 */
export const STREAM_HUB_REQUEST = Symbol("the stream hub's in-process request");

/**
 * A request's env. Served by @hono/node-server (what the API process and `ponder start|serve` use): Node's
 * IncomingMessage and ServerResponse. In process (app.request; an MCP tool call, api/mcp/server.ts): neither, at most
 * the served request's hang-up and client address; with no env given at all, Hono leaves `c.env` undefined, so it is
 * read as `c.env?.…`.
 */
export type AppBindings = Partial<HttpBindings> & {
  [PARENT_HANG_UP]?: CancelSignal;
  [IN_PROCESS_CLIENT_IP]?: string;
  [STREAM_HUB_REQUEST]?: true;
};

/** What middleware sets on a request's context. */
export type AppVariables = {
  /** The request's id (api/http/edge.ts). */
  requestId: string;
  /** The response respond() built, so the edge knows it already carries the edge headers (api/http/edge.ts). */
  edgeResponse: Response;
  /** Set when the matched handler builds every answer with respond(): nothing prepares headers (api/http/edge.ts). */
  ownsEdgeHeaders: true;
  /** The RateLimit header fields of the request's latest charge, which respond() writes (api/http/rateLimit.ts). */
  rateLimitHeaders: Record<string, string>;
  /** The request's cancel signal: its deadline and its client's hang-up (api/http/cancellation.ts). */
  cancelSignal: CancelSignal;
  /** Pushes the request's deadline out by `ms` (a `minBlock` wait: api/read/headWatch.ts); under deadline() only. */
  extendDeadline: (ms: number) => void;
  /** The route's documented error for its passed deadline (api/http/cancellation.ts); under deadline() only. */
  deadlineError: () => ApiError | ProtocolAnswerError;
  /**
   * The request's `minBlock` and `waitMs` (api/read/runtime.ts AtLeast), set by the feature that parsed them. `shared`: the request as its waiters share their read after the wait (REST: api/read/atLeast.ts sharedRequestKey);
   * absent, the read after the wait is the request's own (GraphQL shares whole executions instead).
   */
  atLeast: { minBlock: bigint; waitMs: number; spentMs?: number; shared?: string };
  /**
   * How long a GraphQL request waited for an identical request's execution that it could not share (an error, such as
   * its INDEX_BEHIND): spent from its own `waitMs` (api/graphql/endpoint.ts answerOf).
   */
  waitedForOthersMs: number;
};

export type AppEnv = { Bindings: AppBindings; Variables: AppVariables };

/** A request's context in this app. */
export type AppContext = Context<AppEnv>;
