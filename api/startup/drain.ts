/**
 * Graceful shutdown in front of Ponder's own. On SIGTERM Ponder 0.16 (bin/utils/exit.js) runs http-terminator
 * with a fixed 1 s grace: in-flight requests slower than that are cut, and the database closes at the same time.
 * This hook runs first instead:
 *
 * 1. the listening socket closes at once (new connections are refused, so a load balancer retries elsewhere)
 *    and idle keep-alive connections are closed;
 * 2. requests already in flight run to completion (their responses carry `connection: close`), bounded by
 *    SHUTDOWN_DRAIN_MS;
 * 3. then Ponder's own handlers run (terminator, database, indexer), which exit within their 5 s bound.
 *
 * The http.Server is not handed to the API file, so it is taken from the first request's socket.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../observability/logger";

export type GracefulDrain = {
  /** Mount before the app's routes: counts in-flight requests and finds the server. */
  middleware: MiddlewareHandler;
  readonly inFlight: number;
  readonly draining: boolean;
  /** Starts the drain (what the signal handler does); resolves when in-flight reached 0 or the bound passed. */
  drain(): Promise<void>;
};

export type InstallGracefulDrainParameters = {
  drainMs: number;
  logger: Logger;
  signals?: readonly NodeJS.Signals[];
};

export function installGracefulDrain({
  drainMs,
  logger,
  signals = ["SIGTERM", "SIGINT"],
}: InstallGracefulDrainParameters): GracefulDrain {
  let inFlight = 0;
  let server: Server | undefined;
  let drained: Promise<void> | undefined;
  let idle: (() => void) | undefined;

  const stopListening = () => {
    if (!server?.listening) return;
    const s = server;
    s.close();
    // Ponder's terminator closes the server again after us; on a closed server that is an error that would
    // fail Ponder's whole shutdown, so the second close just reports success.
    s.close = ((cb?: (err?: Error) => void) => {
      if (cb) process.nextTick(cb);
      return s;
    }) as Server["close"];
  };

  const drain = () => {
    if (drained) return drained;
    const started = performance.now();
    logger.info("shutdown: draining", { inFlight, drainMs });
    stopListening();
    drained = new Promise<void>((resolve) => {
      const done = (outcome: string) => {
        clearTimeout(timer);
        idle = undefined;
        logger.info("shutdown: drained", { outcome, inFlight, ms: Math.round(performance.now() - started) });
        resolve();
      };
      const timer = setTimeout(() => done("timeout"), drainMs);
      idle = () => done("complete");
      if (inFlight === 0) done("complete");
    });
    return drained;
  };

  runBeforeShutdown(drain, signals);

  const middleware: MiddlewareHandler = async (c, next) => {
    if (server === undefined) {
      const socket = (c.env as { incoming?: { socket?: Socket & { server?: unknown } } } | undefined)?.incoming?.socket;
      if (socket?.server && typeof (socket.server as Server).close === "function") server = socket.server as Server;
    }
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
      if (drained) {
        // A request that arrived on an open keep-alive connection is served, then its connection closes.
        try {
          c.header("connection", "close");
        } catch {
          // An immutable response (none of ours): its connection is closed by Ponder's terminator instead.
        }
        if (inFlight === 0) idle?.();
      }
    }
  };

  return {
    middleware,
    get inFlight() {
      return inFlight;
    },
    get draining() {
      return drained !== undefined;
    },
    drain,
  };
}

/**
 * Runs `first` (once) on the first of `signals`, then the handlers that were installed before this call —
 * Ponder's own shutdown (bin/utils/exit.js) in a Ponder process — or, when there were none, the signal's
 * default action. Later signals while `first` runs are ignored.
 */
export function runBeforeShutdown(
  first: () => Promise<void>,
  signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"],
): void {
  let started = false;
  for (const signal of signals) {
    const earlier = process.listeners(signal) as ((s: NodeJS.Signals) => void)[];
    process.removeAllListeners(signal);
    process.on(signal, async () => {
      if (started) return;
      started = true;
      await first();
      if (earlier.length === 0) {
        // Nobody else handles it: restore the default action (terminate).
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
        return;
      }
      for (const handler of earlier) handler(signal);
    });
  }
}
