/**
 * Noticing that a request's client hung up (closed its connection before the answer was written): the v1 deadline
 * (api/http/deadline.ts) then cancels the request's work, and the request log records it as 499.
 *
 * Served by @hono/node-server, a request's env holds `outgoing`, Node's ServerResponse: it emits "close" when the
 * connection closes, after the answer or before it (@hono/node-server 1.19.5 aborts `c.req.raw.signal` from the same
 * event; listening here avoids building the full Request and its AbortSignal for every request). An in-process request
 * made for a served one (an MCP tool call: api/mcp/server.ts) carries that request's hang-up as a CancelSignal under
 * PARENT_HANG_UP instead: one listener on the connection, however many tool calls a batch makes.
 */
import type { Context } from "hono";
import type { CancelSignal } from "../chain/rpc";

/** As much of Node's ServerResponse as noticing a hang-up needs. */
type AnswerStream = {
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  once(event: "close", listener: () => void): unknown;
  off(event: "close", listener: () => void): unknown;
};

/** Env key of an in-process request: fires when the client of the served request it is made for hangs up. */
export const PARENT_HANG_UP = Symbol("hang-up of the served request an in-process request is made for");

type Env = ({ outgoing?: AnswerStream } & Record<symbol, unknown>) | undefined;

/** Calls `listener` once if the request's client hangs up; returns the function that stops watching. */
export function onHangUp(c: Context, listener: () => void): () => void {
  const env = c.env as Env;
  const stream = env?.outgoing;
  if (stream) {
    // "close" also follows an answer written in full: only a close before that is a hang-up.
    const closed = () => {
      if (!stream.writableFinished) listener();
    };
    stream.once("close", closed);
    return () => stream.off("close", closed);
  }
  const parent = env?.[PARENT_HANG_UP] as CancelSignal | undefined;
  if (!parent) return () => {};
  parent.addEventListener("abort", listener);
  return () => parent.removeEventListener("abort", listener);
}

/** Whether the request's client has gone before its answer was written. */
export function clientGone(c: Context): boolean {
  const env = c.env as Env;
  const stream = env?.outgoing;
  if (stream) return stream.destroyed && !stream.writableFinished;
  return (env?.[PARENT_HANG_UP] as CancelSignal | undefined)?.aborted === true;
}
