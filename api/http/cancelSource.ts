import type { CancelSignal } from "../chain/rpc";

/**
 * A CancelSignal its owner fires: the `aborted` flag, `reason` and "abort" listeners of an AbortController's signal,
 * without its cost — Node builds every AbortSignal as a transferable EventTarget, about 2% of a state answer's CPU,
 * for a signal that never leaves the request. A request's deadline (api/http/deadline.ts) is one. A listener added
 * after the abort never runs, as with an AbortSignal.
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
