import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The deadline of the request the current code runs for, as an AbortSignal carried by the async context.
 * The HTTP layer opens it (api/http/deadline.ts); the RPC client honours it on every call, so each route's
 * reads — however many, however nested — end together when the route's one overall deadline passes, and
 * their connections to the node are closed instead of left running.
 */
const current = new AsyncLocalStorage<AbortSignal>();

export function requestSignal(): AbortSignal | undefined {
  return current.getStore();
}

export function runWithSignal<T>(signal: AbortSignal, work: () => T): T {
  return current.run(signal, work);
}
