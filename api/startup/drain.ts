/**
 * Shutdown order in a Ponder process that serves the API (`npm start`, src/api/index.ts): on SIGTERM / SIGINT
 * Ponder 0.17 (bin/utils/exit.js, as 0.16) would stop its HTTP server, database and indexer within a fixed few seconds,
 * cutting in-flight requests. Our own server's drain (api/server/server.ts: stop accepting, let in-flight
 * requests finish within SHUTDOWN_DRAIN_MS) runs first instead; Ponder's handlers run after it.
 */

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
