/**
 * The index's head as its commits are notified (LISTEN/NOTIFY: api/read/indexSignal.ts), for the answers computed once
 * per block (the ve board and its rank lookups, the stats, the duration boards, GraphQL): a request naming no block
 * is pinned to it without a statement of its own. Each such request used to probe the head first (one statement on
 * the index's pool) although the process had been told that head by the commit itself; the probe was the only
 * statement of a head board page, rank or stats answered from memory, and the first request after a pause paid the
 * database connection's wake-up on it too (`bench/first-reader.ts`).
 *
 * A notified head is Ponder's committed checkpoint: the block's rows are readable when it arrives, never before, and a
 * reorg's lower head arrives the same way (the memos forget what it replaced: runtime.ts forgetOnReorg). It is used
 * only while it is fresh: the LISTEN connection is up and the head was notified (with its checkpoint's time) within
 * `freshMs`. A head heard any other way (the signal's poll, a head that moved without a notification: the trigger
 * gone) makes the next request probe, until a notification comes again; so a silent trigger can hold head answers
 * back by at most `freshMs`, and an indexer that stopped committing costs a probe per request as before. A request
 * with `minBlock` above the notified head probes (and waits) as before. What is not kept: linearizability with the
 * commit itself — a request that arrives between a commit and its notification (a fraction of a millisecond, a few ms
 * on a busy machine) is answered at the block before, which its answer names (a client that must see block N asks
 * `minBlock=N`).
 */
import type { IndexSignalSource } from "./indexSignal";

/** A Base block and a half: Ponder commits a checkpoint for every block it indexes (one every 2 s on Base). */
export const NOTIFIED_HEAD_FRESH_MS = 3_000;

export type NotifiedHeadOptions = { freshMs?: number; now?: () => number };

/** How many heads' write counts are remembered (a reader pinned a head or two before the newest still finds its own). */
const WRITES_KEPT = 8;

export class NotifiedHead {
  #last: { block: bigint; time: bigint; at: number } | undefined;
  /** The lock events' write count each recent notified head carried (indexSignal.ts), newest last. */
  readonly #writes: { block: bigint; writes: string | undefined; carried?: string }[] = [];
  readonly #signal: Pick<IndexSignalSource, "listening">;
  readonly #freshMs: number;
  readonly #now: () => number;

  constructor(signal: Pick<IndexSignalSource, "subscribe" | "listening">, options: NotifiedHeadOptions = {}) {
    this.#signal = signal;
    this.#freshMs = options.freshMs ?? NOTIFIED_HEAD_FRESH_MS;
    this.#now = options.now ?? (() => performance.now());
    // A head told without its time was polled, not notified: not used until the next notification.
    signal.subscribe((block, time, reverted, writes, carried) => {
      this.#last = time === undefined ? undefined : { block, time, at: this.#now() };
      // A reorg (told, or a head going back) makes every count kept before it another branch's.
      const newest = this.#writes.at(-1);
      if (reverted !== undefined || (newest !== undefined && block <= newest.block)) this.#writes.length = 0;
      this.#writes.push(
        time === undefined ? { block, writes: undefined } : { block, writes, ...(carried ? { carried } : {}) },
      );
      if (this.#writes.length > WRITES_KEPT) this.#writes.shift();
    });
  }

  /** The write count notified with `block`'s commit, while it is one of the last heads told (none when polled). */
  writesAt(block: bigint): string | undefined {
    return this.#toldAt(block)?.writes;
  }

  /** The lock events notified with `block`'s commit ("<rewrites>:<old block>:<rows>": indexSignal.ts), while it is kept. */
  carriedAt(block: bigint): string | undefined {
    return this.#toldAt(block)?.carried;
  }

  /** What `block`'s notification told, while it is one of the heads kept (newest last, so searched from the end). */
  #toldAt(block: bigint): { writes: string | undefined; carried?: string } | undefined {
    for (let i = this.#writes.length - 1; i >= 0; i--) {
      const told = this.#writes[i]!;
      if (told.block === block) return told;
      if (told.block < block) return undefined;
    }
    return undefined;
  }

  /** The newest head told and its write count (undefined when it was polled or carried none). */
  get lastWrites(): { block: bigint; writes: string | undefined } | undefined {
    return this.#writes.at(-1);
  }

  /**
   * The index was found below the notified head (a statement pinned to it read past the index's head: the views
   * schema now names a deployment that is behind): head reads probe until the next notification.
   */
  distrust(): void {
    this.#last = undefined;
  }

  /** The last notified head, while the signal listens and it is at most `freshMs` old; else undefined (probe). */
  fresh(): { block: bigint; time: bigint } | undefined {
    const last = this.#last;
    if (last === undefined || !this.#signal.listening || this.#now() - last.at > this.#freshMs) return undefined;
    return { block: last.block, time: last.time };
  }
}
