import type { Context, MiddlewareHandler } from "hono";
import { boundToDeadline, type CancelSignal, HANG_UP, type RpcClient } from "../chain/rpc";
import { CancelSource } from "./cancelSource";
import { type ApiError, PreflightReadFailedError, QuoteFailedError, StateReadFailedError } from "./errors";
import { onHangUp } from "./hangUp";
import { limitedPrefix } from "./rateLimit";

/** The v1 routes' overall deadline: min(RPC_TIMEOUT_MS, this). An assistant waits no longer for any answer. */
export const V1_DEADLINE_CAP_MS = 10_000;

export function v1DeadlineMs(rpcTimeoutMs: number): number {
  return Math.min(rpcTimeoutMs, V1_DEADLINE_CAP_MS);
}

/** What a v1 route answers when its deadline passes before it could answer for itself. */
export function v1TimeoutError(c: Context, ms: number): ApiError {
  const message = `The upstream reads did not complete within ${ms} ms.`;
  switch (limitedPrefix(c.req.path)) {
    case "preflight":
      return new PreflightReadFailedError(`${message} The gate stays closed.`);
    case "quote":
      return new QuoteFailedError(message, { upstream: "timeout" });
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
  timeoutError: (c: Context, ms: number) => ApiError;
  graceMs?: number;
};

/** Context key: the request's deadline signal, set by deadline(). */
const DEADLINE = "deadlineSignal" as never;

/** The request's deadline signal (under deadline()), else undefined. */
export function requestDeadline(c: Context): CancelSignal | undefined {
  return c.get(DEADLINE) as CancelSignal | undefined;
}

/**
 * The RpcClient a v1 route reads through: `rpc` with every call bound to the request's deadline, so the
 * route's reads — however many, however nested — end together when it passes and their connections to the
 * node are closed instead of left running. Outside deadline() (none set), `rpc` itself.
 */
export function deadlineRpc(c: Context, rpc: RpcClient | null): RpcClient | null {
  const signal = requestDeadline(c);
  return rpc && signal ? boundToDeadline(rpc, signal) : rpc;
}

export function deadline(o: DeadlineOptions): MiddlewareHandler {
  const graceMs = o.graceMs ?? 250;
  return async (c, next) => {
    const signal = new CancelSource();
    const stopWatching = onHangUp(c, () => signal.abort(HANG_UP));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => {
        signal.abort("deadline");
        timer = setTimeout(() => resolve("expired"), graceMs);
      }, o.ms);
    });
    try {
      c.set(DEADLINE, signal as never);
      const handled = next();
      if ((await Promise.race([handled, expired])) === "expired") {
        handled.catch(() => {}); // it ends on its own (its reads are cancelled); its result is not wanted
        throw o.timeoutError(c, o.ms);
      }
    } finally {
      clearTimeout(timer);
      stopWatching();
    }
  };
}
