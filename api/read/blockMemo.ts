import { BoundedMap } from "../cache/boundedMap";
import type { ComputeLane } from "./computeGate";
import type { AtBlock } from "./contract";

/**
 * Answers that are a function of the block alone (the ve ranking, the stats), computed at most once per block and
 * shared by every reader of this process: concurrent requests for a block share one computation (single flight).
 * A failed computation is never kept: the next request computes again. Keyed by block number only, so callers pass
 * blocks at or below the index's head with their own timestamp.
 *
 * A request chooses the block (`?block=`, a cursor), so what is kept is bounded by entries and by bytes (an estimate
 * of each answer's heap, `sizeOf`), least recently used out. The head's answer is kept apart: the newest block asked
 * for as the head stays until a newer head replaces it, whatever a flood of past blocks evicts, so the head's
 * readers are served from what is already computed.
 */
export type BlockMemoOptions<T> = {
  /** What the answers are (`board`, `stats`): names a computation of this memo among others (computeGate.ts). */
  name?: string;
  /** Computes the answer at a block (one SQL statement: api/read/atBlock.ts); `lane` says whether it is the head. */
  load: (at: { block: bigint; time: bigint }, lane: ComputeLane) => Promise<T>;
  /** Past blocks' answers kept (the blocks most recently asked for); default 8. */
  capacity?: number;
  /** Bytes of answers kept in all, the head's included (estimated by `sizeOf`); default unbounded. */
  maxBytes?: number;
  /** An answer's estimated heap size in bytes; default 0 (only `capacity` bounds). */
  sizeOf?: (value: T) => number;
  /** Called once per computation actually run (metrics, tests, the benchmark). */
  onCompute?: (block: bigint, ms: number) => void;
  /** A bound on the bytes of several memos together (the duration boards' 28), on top of this memo's own. */
  shared?: SharedBytes;
};

/** An answer kept, its bytes once settled, and when it was last asked for (SharedBytes's clock). */
type Kept<T> = { flight: Promise<T>; bytes: number; used: number };

export class BlockMemo<T> {
  /** The past blocks most recently asked for, least recently used out. */
  readonly #kept: BoundedMap<bigint, Kept<T>>;
  /** The newest block asked for as the head, and its answer. */
  #head: { block: bigint; kept: Kept<T> } | null = null;
  readonly #load: BlockMemoOptions<T>["load"];
  readonly #onCompute: BlockMemoOptions<T>["onCompute"];
  readonly #sizeOf: (value: T) => number;
  readonly #shared: SharedBytes | undefined;
  readonly name: string;
  readonly capacity: number;
  readonly maxBytes: number;
  #bytes = 0;
  #computed = 0;

  constructor(options: BlockMemoOptions<T>) {
    this.#load = options.load;
    this.name = options.name ?? "answer";
    // Evicted by #fit (bytes and entries together), never by the map itself: one more than capacity never happens.
    this.#kept = new BoundedMap(Number.MAX_SAFE_INTEGER, "recency");
    this.capacity = options.capacity ?? 8;
    this.maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    this.#sizeOf = options.sizeOf ?? (() => 0);
    this.#onCompute = options.onCompute;
    this.#shared = options.shared;
    this.#shared?.join(this);
  }

  /** How many answers this memo has computed. */
  get computed(): number {
    return this.#computed;
  }

  /** Estimated bytes of the settled answers kept now (the head's included). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Past blocks' answers kept now, settled or in flight (the head's apart). */
  get size(): number {
    return this.#kept.size;
  }

  /** Whether `block`'s answer is kept or being computed: asking for it computes nothing more. */
  has(block: bigint): boolean {
    return this.#head?.block === block || this.#kept.has(block);
  }

  /** The answer kept (or in flight) for `block`, marked used; undefined when asking for it would compute. */
  kept(block: bigint): Promise<T> | undefined {
    if (this.#head?.block === block) return this.#head.kept.flight;
    const kept = this.#kept.get(block);
    if (kept) kept.used = this.#shared?.tick() ?? 0;
    return kept?.flight;
  }

  /** The answer at `at`: kept, shared with its computation in flight, or computed now in `lane`. */
  get(at: { block: bigint; time: bigint }, lane: ComputeLane = "past"): Promise<T> {
    if (this.#head?.block === at.block) return this.#head.kept.flight;
    const kept = this.#kept.get(at.block);
    if (kept) kept.used = this.#shared?.tick() ?? 0;
    if (lane === "past" || (this.#head !== null && at.block < this.#head.block)) {
      if (kept) return kept.flight;
      const entry = this.#start(at, lane);
      this.#kept.set(at.block, entry);
      this.#fit();
      return entry.flight;
    }
    // A newer head: the old head's answer becomes a past block's (kept while it fits).
    const old = this.#head;
    let entry: Kept<T>;
    if (kept) {
      this.#kept.delete(at.block);
      entry = kept;
    } else {
      entry = this.#start(at, lane);
    }
    this.#head = { block: at.block, kept: entry };
    if (old) {
      old.kept.used = this.#shared?.tick() ?? 0;
      this.#kept.set(old.block, old.kept);
    }
    this.#fit();
    return entry.flight;
  }

  /**
   * Forgets every answer at `block` or above, the head's included: a reorg replaced those blocks (the index's head
   * went back to `block`), and an answer kept by block number would be served for the new block of that number. A
   * computation still in flight for one of them settles without being kept. Returns how many were forgotten.
   */
  forgetFrom(block: bigint): number {
    let n = 0;
    if (this.#head !== null && this.#head.block >= block) {
      this.#bytes -= this.#head.kept.bytes;
      this.#head = null;
      n++;
    }
    for (const [at, entry] of [...this.#kept]) {
      if (at < block) continue;
      this.#kept.delete(at);
      this.#bytes -= entry.bytes;
      n++;
    }
    return n;
  }

  /**
   * Forgets every answer, and whatever later ones would be derived from: the index now holds another build's rows
   * under the same block numbers (a redeploy's views switch, BlockClock.onBuildChanged).
   */
  forgetAll(): number {
    return this.forgetFrom(0n);
  }

  /** Starts a computation, counted (or dropped, if it fails) when it settles if the memo still keeps it. */
  #start(at: { block: bigint; time: bigint }, lane: ComputeLane): Kept<T> {
    const entry: Kept<T> = { flight: this.#compute(at, lane), bytes: 0, used: this.#shared?.tick() ?? 0 };
    const isKept = () => this.#head?.kept === entry || this.#kept.peek(at.block) === entry;
    entry.flight.then(
      (value) => {
        if (!isKept()) return;
        entry.bytes = this.#sizeOf(value);
        this.#bytes += entry.bytes;
        this.#fit();
      },
      () => {
        if (!isKept()) return;
        if (this.#head?.kept === entry) this.#head = null;
        else this.#kept.delete(at.block);
      },
    );
    return entry;
  }

  /**
   * Drops the least recently used past answers until both bounds hold (an answer in flight counts once settled),
   * then the shared bound's.
   */
  #fit(): void {
    for (const [block, entry] of this.#kept) {
      if (this.#kept.size <= this.capacity && this.#bytes <= this.maxBytes) break;
      this.#kept.delete(block);
      this.#bytes -= entry.bytes;
    }
    this.#shared?.fit();
  }

  /** The least recently used settled past answer (the shared bound's eviction), or undefined when none is held. */
  oldest(): { used: number; drop: () => void } | undefined {
    for (const [block, entry] of this.#kept) {
      if (entry.bytes === 0) continue;
      return {
        used: entry.used,
        drop: () => {
          this.#kept.delete(block);
          this.#bytes -= entry.bytes;
        },
      };
    }
    return undefined;
  }

  async #compute(at: { block: bigint; time: bigint }, lane: ComputeLane): Promise<T> {
    const started = performance.now();
    const value = await this.#load(at, lane);
    this.#computed++;
    this.#onCompute?.(at.block, performance.now() - started);
    return value;
  }
}

/**
 * One bound on the bytes of several memos (the duration boards: one memo per board and window), so their sum, not
 * each, is what a flood of distinct blocks can grow. Past it, the least recently asked for settled past answer of any
 * of them goes (a clock shared by the memos dates each use), until the sum fits or only the heads' answers are left
 * (those stay: one per memo).
 */
export class SharedBytes {
  readonly #memos = new Set<SharedMember>();
  #clock = 0;

  constructor(readonly maxBytes: number) {}

  join(memo: SharedMember): void {
    this.#memos.add(memo);
  }

  /** The next use's date. */
  tick(): number {
    return ++this.#clock;
  }

  /** Estimated bytes of the settled answers of every member, the heads' included. */
  get bytes(): number {
    let n = 0;
    for (const memo of this.#memos) n += memo.bytes;
    return n;
  }

  fit(): void {
    while (this.bytes > this.maxBytes) {
      let oldest: { used: number; drop: () => void } | undefined;
      for (const memo of this.#memos) {
        const candidate = memo.oldest();
        if (candidate && (oldest === undefined || candidate.used < oldest.used)) oldest = candidate;
      }
      if (oldest === undefined) return;
      oldest.drop();
    }
  }
}

type SharedMember = { bytes: number; oldest(): { used: number; drop: () => void } | undefined };

/**
 * A block pinned as the head, read above the index's head: the index went back under the process (the views schema
 * pointed at a new deployment still catching up, docs/operations.md) since the head it pinned was told.
 */
export class AboveIndexHeadError extends Error {
  override name = "AboveIndexHeadError";
  constructor(
    readonly block: bigint,
    readonly head: bigint,
  ) {
    super(`block ${block} is above the index head ${head}`);
  }
}

/** An answer read at a pinned block must be in range: the caller checked it against the head before. */
export function requireInRange<A extends AtBlock<unknown>>(answer: A): A {
  if (!answer.inRange) throw new AboveIndexHeadError(answer.block, answer.head.block);
  return answer;
}
