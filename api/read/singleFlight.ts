/**
 * Work shared by the callers that ask for it while it runs (single flight): one promise per key, forgotten when it
 * settles, so a caller arriving later starts it again. GraphQL shares identical requests' executions with it
 * (api/graphql/endpoint.ts), the read model the re-read of `minBlock` waiters released by the same head
 * (api/read/runtime.ts). Looking up and claiming a key happen in one synchronous step: callers started in the same
 * tick find the first one's work.
 */
export class SingleFlight<T> {
  readonly #running = new Map<string, Promise<T>>();

  /** The work running under `key`, if any. */
  running(key: string): Promise<T> | undefined {
    return this.#running.get(key);
  }

  /** Keys running now. */
  get size(): number {
    return this.#running.size;
  }

  /**
   * `work` started now, and kept under `key` until it settles — unless other work already is (then this one runs on
   * its own, shared with no one).
   */
  start(key: string, work: () => Promise<T>): Promise<T> {
    const mine = work();
    if (!this.#running.has(key)) {
      this.#running.set(key, mine);
      const done = () => {
        if (this.#running.get(key) === mine) this.#running.delete(key);
      };
      mine.then(done, done);
    }
    return mine;
  }

  /** The work running under `key`, or `work` started under it. */
  share(key: string, work: () => Promise<T>): Promise<T> {
    return this.#running.get(key) ?? this.start(key, work);
  }
}
