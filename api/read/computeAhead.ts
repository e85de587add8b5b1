/**
 * Computing a new head's whole-index answers ahead of its first reader. The ve ranking and the stats are functions of
 * the block (ve decays with time), computed once per block when first asked for (blockMemo.ts). At the head that
 * first reader used to wait the whole computation — at Base scale 0.4–0.5 s, every block — while the readers after it
 * got the answer from memory in a millisecond.
 *
 * So while an answer is being read at the head, each new head the index signals (indexSignal.ts: once per indexed
 * block, when its rows are committed) is computed at once, in the head's lane, before anyone asks: the first reader
 * finds it done, or joins the computation already under way. Bounded three ways:
 * - only an answer read at one of the last AHEAD_BLOCKS heads (or later) is computed for the next: a reader every
 *   block, or every few blocks (a front end refreshing every 10 s, a dashboard switching between the board and the
 *   stats), keeps it ahead; a read once a minute costs at most AHEAD_BLOCKS computations more than it did, not one
 *   per block (28 boards each read once a minute computed every block: ~4 % of a core at Base scale, derived); a
 *   process whose answers nobody read for `idleMs` stops following the signal;
 * - one head at a time: a head signalled while the last is still computing replaces any head waiting behind it, so
 *   a burst of blocks (catching up) computes the newest, not each;
 * - with Redis the replicas share one computation per block (sharedAnswers.ts' lock), computed ahead or not.
 *
 * The head's lane runs one computation at a time (computeGate.ts laneSlots), so the order matters: a front end that
 * reads the ve board first and then the 28 duration boards would otherwise wait for all 28 derivations before its
 * first page. The answers read at the newest head are asked for first, in the order their readers first asked there;
 * then those read at older heads.
 *
 * What a reader makes of an answer (a page's text: the ve board's first 100 rows with their exact values, EIP-55
 * addresses and signed cursor, ~2 ms at Base scale) is made ahead too when a reader made it at the head (`follow`):
 * once the next head's answer is computed, before its first reader's continuation runs, so that reader is answered
 * from text as a repeat is. Where the answer itself is made before its block (the ve board's next ranking, made
 * between heads: `madeAhead`), so is what is made of it, and the block's commit has nothing of it left to make. At
 * most FOLLOWED_PER_ANSWER per answer (the keys readers made last; a request chooses its page's size), each forgotten
 * with its answer.
 */
import { BoundedMap } from "../cache/boundedMap";
import type { IndexSignalSource } from "./indexSignal";

/** What is computed ahead: a memo of answers per block (BlockMemo), asked for in the head's lane. */
export type AheadMemo<T = unknown> = {
  readonly name: string;
  get(at: { block: bigint; time: bigint }, lane: "head"): Promise<T>;
};

/** How many things made of one answer (pages of different sizes) are made ahead with it: the last ones made. */
export const FOLLOWED_PER_ANSWER = 2;

export type ComputeAheadOptions = {
  signal: IndexSignalSource;
  /** The index's head now, with its block time (one statement: LockIndex.probe), when the signal did not tell its time. */
  head: () => Promise<{ block: bigint; time: bigint }>;
  /** An answer not read at the head for this long is no longer computed ahead; default 60 s. */
  idleMs?: number;
  /** An answer last read at the head this many heads before a new one is computed for it; default AHEAD_BLOCKS. */
  blocks?: number;
  now?: () => number;
  /** Told each answer computed ahead (or found computed) and each failure (counted; the reader will try again). */
  onAhead?: (name: string, outcome: "ok" | "error") => void;
};

export const AHEAD_IDLE_MS = 60_000;
/** How many heads after its last read at the head an answer is still computed ahead (16 s of Base's blocks). */
export const AHEAD_BLOCKS = 8;

export class ComputeAhead {
  /**
   * Each memo read at the head: the last head block it was read at, when, and the order of its first read at that
   * block among all memos' (a counter), which orders the next head's computations.
   */
  readonly #read = new Map<AheadMemo, { block: bigint; at: number; order: number }>();
  #reads = 0;
  readonly #idleMs: number;
  readonly #blocks: bigint;
  readonly #now: () => number;
  #unsubscribe: (() => void) | undefined;
  /** The head being computed ahead, and the newest signalled behind it (null: none waiting). */
  #running = false;
  #waiting: { block: bigint; time?: bigint } | null = null;
  /** Per memo, what readers made of its answer at the head (follow), by key, the last made last. */
  readonly #followers = new Map<AheadMemo, BoundedMap<string, (value: unknown) => void>>();

  constructor(readonly options: ComputeAheadOptions) {
    this.#idleMs = options.idleMs ?? AHEAD_IDLE_MS;
    this.#blocks = BigInt(options.blocks ?? AHEAD_BLOCKS);
    this.#now = options.now ?? Date.now;
  }

  /** Whether the signal is being followed now (some answer was read at the head lately). */
  get following(): boolean {
    return this.#unsubscribe !== undefined;
  }

  /** A reader asked for `memo`'s answer at head `block`: compute the next head's ahead of its readers. */
  readAtHead(memo: AheadMemo, block: bigint): void {
    const last = this.#read.get(memo);
    const newer = last === undefined || block > last.block;
    this.#read.set(memo, {
      block: newer ? block : last.block,
      at: this.#now(),
      order: newer ? ++this.#reads : last.order,
    });
    this.#unsubscribe ??= this.options.signal.subscribe((block, time) => this.#signalled(block, time));
  }

  /**
   * A reader made `key` of `memo`'s answer at the head (a page's text, kept beside the answer): make it of each next
   * head's answer as soon as that is computed ahead, while the memo is followed. `make` must be what the reader runs
   * (the same key, the same text) and keep its result where the reader will look; a throw is counted as an error.
   */
  follow<T>(memo: AheadMemo<T>, key: string, make: (value: T) => void): void {
    let made = this.#followers.get(memo as AheadMemo);
    if (made === undefined) {
      made = new BoundedMap(FOLLOWED_PER_ANSWER, "recency");
      this.#followers.set(memo as AheadMemo, made);
    }
    made.set(key, make as (value: unknown) => void);
  }

  /**
   * `value` is `memo`'s answer for a block not yet committed, made ahead of it between heads (the ve board's next
   * ranking: veBoard.ts, taken as that block's when the block changed no lock). What readers made of the memo's answer
   * at the head (`follow`) is made of it now, so the block's commit finds that made too, and the work is not done while
   * the block's first reader waits. Only while the memo is read at the head; a throw is counted as an error.
   */
  madeAhead<T>(memo: AheadMemo<T>, value: T): void {
    const read = this.#read.get(memo as AheadMemo);
    if (read === undefined || read.at < this.#now() - this.#idleMs) return;
    if (!this.#made(memo as AheadMemo, value)) this.options.onAhead?.(memo.name, "error");
  }

  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#read.clear();
    this.#followers.clear();
  }

  #signalled(block: bigint, time?: bigint): void {
    this.#waiting = time === undefined ? { block } : { block, time };
    if (!this.#running) void this.#run();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      do {
        const signalled = this.#waiting;
        this.#waiting = null;
        if (this.#recent().length === 0) {
          this.close();
          return;
        }
        // The head with the time its answers are of: as the signal told it (a NOTIFY carries the committed
        // checkpoint, a reorg's lower head included) — no statement of our own, so the computations start at the
        // commit, while the first reader's probe of the head runs beside them, not before them — else as the index
        // says it now.
        let at: { block: bigint; time: bigint };
        try {
          at =
            signalled?.time !== undefined
              ? { block: signalled.block, time: signalled.time }
              : await this.options.head();
        } catch {
          for (const memo of this.#recent()) this.options.onAhead?.(memo.name, "error");
          continue;
        }
        // Only the answers read at one of the last heads before this one (or at it: a reorg's lower head): those read
        // at the newest such head first (a dashboard that moved from the board to the stats is waiting for the
        // stats), then in the order their readers first asked at that head (each starts as the one before it has its
        // slot in the head's lane).
        const read = (memo: AheadMemo) => this.#read.get(memo)!;
        const memos = this.#recent()
          .filter((memo) => read(memo).block >= at.block - this.#blocks)
          .sort((a, b) =>
            read(a).block === read(b).block ? read(a).order - read(b).order : read(a).block > read(b).block ? -1 : 1,
          );
        const newest = memos.length === 0 ? at.block : read(memos[0]!).block;
        const older = new Set(memos.filter((memo) => read(memo).block < newest));
        await Promise.all(
          memos.map((memo) =>
            memo.get({ block: at.block, time: at.time }, "head").then(
              async (value) => {
                // What was made of an answer not read at the newest head waits a turn of the loop: the readers of
                // the others, come meanwhile, are answered first.
                if (older.has(memo)) await new Promise((resolve) => setImmediate(resolve));
                const made = this.#made(memo, value);
                this.options.onAhead?.(memo.name, made ? "ok" : "error");
              },
              () => this.options.onAhead?.(memo.name, "error"),
            ),
          ),
        );
      } while (this.#waiting !== null);
    } finally {
      this.#running = false;
    }
  }

  /** Makes what readers made of `memo`'s answer at the head (follow) of `value`; false when one of them threw. */
  #made(memo: AheadMemo, value: unknown): boolean {
    let ok = true;
    for (const [, make] of this.#followers.get(memo) ?? []) {
      try {
        make(value);
      } catch {
        ok = false;
      }
    }
    return ok;
  }

  /** The memos read at the head within idleMs; the others are forgotten, with what was made of them. */
  #recent(): AheadMemo[] {
    const since = this.#now() - this.#idleMs;
    for (const [memo, read] of this.#read) {
      if (read.at < since) {
        this.#read.delete(memo);
        this.#followers.delete(memo);
      }
    }
    return [...this.#read.keys()];
  }
}
