/**
 * Cancellation, in one place: a request's cancel signal (its deadline and its client's hang-up, one CancelSignal
 * that its RPC calls and its index queries take), and the deadline race the supply reads share.
 *
 * A hang-up (the client closed its connection before the answer was written) fires the request's signal with reason
 * HANG_UP, and the request log records it as 499. Served by @hono/node-server, a request's env holds `outgoing`, Node's
 * ServerResponse: it emits "close" when the connection closes, after the answer or before it (@hono/node-server 1.19.5
 * aborts `c.req.raw.signal` from the same event; listening here avoids building the full Request and its AbortSignal
 * for every request). An in-process request made for a served one (an MCP tool call: api/mcp/server.ts) carries that
 * request's hang-up as a CancelSignal under PARENT_HANG_UP instead: one listener on the connection, however many tool
 * calls a batch makes.
 */
import type { MiddlewareHandler } from "hono";
import {
  boundToDeadline,
  CancelledError,
  type CancelSignal,
  DEADLINE_REASON,
  HANG_UP,
  type RpcClient,
  RpcError,
} from "../chain/rpc";
import { type AppContext, type AppEnv, PARENT_HANG_UP } from "./env";
import {
  type ApiError,
  IndexUnavailableError,
  PreflightReadFailedError,
  type ProtocolAnswerError,
  QuoteFailedError,
  StateReadFailedError,
} from "./errors";
import { limitedPrefix } from "./rateLimit";

/**
 * A CancelSignal its owner fires: the `aborted` flag, `reason` and "abort" listeners of an AbortController's signal,
 * without its cost — Node builds every AbortSignal as a transferable EventTarget, about 2% of a state answer's CPU,
 * for a signal that never leaves the request. A request's deadline is one. A listener added after the abort never
 * runs, as with an AbortSignal.
 */
export class CancelSource implements CancelSignal {
  aborted = false;
  /** Why it fired: what abort() was given (HANG_UP when a request's client went away). */
  reason: unknown;
  #listeners: (() => void)[] = [];

  addEventListener(_type: "abort", listener: () => void): void {
    if (!this.aborted) this.#listeners.push(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    const at = this.#listeners.indexOf(listener);
    if (at !== -1) this.#listeners.splice(at, 1);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}

/**
 * `work` raced against a deadline of `ms`. At the deadline `cancel` runs, so the work's upstream calls are cancelled
 * (their connections closed) rather than left running in the background; `graceMs` later, if `work` has still not
 * settled, the race rejects with `timeoutError()` (with no grace: at the deadline itself, before `cancel`).
 */
export function raceDeadline<T>(
  work: Promise<T>,
  o: { ms: number; graceMs?: number; cancel: () => void; timeoutError: () => Error; extraMs?: () => number },
): Promise<T> {
  const graceMs = o.graceMs ?? 0;
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    const fire = () => {
      // Extended meanwhile (extendDeadline): the deadline moves out by what was added, once it is due.
      const left = started + o.ms + (o.extraMs?.() ?? 0) - performance.now();
      if (left >= 1) {
        timer = setTimeout(fire, left);
        return;
      }
      if (graceMs === 0) reject(o.timeoutError());
      o.cancel();
      if (graceMs > 0) timer = setTimeout(() => reject(o.timeoutError()), graceMs);
    };
    timer = setTimeout(fire, o.ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Calls `listener` once if the request's client hangs up — at once if it has already — and returns the function that
 * stops watching.
 */
export function onHangUp(c: AppContext, listener: () => void): () => void {
  const stream = c.env?.outgoing;
  if (stream) {
    // Gone already (it hung up while the request waited in a middleware before: the rate limit's Redis round trip): its
    // "close" was emitted before anyone listened, and will not come again.
    if (stream.destroyed && !stream.writableFinished) {
      listener();
      return () => {};
    }
    // "close" also follows an answer written in full: only a close before that is a hang-up.
    const closed = () => {
      if (!stream.writableFinished) listener();
    };
    stream.once("close", closed);
    return () => stream.off("close", closed);
  }
  const parent = c.env?.[PARENT_HANG_UP];
  if (!parent) return () => {};
  parent.addEventListener("abort", listener);
  return () => parent.removeEventListener("abort", listener);
}

/**
 * Whether `error` is the cancellation of a request whose `signal` fired — what its cancelled work rejects with: a
 * CancelledError (an index query's QueryCancelledError), an RPC call the signal stopped ("aborted" at a hang-up,
 * "timeout" at the deadline), or the signal's own reason — rather than a failure that only came after it fired (a bug
 * meeting a hang-up or a deadline stays a 500 with its error line).
 */
export function isCancellation(error: unknown, signal: CancelSignal | undefined): boolean {
  if (signal?.aborted !== true) return false;
  return (
    error === signal.reason ||
    error instanceof CancelledError ||
    (error instanceof RpcError && (error.kind === "aborted" || error.kind === "timeout"))
  );
}

/** Whether the request's client has gone before its answer was written. */
export function clientGone(c: AppContext): boolean {
  const stream = c.env?.outgoing;
  if (stream) return stream.destroyed && !stream.writableFinished;
  return c.env?.[PARENT_HANG_UP]?.aborted === true;
}

/** The v1 routes' overall deadline: min(RPC_TIMEOUT_MS, this). An assistant waits no longer for any answer. */
export const V1_DEADLINE_CAP_MS = 10_000;

export function v1DeadlineMs(rpcTimeoutMs: number): number {
  return Math.min(rpcTimeoutMs, V1_DEADLINE_CAP_MS);
}

/** What a v1 route answers when its deadline passes before it could answer for itself. */
export function v1TimeoutError(c: AppContext, ms: number): ApiError {
  const message = `The upstream reads did not complete within ${ms} ms.`;
  switch (limitedPrefix(c.req.path)) {
    case "preflight":
      return new PreflightReadFailedError(`${message} The gate stays closed.`);
    case "quote":
      return new QuoteFailedError(message, { upstream: "timeout" });
    case "index":
      // An index read its deadline cancelled (RPC_TIMEOUT_MS below the index's own statement timeout): the database
      // did not answer in time, as the statement timeout says it (503, not a 500 and not an upstream RPC's 502).
      return new IndexUnavailableError("unreachable", undefined, {
        message: `The lock index did not answer within ${ms} ms.`,
        detail: { deadlineMs: ms },
      });
    default:
      return new StateReadFailedError(message, { upstream: "timeout" });
  }
}

/**
 * One overall deadline per request. When it passes, every upstream call the request still has open is
 * cancelled (the routes read through deadlineRpc(c, rpc)), so the route fails with
 * its own documented error for a cancelled read (STATE_READ_FAILED, QUOTE_FAILED, PREFLIGHT_READ_FAILED …).
 * If the route has not answered `graceMs` later (it was waiting on something else), `timeoutError`
 * answers for it. Either way the client has its answer within `ms + graceMs`.
 *
 * The same signal fires (reason HANG_UP) when the request's client closes the connection before its answer is
 * written: nobody will read the answer, so its RPC calls, its simulation and its index query are cancelled and
 * what it had not started is never sent (api_aborted_work_total counts them). Work shared with other requests (the
 * gate's preflight read, the supply cache's loads) is not bound to any one request, so it goes on for the others.
 */
export type DeadlineOptions = {
  ms: number;
  /** The route's documented error for a deadline it could not meet itself. */
  timeoutError: (c: AppContext, ms: number) => ApiError | ProtocolAnswerError;
  graceMs?: number;
};

/**
 * Pushes the request's deadline out by `ms`: a request that asked to wait for a block (`minBlock` with `waitMs`) is
 * given its wait on top of the deadline its reads have. Outside deadline(), nothing.
 */
export function extendDeadline(c: AppContext, ms: number): void {
  c.get("extendDeadline")?.(ms);
}

/** The request's cancel signal (under deadline()), else undefined. */
export function requestDeadline(c: AppContext): CancelSignal | undefined {
  return c.get("cancelSignal");
}

/**
 * The RpcClient a v1 route reads through: `rpc` with every call bound to the request's deadline, so the
 * route's reads — however many, however nested — end together when it passes and their connections to the
 * node are closed instead of left running. Outside deadline() (none set), `rpc` itself.
 */
export function deadlineRpc(c: AppContext, rpc: RpcClient | null): RpcClient | null {
  const signal = requestDeadline(c);
  return rpc && signal ? boundToDeadline(rpc, signal) : rpc;
}

export function deadline(o: DeadlineOptions): MiddlewareHandler<AppEnv> {
  const graceMs = o.graceMs ?? 250;
  return async (c, next) => {
    const signal = new CancelSource();
    const stopWatching = onHangUp(c, () => signal.abort(HANG_UP));
    let extraMs = 0;
    try {
      c.set("cancelSignal", signal);
      c.set("extendDeadline", (ms) => {
        extraMs += ms;
      });
      c.set("deadlineError", () => o.timeoutError(c, o.ms));
      await raceDeadline(next(), {
        ms: o.ms,
        extraMs: () => extraMs,
        graceMs,
        cancel: () => signal.abort(DEADLINE_REASON),
        // The route ends on its own (its reads are cancelled); its result is not wanted.
        timeoutError: () => o.timeoutError(c, o.ms),
      });
    } finally {
      stopWatching();
    }
  };
}
