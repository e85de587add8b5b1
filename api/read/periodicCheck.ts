/**
 * A check the read model runs now and then for the process's life (the branch check, the index's source, the chain's
 * finality: api/read/branchCheck.ts, indexSource.ts, chainFinality.ts). One run at a time: a caller while it runs joins
 * it, so a timer tick and a request's first read never send two. A failure (the node or the index away) is swallowed:
 * the run changes nothing, and the next one retries. The timer never holds the process.
 */
export class PeriodicCheck {
  readonly #run: () => Promise<void>;
  #running: Promise<void> | null = null;

  /** `run`: one check, async (it must not throw before its first await: the failure is its promise's). */
  constructor(run: () => Promise<void>) {
    this.#run = run;
  }

  /** One run, or the one running; settles when it ends and never rejects. */
  check(): Promise<void> {
    this.#running ??= this.#run()
      .catch(() => {})
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  /** Runs every `ms` until the returned function is called. */
  start(ms: number): () => void {
    const timer = setInterval(() => void this.check(), ms);
    timer.unref();
    return () => clearInterval(timer);
  }
}
