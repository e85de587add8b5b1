/**
 * Computing a new head's whole-index answers ahead of its first reader. The ve ranking and the stats are functions of
 * the block (ve decays with time), computed once per block when first asked for (blockMemo.ts). At the head that
 * first reader used to wait the whole computation — at Base scale 0.4–0.5 s, every block — while the readers after it
 * got the answer from memory in a millisecond.
 *
 * So while an answer is being read at the head, each new head the index signals (indexSignal.ts: once per indexed
 * block, when its rows are committed) is computed at once, in the head's lane, before anyone asks: the first reader
 * finds it done, or joins the computation already under way. Bounded three ways:
 * - only an answer read at the previous head (or later) is computed for the next: one read every block keeps it
 *   ahead; a read once a minute costs at most one computation more than it did, not one per block (28 boards ×
 *   0.02–0.4 s each at Base scale would not fit in Base's 2 s); a process whose answers nobody read for `idleMs` stops
 *   following the signal;
 * - one head at a time: a head signalled while the last is still computing replaces any head waiting behind it, so
 *   a burst of blocks (catching up) computes the newest, not each;
 * - with Redis the replicas share one computation per block (sharedAnswers.ts' lock), computed ahead or not.
 *
 * The head's lane runs one computation at a time (computeGate.ts laneSlots), so the order matters: a front end that
 * reads the ve board first and then the 28 duration boards would otherwise wait for all 28 derivations before its
 * first page. The answers are asked for in the order their readers first asked at the last head they were read at.
 */
import type { IndexSignalSource } from "./indexSignal";

/** What is computed ahead: a memo of answers per block (BlockMemo), asked for in the head's lane. */
export type AheadMemo = {
  readonly name: string;
  get(at: { block: bigint; time: bigint }, lane: "head"): Promise<unknown>;
};

export type ComputeAheadOptions = {
  signal: IndexSignalSource;
  /** The index's head now, with its block time (one statement: LockIndex.probe), when the signal did not tell its time. */
  head: () => Promise<{ block: bigint; time: bigint }>;
  /** An answer not read at the head for this long is no longer computed ahead; default 60 s. */
  idleMs?: number;
  now?: () => number;
  /** Told each answer computed ahead (or found computed) and each failure (counted; the reader will try again). */
  onAhead?: (name: string, outcome: "ok" | "error") => void;
};

export const AHEAD_IDLE_MS = 60_000;

export class ComputeAhead {
  /**
   * Each memo read at the head: the last head block it was read at, when, and the order of its first read at that
   * block among all memos' (a counter), which orders the next head's computations.
   */
  readonly #read = new Map<AheadMemo, { block: bigint; at: number; order: number }>();
  #reads = 0;
  readonly #idleMs: number;
  readonly #now: () => number;
  #unsubscribe: (() => void) | undefined;
  /** The head being computed ahead, and the newest signalled behind it (null: none waiting). */
  #running = false;
  #waiting: { block: bigint; time?: bigint } | null = null;

  constructor(readonly options: ComputeAheadOptions) {
    this.#idleMs = options.idleMs ?? AHEAD_IDLE_MS;
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

  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#read.clear();
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
        // Only the answers read at the head before this one (or at it: a reorg's lower head), in the order their
        // readers first asked there (each starts as the one before it has its slot in the head's lane).
        const memos = this.#recent()
          .filter((memo) => this.#read.get(memo)!.block >= at.block - 1n)
          .sort((a, b) => this.#read.get(a)!.order - this.#read.get(b)!.order);
        await Promise.all(
          memos.map((memo) =>
            memo.get({ block: at.block, time: at.time }, "head").then(
              () => this.options.onAhead?.(memo.name, "ok"),
              () => this.options.onAhead?.(memo.name, "error"),
            ),
          ),
        );
      } while (this.#waiting !== null);
    } finally {
      this.#running = false;
    }
  }

  /** The memos read at the head within idleMs; the others are forgotten. */
  #recent(): AheadMemo[] {
    const since = this.#now() - this.#idleMs;
    for (const [memo, read] of this.#read) if (read.at < since) this.#read.delete(memo);
    return [...this.#read.keys()];
  }
}
