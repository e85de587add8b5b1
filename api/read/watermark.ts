import { type CacheSource, CacheStats } from "../observability/cacheStats";
import type { IndexMark } from "./contract";

/**
 * How far the lock index is, kept current by one small poll per replica (the highest id minted and the
 * indexed block: LockStore.indexMark), so a repeat state read of a user need not ask the database at all.
 *
 * Why that is safe: a state answer's lock list is proven on chain at its block (ownerOf of every candidate
 * plus the user's NFT count: api/mcp/v1/snapshot.ts), wherever the candidates came from. The index only
 * nominates ids; for a user read before, the ids it nominated then (the route's hint) are tried first,
 * and only when the chain disproves them is the index asked again. What the watermark adds is the answer's
 * `indexedBlock` and the next mints to try, both as of a poll at most `maxAgeMs` old. A watermark whose
 * polls fail goes stale within `maxAgeMs`, and the route then asks the index per request again (and answers
 * `source: "rpc"` when that fails too).
 */
export type WatermarkOptions = {
  /** Between the end of one poll and the start of the next. */
  pollMs: number;
  /** A mark older than this (counted from when its poll was sent) is not used. */
  maxAgeMs: number;
  /** A poll that has not answered by then counts as failed. */
  timeoutMs: number;
  /**
   * A read unanswered this long is told as a failure. Longer than timeoutMs: the first poll opens the pool's
   * connection, which on a loaded machine takes longer than a poll's wait without anything failing (a connection
   * that cannot be made, or a query past its timeout, fails with an error, told at once).
   */
  stalledMs: number;
  /** Told why a poll failed (its error, or no answer within stalledMs): the index database's outage, for the log. */
  onFailure?: (cause: unknown) => void;
};

/**
 * A quarter of a Base block apart; a mark is trusted for four polls; a poll waits at most one; a read is an outage
 * after 2 s (the pool's connect and query timeouts, 500 ms and 2.5 s, fail it with an error anyway).
 */
export const WATERMARK_DEFAULTS: WatermarkOptions = { pollMs: 250, maxAgeMs: 1_000, timeoutMs: 250, stalledMs: 2_000 };

/** What the state route asks of a watermark. */
export type IndexWatermarkSource = {
  /** The mark if its poll was sent at most maxAgeMs ago, else undefined (never polled, or polls failing). */
  fresh(): IndexMark | undefined;
  /** For the metrics: a hit is a fresh() that found a fresh mark; entries, 1 while there is one. */
  readonly cache?: CacheSource;
  /** Tells `listener` every mark a poll brings (the `minBlock` waiters' news: api/read/headWatch.ts). */
  subscribe?(listener: (mark: IndexMark) => void): () => void;
};

export class IndexWatermark implements IndexWatermarkSource {
  readonly #read: () => Promise<IndexMark>;
  readonly #o: WatermarkOptions;
  #mark: IndexMark | undefined;
  /** performance.now() when the poll that produced #mark was sent. */
  #sentAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  /** The poll in flight, so stop() can wait for it. */
  #polling: Promise<void> = Promise.resolve();
  /** A read still unanswered (a late poll's): no second one is sent beside it, so a slow database gets one. */
  #reading: { mark: Promise<IndexMark | undefined>; sentAt: number } | undefined;

  constructor(read: () => Promise<IndexMark>, options: Partial<WatermarkOptions> = {}) {
    this.#read = read;
    this.#o = { ...WATERMARK_DEFAULTS, ...options };
  }

  /** Starts polling (the first poll at once); the timer never holds the process open. */
  start(): this {
    if (!this.#stopped) return this;
    this.#stopped = false;
    this.#polling = this.#poll();
    return this;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#polling;
  }

  readonly #listeners = new Set<(mark: IndexMark) => void>();

  subscribe(listener: (mark: IndexMark) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  readonly #stats = new CacheStats();
  readonly cache: CacheSource = { stats: this.#stats, entries: () => (this.#current() ? 1 : 0) };

  fresh(): IndexMark | undefined {
    const mark = this.#current();
    if (mark) this.#stats.hits++;
    else this.#stats.misses++;
    return mark;
  }

  #current(): IndexMark | undefined {
    return performance.now() - this.#sentAt <= this.#o.maxAgeMs ? this.#mark : undefined;
  }

  async #poll(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, this.#o.timeoutMs, undefined);
    });
    try {
      // A failed or late poll changes nothing: the last mark ages out on its own.
      if (this.#reading === undefined) {
        const reading = {
          sentAt: performance.now(),
          mark: Promise.resolve()
            .then(() => this.#read())
            .catch((error: unknown) => {
              this.#o.onFailure?.(error);
              return undefined;
            }),
        };
        this.#reading = reading;
        void reading.mark.then(() => {
          if (this.#reading === reading) this.#reading = undefined;
        });
      }
      const { mark: answer, sentAt } = this.#reading;
      const mark = await Promise.race([answer, late]);
      if (mark === undefined && this.#reading !== undefined && performance.now() - sentAt >= this.#o.stalledMs) {
        this.#o.onFailure?.(new Error(`no answer within ${this.#o.stalledMs} ms`));
      }
      // The mark is as fresh as the moment its read was sent, whichever poll waited for it.
      if (mark !== undefined && sentAt > this.#sentAt) {
        this.#mark = mark;
        this.#sentAt = sentAt;
        for (const listener of this.#listeners) listener(mark);
      }
    } finally {
      clearTimeout(timer);
      if (!this.#stopped) {
        this.#timer = setTimeout(() => {
          this.#polling = this.#poll();
        }, this.#o.pollMs);
        this.#timer.unref();
      }
    }
  }
}
