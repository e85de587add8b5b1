/**
 * Whether the index's reads have been failing, and for how long: /ready's second question (issue 30, 7). The
 * database can answer /ready's own check (its tables are there) while every read of the index fails — a lock held
 * on a table, a pool that never frees (a views schema gone is the base's "index missing") — and a load balancer
 * must then take this replica out.
 * Every read of the runtime (api/read/runtime.ts: `guarded`) reports here; a success ends the streak.
 */
import { CancelSource } from "../http/cancellation";
import type { ReadyState } from "../http/probes";
import type { LockIndex } from "./contract";

/** How long /ready's own read of the index may take once the streak is long enough. */
export const READ_PROBE_MS = 500;

/** The streak of failed reads since the last success. */
export class ReadHealth {
  #since: number | null = null;

  failed(now: number = performance.now()): void {
    this.#since ??= now;
  }

  succeeded(): void {
    this.#since = null;
  }

  /** How long the reads have failed with no success between; 0 when the latest read succeeded. */
  failingForMs(now: number = performance.now()): number {
    return this.#since === null ? 0 : now - this.#since;
  }
}

/**
 * /ready over `base` (the database answers, the index is there): once reads have failed for `failAfterMs` with no
 * success between, /ready reads the index itself (the head, bounded by READ_PROBE_MS and cancelled after it) and
 * answers 503 "index reads failing" unless that read succeeds — which ends the streak. So a replica a load
 * balancer took out, and that no request reaches, comes back as soon as its index answers again.
 */
export function readHealthReadiness(o: {
  base: (() => Promise<ReadyState>) | undefined;
  health: ReadHealth;
  index: Pick<LockIndex, "probe">;
  failAfterMs: number;
  probeMs?: number;
}): () => Promise<ReadyState> {
  const probeMs = o.probeMs ?? READ_PROBE_MS;
  return async () => {
    const state = o.base ? await o.base() : ({ ready: true } as const);
    if (!state.ready || o.health.failingForMs() < o.failAfterMs) return state;
    const signal = new CancelSource();
    let timer: NodeJS.Timeout | undefined;
    // Raced as well as cancelled: a reader that cannot cancel (PGlite) must not hold the probe either.
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        signal.abort(new Error(`index read over ${probeMs} ms`));
        reject(signal.reason);
      }, probeMs);
    });
    try {
      await Promise.race([o.index.probe(null, signal), late]);
      o.health.succeeded();
      return state;
    } catch {
      return { ready: false, reason: "index reads failing" };
    } finally {
      clearTimeout(timer);
    }
  };
}
