/**
 * How many whole-index computations (a block's ve ranking, its stats: one aggregate statement over every lock; its
 * duration boards: one statement over a window's hours each) run at once in this process, and which wait. They share the index's small whole-index pool (api/server/indexDatabase.ts,
 * WHOLE_INDEX_DB), so without a bound a flood of past blocks queues inside pg's pool, where every waiter times out
 * after the pool's connect timeout as a bare INDEX_UNAVAILABLE, and the head's answers wait behind the flood.
 *
 * Two lanes, each a semaphore with a bounded queue and a wait deadline:
 * - `head`: the index's head (at most one computation per ranking per head block: the ve board, the stats, the 28
 *   duration boards; shared by every reader). One slot of the pool is its own, so the head is never behind a past block.
 * - `past`: every named block (`?block=`, a cursor's block). The other slots. A computation that finds the queue
 *   full, or still waits at its deadline, is refused with IndexBusyError (503 INDEX_UNAVAILABLE "busy" with
 *   Retry-After) — the pool is never left to starve, and a client is told when to come back.
 * A computation is shared by every reader of its block (api/read/blockMemo.ts), so no one reader's hang-up takes it
 * out of the queue: its wait is bounded by `waitMs` instead.
 */
import { IndexBusyError } from "../http/errors";

export type ComputeLane = "head" | "past";

export type LaneLimits = {
  /** Computations running at once. */
  slots: number;
  /** Computations waiting for a slot; one more is refused at once. */
  queue: number;
  /** How long one waits for a slot before it is refused. */
  waitMs: number;
};

export type ComputeGateOptions = Record<ComputeLane, LaneLimits> & {
  /** Called on every change of the counts, and once per refusal (the metrics). */
  onChange?: (gate: ComputeGate) => void;
  onRefused?: (lane: ComputeLane, why: "queue full" | "wait expired") => void;
};

type Waiter = { start: () => void; timer: NodeJS.Timeout };

class Lane {
  running = 0;
  /** Computations admitted (api/read/runtime.ts admitComputation) whose requests are not all answered, by key. */
  readonly admitted = new Map<string, { requests: number }>();
  readonly waiting = new Set<Waiter>();
  constructor(readonly limits: LaneLimits) {}
}

/** The slots of the whole-index pool: one kept for the head, the rest (at least one) for past blocks. */
export function laneSlots(poolConnections: number): { head: number; past: number } {
  return { head: 1, past: Math.max(1, poolConnections - 1) };
}

/** Background work not started: its lane was busy (ComputeGate.whenIdle). */
export class GateSkipped extends Error {
  constructor(lane: ComputeLane) {
    super(`the ${lane} lane is busy`);
    this.name = "GateSkipped";
  }
}

export class ComputeGate {
  readonly #lanes: Record<ComputeLane, Lane>;
  readonly #o: ComputeGateOptions;
  /** Computations refused since start, by lane. */
  readonly refused: Record<ComputeLane, number> = { head: 0, past: 0 };

  constructor(options: ComputeGateOptions) {
    this.#o = options;
    this.#lanes = { head: new Lane(options.head), past: new Lane(options.past) };
  }

  /** Computations running now (both lanes). */
  get inFlight(): number {
    return this.#lanes.head.running + this.#lanes.past.running;
  }

  /** Computations waiting for a slot now (both lanes). */
  get queued(): number {
    return this.#lanes.head.waiting.size + this.#lanes.past.waiting.size;
  }

  /**
   * Admits a request that will ask `lane` for the computation named `key`, before it reads anything (the probe, the
   * block's time): at most `slots + queue` computations are admitted at once, one more is refused now with
   * IndexBusyError, so a flood's excess takes no connection of the index's pool even for its probe. Requests for a
   * key already admitted join it (they will share its computation) and are never refused. Returns the release, to
   * call once the request has its answer or has failed (idempotent), and whether this request is the first.
   */
  admit(lane: ComputeLane, key: string): { release: () => void; first: boolean } {
    const l = this.#lanes[lane];
    let entry = l.admitted.get(key);
    const first = entry === undefined;
    if (entry === undefined) {
      if (l.admitted.size >= l.limits.slots + l.limits.queue) throw this.#refuse(lane, l, "queue full");
      entry = { requests: 0 };
      l.admitted.set(key, entry);
    }
    const held = entry;
    held.requests++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--held.requests === 0 && l.admitted.get(key) === held) l.admitted.delete(key);
    };
    return { release, first };
  }

  /** Runs `compute` in `lane` when a slot is free; rejects with IndexBusyError when it cannot start in time. */
  async run<T>(lane: ComputeLane, compute: () => Promise<T>): Promise<T> {
    const l = this.#lanes[lane];
    if (l.running >= l.limits.slots) await this.#wait(lane, l);
    else l.running++;
    this.#o.onChange?.(this);
    try {
      return await compute();
    } finally {
      this.#release(l);
    }
  }

  /**
   * Runs `compute` in `lane` only if a slot is free now and no one waits for one — work no reader waits for (a duration
   * board's anchor moving up) never takes a reader's place nor counts as refused; else rejects with GateSkipped.
   */
  async whenIdle<T>(lane: ComputeLane, compute: () => Promise<T>): Promise<T> {
    const l = this.#lanes[lane];
    if (l.running >= l.limits.slots || l.waiting.size > 0) throw new GateSkipped(lane);
    l.running++;
    this.#o.onChange?.(this);
    try {
      return await compute();
    } finally {
      this.#release(l);
    }
  }

  #release(l: Lane): void {
    const next = l.waiting.values().next().value;
    if (next === undefined) l.running--;
    else {
      // The slot passes straight to the oldest waiter: a newcomer never takes it first.
      l.waiting.delete(next);
      clearTimeout(next.timer);
      next.start();
    }
    this.#o.onChange?.(this);
  }

  #wait(lane: ComputeLane, l: Lane): Promise<void> {
    if (l.waiting.size >= l.limits.queue) return Promise.reject(this.#refuse(lane, l, "queue full"));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        timer: setTimeout(() => {
          l.waiting.delete(waiter);
          reject(this.#refuse(lane, l, "wait expired"));
        }, l.limits.waitMs),
      };
      l.waiting.add(waiter);
      this.#o.onChange?.(this);
    });
  }

  #refuse(lane: ComputeLane, l: Lane, why: "queue full" | "wait expired"): IndexBusyError {
    this.refused[lane]++;
    this.#o.onRefused?.(lane, why);
    this.#o.onChange?.(this);
    // A slot frees within about one wait: the whole queue drains in (queue / slots) computations of ~waitMs or less.
    return new IndexBusyError(Math.max(1, Math.ceil(l.limits.waitMs / 1000)), why);
  }
}
