/**
 * How many index rows GraphQL requests and the REST histories may have in flight in this process at once (one
 * budget, made in api/app.ts; a history holds its `limit` + 1 from before its statement until its page is built,
 * api/index/answer.ts withRows). A GraphQL request's rows are judged
 * before it runs (api/graphql/plan.ts: the sum of its lists' `limit`s, one per `lock`); it waits here, FIFO, until
 * they fit, and holds them from its first index read until its answer is encoded. What a request holds meanwhile
 * grows with its rows (the rows read, the result tree, the JSON), so this bounds the memory of every execution
 * together however many clients ask at once — 50 clients each asking 1,000 events and never reading their answers
 * held 50 executions at a time (+141 MB). The wait counts toward the request's 2 s; a request that runs out of time
 * while waiting leaves the queue and is answered EXECUTION_TIMEOUT, having read nothing.
 *
 * A weighted semaphore (as golang.org/x/sync/semaphore): a request larger than the whole budget is admitted alone.
 */

import type { CancelSignal } from "../chain/rpc";

export type Admission = {
  /** Resolves once `weight` fits (then call the release it gives exactly once); rejects if `signal` fires first. */
  acquire(weight: number, signal?: CancelSignal): Promise<() => void>;
  /** Weight held now, and requests waiting. */
  inFlight(): number;
  waiting(): number;
};

type Waiter = { weight: number; grant: () => void };

export function admission(capacity: number): Admission {
  let held = 0;
  const queue: Waiter[] = [];

  const releaser = (weight: number) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held -= weight;
      drain();
    };
  };
  const fits = (weight: number) => held === 0 || held + weight <= capacity;
  // FIFO: the head waits for room even if one behind it would fit, so a large request is never starved.
  const drain = () => {
    while (queue.length > 0 && fits(queue[0]!.weight)) {
      const next = queue.shift()!;
      held += next.weight;
      next.grant();
    }
  };

  return {
    acquire(weight, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
      if (queue.length === 0 && fits(weight)) {
        held += weight;
        return Promise.resolve(releaser(weight));
      }
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          drain(); // the head may have been what held the others back
          reject(signal?.reason ?? new Error("aborted"));
        };
        const waiter: Waiter = {
          weight,
          grant: () => {
            signal?.removeEventListener("abort", onAbort);
            resolve(releaser(weight));
          },
        };
        queue.push(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    inFlight: () => held,
    waiting: () => queue.length,
  };
}
