/**
 * A per-process circuit breaker in front of one Redis connection of a shared cache (api/cache/redisTtlCache.ts).
 *
 * A load bounds its own wait on Redis (its budget), but a Redis that hangs — the connection alive, no replies — would
 * still cost every new key's first load that whole budget, for as long as it hangs: every new head's first readers
 * wait ~2 s. So one load that Redis failed (no reply within its budget, or the connection not ready) opens the
 * breaker: for `coolDownMs` every load skips Redis and is served in-process at once. After the cool-down the next
 * load is the probe: it goes through Redis (bounded by its budget as ever) while the others still skip it; the probe
 * answered closes the breaker (sharing resumes), the probe failed opens it for another cool-down.
 *
 * Told once per outage: `onOpen` when it opens from closed, `onClose` when a probe closes it; a probe that fails
 * re-opens it silently. Checking it is one comparison while closed, so a load pays nothing for it.
 */

/** How a load may use Redis: as ever (`shared`), as the breaker's probe, or not at all (`skip`: in-process). */
export type Admission = "shared" | "probe" | "skip";

export type RedisBreakerOptions = {
  /** How long Redis is skipped after it failed a load. */
  coolDownMs: number;
  /** Told when the breaker opens from closed: once per outage (the reason is the failure that opened it). */
  onOpen?: (reason: string) => void;
  /** Told when a probe closes it: Redis answers again. */
  onClose?: () => void;
};

/** Five seconds: a hung Redis costs one load's budget per cool-down per cache, not one per new key. */
export const DEFAULT_COOL_DOWN_MS = 5_000;

export class RedisBreaker {
  readonly #coolDownMs: number;
  readonly #onOpen: (reason: string) => void;
  readonly #onClose: () => void;
  /** 0 while closed; else when the cool-down ends (performance.now()). */
  #openUntil = 0;
  #probing = false;

  constructor(options: RedisBreakerOptions) {
    this.#coolDownMs = options.coolDownMs;
    this.#onOpen = options.onOpen ?? (() => {});
    this.#onClose = options.onClose ?? (() => {});
  }

  /** Whether Redis is skipped now (the metrics' gauge): open, its cool-down running or its probe under way. */
  get open(): boolean {
    return this.#openUntil !== 0;
  }

  admit(): Admission {
    if (this.#openUntil === 0) return "shared";
    if (this.#probing || performance.now() < this.#openUntil) return "skip";
    this.#probing = true;
    return "probe";
  }

  /** A load that used Redis got its replies within its budget. Only the probe closes an open breaker. */
  succeeded(admission: Admission): void {
    if (admission !== "probe") return;
    this.#probing = false;
    this.#openUntil = 0;
    this.#onClose();
  }

  /** A load that used Redis was failed by it: skip Redis for a cool-down. */
  failed(admission: Admission, reason: string): void {
    const wasClosed = this.#openUntil === 0;
    if (admission === "probe") this.#probing = false;
    // A load admitted before the breaker opened may fail after the probe started: the probe decides, not it.
    else if (!wasClosed) return;
    this.#openUntil = performance.now() + this.#coolDownMs;
    if (wasClosed) this.#onOpen(reason);
  }
}
