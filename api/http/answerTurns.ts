/**
 * Large answers are built and written one per turn of the event loop (paced process-wide with the turnstile's
 * starts: api/http/loopPacer.ts). The turnstile (api/server/turnstile.ts) starts one heavy request per turn, but a
 * started request then waits on I/O (its body, the rate limit's Redis round trip), and such waits can end together
 * (one Redis read resolves every reply it carries), so several 840 kB MCP batch answers could be written back to
 * back in one turn while a cached GET waited behind them. Here an answer of `minBytes` or more waits for its turn
 * (FIFO, one per loop iteration, after the poll phase has served the sockets that are ready), then is handed to the
 * socket within that turn: a cheap request waits behind at most one large answer. What waits holds no copy of its
 * bytes (the parts are shared, api/mcp/gatekeeper.ts). Measured under a distributed flood (bench/abuse-memory.ts):
 * the other client's p99 5 ms with it, 11 ms without; the API's event-loop delay at most 24 ms with it, 40 ms without.
 *
 * The equivalent of a global limit on concurrent large writes (nginx's limit_conn, Envoy's overload
 * manager shedding by priority), with queueing instead of refusal: every answer is still sent, in order.
 */
import { pace } from "./loopPacer";

/** Answers at least this large take turns: a batch of tools/list (840 kB) does, an envelope (a few kB) does not. */
export const LARGE_ANSWER_BYTES = 64 * 1024;

/**
 * Index pages of at least this many rows take turns to be built (REST: api/index/answer.ts; GraphQL:
 * api/graphql/scope.ts): ~450 bytes of JSON an event, ~300 a lock, so about LARGE_ANSWER_BYTES from here.
 */
export const LARGE_PAGE_ROWS = 128;

export type AnswerTurns = {
  /** Resolves in a turn of its own, or at once for an answer under the threshold. */
  turnFor(bytes: number): Promise<void>;
  /** Answers waiting for their turn now. */
  waiting(): number;
};

export function answerTurns(minBytes = LARGE_ANSWER_BYTES): AnswerTurns {
  const queue: (() => void)[] = [];
  let head = 0;
  let scheduled = false;
  // One waiter per turn: its continuation (build, write) runs in the microtasks right after this callback; the next
  // turn, of any queue, comes in a later loop iteration, after the next poll (api/http/loopPacer.ts).
  const turn = () => {
    scheduled = false;
    const next = queue[head];
    if (next === undefined) return;
    queue[head++] = undefined as never;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    }
    next();
    if (head < queue.length) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    pace(turn);
  };
  return {
    turnFor(bytes) {
      if (bytes < minBytes) return Promise.resolve();
      return new Promise<void>((resolve) => {
        queue.push(resolve);
        schedule();
      });
    },
    waiting: () => queue.length - head,
  };
}
