/**
 * Waiting for a block (`minBlock` with `waitMs`, issue 32): how far something is — the index (its head) or the node
 * (eth_blockNumber, the state route) — and the requests waiting for it to reach a block. However many wait, there is
 * one source of news: the index's watermark (api/read/watermark.ts) where the process has one, else one shared poll
 * that runs only while someone waits (never one per waiting request); and every head an answer read on its way is
 * news too. A waiter leaves when the block is reached, when its time is up, or when its request is cancelled (its
 * deadline, its client's hang-up: api/http/cancellation.ts). At most `maxWaiters` wait at once; past that a request
 * is answered at once (its caller's 409, with a retry time) instead of holding memory and a timer.
 */
import type { CancelSignal } from "../chain/rpc";

export type HeadWatchOptions = {
  /** Reads the head; null while there is none (an index not started). Without it, news comes only from saw(). */
  read?: () => Promise<bigint | null>;
  /** Between the end of one poll and the start of the next (only while someone waits). */
  pollMs?: number;
  /** Requests that may wait at once. */
  maxWaiters?: number;
  /** Told how each wait ended (the metrics' api_min_block_waits_total). */
  onWait?: (outcome: WaitOutcome) => void;
  /**
   * The index's signal (api/read/indexSignal.ts), followed while anyone waits: a committed head reaches the waiters
   * as it is notified, not at the next poll of the watermark. Returns its unsubscribe.
   */
  follow?: (listener: (head: bigint) => void) => () => void;
  /**
   * The newest head heard as committed (the notified head, while fresh: api/read/notifiedHead.ts), asked as a waiter
   * comes: a commit notified while nobody waited (the signal is followed only then) is news `latest` never had, and a
   * request for its block would otherwise wait for the watermark's next poll (≤ 250 ms) or the next block's commit.
   */
  heard?: () => bigint | undefined;
};

export type WaitOutcome = "reached" | "timeout" | "full" | "cancelled";

type Waiter = { block: bigint; done: (outcome: WaitOutcome) => void };

export const HEAD_WATCH_DEFAULTS = { pollMs: 250, maxWaiters: 1_000 } as const;

export class HeadWatch {
  readonly #read: HeadWatchOptions["read"];
  readonly #pollMs: number;
  readonly #maxWaiters: number;
  readonly #onWait: HeadWatchOptions["onWait"];
  readonly #follow: HeadWatchOptions["follow"];
  readonly #heard: HeadWatchOptions["heard"];
  #unfollow: (() => void) | undefined;
  readonly #waiters = new Set<Waiter>();
  #latest = -1n;
  #polling = false;
  /** Polls run (for tests and the metrics: one per pollMs while anyone waits, whatever their number). */
  polls = 0;

  constructor(options: HeadWatchOptions = {}) {
    this.#read = options.read;
    this.#pollMs = options.pollMs ?? HEAD_WATCH_DEFAULTS.pollMs;
    this.#maxWaiters = options.maxWaiters ?? HEAD_WATCH_DEFAULTS.maxWaiters;
    this.#onWait = options.onWait;
    this.#follow = options.follow;
    this.#heard = options.heard;
  }

  /** The head last reported, or null before any. */
  get latest(): bigint | null {
    return this.#latest < 0n ? null : this.#latest;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * News of a head (a poll's, the watermark's, an answer's): the waiters it reaches go on. The last report is kept,
   * not the highest: after a reorg took the head back, a request for a block above it waits instead of reading the
   * index again at once. (A report a moment old can only delay a waiter until the next one.)
   */
  saw(head: bigint | null): void {
    if (head === null) return;
    this.#latest = head;
    for (const w of this.#waiters) if (w.block <= head) w.done("reached");
  }

  /**
   * Whether a new waiter would be refused now, too many waiting already: then told as a "full" wait, so its caller
   * answers at once — before it asks anything (the chain's head, the index) for a wait that will not be.
   */
  refusesNew(): boolean {
    if (this.#waiters.size < this.#maxWaiters) return false;
    this.#onWait?.("full");
    return true;
  }

  /** Resolves once the head is at `block` or above, or `ms` passed, or `signal` fired, or too many wait already. */
  async wait(block: bigint, ms: number, signal?: CancelSignal): Promise<WaitOutcome> {
    const outcome = await this.#wait(block, ms, signal);
    this.#onWait?.(outcome);
    return outcome;
  }

  #wait(block: bigint, ms: number, signal?: CancelSignal): Promise<WaitOutcome> {
    if (block <= this.#latest) return Promise.resolve("reached");
    const heard = this.#heard?.();
    if (heard !== undefined && block <= heard) return Promise.resolve("reached");
    if (signal?.aborted) return Promise.resolve("cancelled");
    if (ms <= 0) return Promise.resolve("timeout");
    if (this.#waiters.size >= this.#maxWaiters) return Promise.resolve("full");
    return new Promise((resolve) => {
      const onAbort = () => waiter.done("cancelled");
      const timer = setTimeout(() => waiter.done("timeout"), ms);
      const waiter: Waiter = {
        block,
        done: (outcome) => {
          if (!this.#waiters.delete(waiter)) return;
          if (this.#waiters.size === 0) {
            this.#unfollow?.();
            this.#unfollow = undefined;
          }
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener("abort", onAbort);
      if (this.#follow && !this.#unfollow) this.#unfollow = this.#follow((head) => this.saw(head));
      this.#startPolling();
    });
  }

  /** One loop for every waiter, from the first waiter until the last leaves. */
  #startPolling(): void {
    if (this.#polling || !this.#read) return;
    this.#polling = true;
    const read = this.#read;
    void (async () => {
      try {
        while (this.#waiters.size > 0) {
          this.polls++;
          // A failed poll changes nothing: the waiters time out on their own.
          this.saw(await read().catch(() => null));
          if (this.#waiters.size === 0) break;
          await new Promise((r) => setTimeout(r, this.#pollMs).unref());
        }
      } finally {
        this.#polling = false;
      }
    })();
  }
}
