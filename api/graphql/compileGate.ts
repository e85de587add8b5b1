/**
 * New documents, a few at a time. A document not in the cache (api/graphql/documentCache.ts) is parsed, validated
 * and compiled by graphql-jit before it runs: milliseconds of CPU that block the event loop, against microseconds
 * for a cached one. A flood of new documents from 400 addresses, each request inside its own budget, took another
 * client's /health p99 from 13 to 672 ms (issue 30). So a request with a new document holds one of `inFlight`
 * permits from before its parse until its compiled query first runs (its first read of the index, or its end):
 * compilations run one (by default) per turn of the event loop, and every other request is served between them;
 * and after each, the gate rests seven times as long as the permit was held (a flood of new documents from 400
 * addresses otherwise kept it compiling, one after another, and a cached 1-row query waited 2.3 s). The permit does
 * not hold all a new document costs: V8 compiles graphql-jit's generated code when it first runs, after the permit,
 * and the collector frees the compilation's garbage later. A CPU profile of that flood at Base scale, resting three
 * times as long: the process 90 % busy, 2.8 s of 11 in parse, validation and graphql-jit, ~1.4 s more in the
 * generated code's first runs and the collector; another client's `/health` p99 53–61 ms and its cached query's
 * 104–182 ms. Resting seven times as long (an eighth of the time by the permits, about a quarter in all): see
 * docs/benchmarks.md (abuse-soak).
 * Waiters queue in arrival order, at most `queue` of them, for at most `waitMs`; past either the request is
 * answered 503 COMPILE_QUEUE_FULL with `Retry-After`, having cost nothing (nginx's limit_req with `burst`, refusing
 * past it). A request arriving while the rest owed is longer than `waitMs` is refused at once, its `Retry-After`
 * the seconds until the next permit. Cached documents never wait here.
 */
import { CancelledError, type CancelSignal } from "../chain/rpc";
import { admission } from "../read/admission";

export type CompileGateOptions = {
  inFlight: number;
  queue: number;
  waitMs: number;
  /**
   * The share of the event loop's time the permits may take (0–1; default 0.125): after a permit held for `d` ms,
   * the next is granted no sooner than d × (1 / share − 1) ms later. A permit is held through the compilation's
   * synchronous work, so this bounds how much of every second new documents take from everyone else.
   */
  share?: number;
};

/** A request with a new document that found no permit in time (the queue full, or its wait over). */
export class CompileQueueFull extends Error {
  constructor(readonly retryAfterSec: number) {
    super("The server is compiling other new documents; retry, or send a document it has run before.");
  }
}

/** The permits take at most an eighth of the event loop's time: with what follows them, about a quarter. */
const DEFAULT_SHARE = 0.125;

export type CompileGate = {
  /** A permit to parse, validate and compile (call the release it gives; more than once is harmless). */
  enter(signal?: CancelSignal): Promise<() => void>;
  /** Compilations holding a permit, and requests waiting for one. */
  inFlight(): number;
  waiting(): number;
};

export function compileGate(o: CompileGateOptions): CompileGate {
  const permits = admission(o.inFlight);
  const retryAfterSec = Math.max(1, Math.ceil(o.waitMs / 1000));
  const rest = 1 / (o.share ?? DEFAULT_SHARE) - 1;
  /** When the next permit may be granted (the rest owed for the last one's time). */
  let nextAt = 0;
  /** A permit, once the rest owed since the last has passed; its release owes rest for the time it was held. */
  const rested = async (signal: AbortSignal): Promise<() => void> => {
    const release = await permits.acquire(1, signal);
    const wait = nextAt - performance.now();
    if (wait > 0) {
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, wait);
          signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
        });
      } catch (error) {
        release();
        throw error;
      }
    }
    const from = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      nextAt = Math.max(nextAt, performance.now() + (performance.now() - from) * rest);
      release();
    };
  };
  return {
    async enter(signal) {
      if (permits.inFlight() >= o.inFlight && permits.waiting() >= o.queue) throw new CompileQueueFull(retryAfterSec);
      // Rest owed past the wait (a slow compile, e.g. the process's first): refused now, not after waiting for
      // nothing, and told when the next permit can be granted.
      const owed = nextAt - performance.now();
      if (owed >= o.waitMs) throw new CompileQueueFull(Math.max(retryAfterSec, Math.ceil(owed / 1000)));
      const waited = new AbortController();
      const timer = setTimeout(() => waited.abort(new CompileQueueFull(retryAfterSec)), o.waitMs);
      // An Error, not the signal's reason (a string, "hang-up" or "deadline"): Hono's handler takes only Errors, and
      // rethrew a string past it to @hono/node-server's own bare 500.
      const onAbort = () => waited.abort(new CancelledError("cancelled while waiting for a compile permit"));
      signal?.addEventListener("abort", onAbort, { once: true });
      if (signal?.aborted) onAbort();
      try {
        return await rested(waited.signal);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      }
    },
    inFlight: permits.inFlight,
    waiting: permits.waiting,
  };
}
