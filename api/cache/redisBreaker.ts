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
 *
 * With `probe` (a cheap command of its own, bounded by its caller), an open breaker is also probed in the background,
 * so it closes when Redis answers again even if no load comes to probe it (the metrics' gauge said "open" until the
 * next load that touched Redis, F9): first at the end of the cool-down, then each wait twice the last, at most
 * `maxProbeIntervalMs`, one probe at a time; and at once when `poke` says the connection is ready again (a
 * reconnect). A background probe that fails changes nothing the loads see; one that answers closes the breaker.
 *
 * The probe must prove what the loads need, a write as well as a read: a Redis at maxmemory under noeviction (or one
 * refusing writes: a replica, min-replicas-to-write, a failed save) still answers PING and reads. A probe that only
 * read closed the breaker, the next load's write failed and opened it again: one outage told as a warning and an info
 * line per cool-down, and the gauge back at 0 between them (red team rtredis F1). So the background probe writes, and
 * a load that probed by reading alone (a value found, no write) is `inconclusive`: the background probe decides, now.
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
  /**
   * A background probe of Redis (resolves when Redis answered, within its own bound); none: only loads probe. It
   * should write, as loads do: a Redis that answers reads but refuses writes is still an outage.
   */
  probe?: () => Promise<void>;
  /** The longest wait between two background probes (default MAX_PROBE_INTERVAL_MS). */
  maxProbeIntervalMs?: number;
};

/** A Redis down for long is still probed at least this often: its return shows within this, with no load. */
export const MAX_PROBE_INTERVAL_MS = 30_000;

/** Five seconds: a hung Redis costs one load's budget per cool-down per cache, not one per new key. */
export const DEFAULT_COOL_DOWN_MS = 5_000;

export class RedisBreaker {
  readonly #coolDownMs: number;
  readonly #onOpen: (reason: string) => void;
  readonly #onClose: () => void;
  readonly #probe: (() => Promise<void>) | undefined;
  readonly #maxProbeIntervalMs: number;
  /** 0 while closed; else when the cool-down ends (performance.now()). */
  #openUntil = 0;
  #probing = false;
  /** The background probe: its timer, whether one is under way, the wait before the next, and whether stopped. */
  #timer: NodeJS.Timeout | undefined;
  #backgroundProbing = false;
  #probeWaitMs: number;
  #stopped = false;

  constructor(options: RedisBreakerOptions) {
    this.#coolDownMs = options.coolDownMs;
    this.#onOpen = options.onOpen ?? (() => {});
    this.#onClose = options.onClose ?? (() => {});
    this.#probe = options.probe;
    this.#maxProbeIntervalMs = Math.max(options.maxProbeIntervalMs ?? MAX_PROBE_INTERVAL_MS, options.coolDownMs);
    this.#probeWaitMs = options.coolDownMs;
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
    // The background probe may have closed it while this load probed.
    if (this.#openUntil !== 0) this.#close();
  }

  /**
   * The probe's load was answered without writing (it found a value): reads answer, writes are unproven. The breaker
   * stays open for another cool-down, silently, and the background probe (a write) decides at once; without one, the
   * load's answer closes it as `succeeded` does.
   */
  inconclusive(admission: Admission): void {
    if (admission !== "probe") return;
    if (this.#probe === undefined) {
      this.succeeded(admission);
      return;
    }
    this.#probing = false;
    if (this.#openUntil === 0) return;
    this.#openUntil = performance.now() + this.#coolDownMs;
    if (!this.#backgroundProbing) this.#schedule(0);
  }

  /** A load that used Redis was failed by it: skip Redis for a cool-down. */
  failed(admission: Admission, reason: string): void {
    const wasClosed = this.#openUntil === 0;
    if (admission === "probe") this.#probing = false;
    // A load admitted before the breaker opened may fail after the probe started: the probe decides, not it.
    else if (!wasClosed) return;
    this.#openUntil = performance.now() + this.#coolDownMs;
    if (wasClosed) {
      this.#onOpen(reason);
      this.#probeWaitMs = this.#coolDownMs;
      this.#schedule(this.#coolDownMs);
    }
  }

  /** The connection is ready again (a reconnect): an open breaker is probed now rather than at its next wait. */
  poke(): void {
    if (this.#openUntil !== 0 && !this.#backgroundProbing) this.#schedule(0);
  }

  /** No more background probes (the cache is closed). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #close(): void {
    this.#openUntil = 0;
    clearTimeout(this.#timer);
    this.#onClose();
  }

  #schedule(delayMs: number): void {
    if (this.#probe === undefined || this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#probeInBackground(), delayMs);
    // A probe never keeps the process alive.
    this.#timer.unref();
  }

  async #probeInBackground(): Promise<void> {
    if (this.#openUntil === 0 || this.#backgroundProbing || this.#stopped) return;
    this.#backgroundProbing = true;
    const answered = await this.#probe!().then(
      () => true,
      () => false,
    );
    this.#backgroundProbing = false;
    if (this.#openUntil === 0 || this.#stopped) return;
    if (answered) return this.#close();
    this.#probeWaitMs = Math.min(this.#probeWaitMs * 2, this.#maxProbeIntervalMs);
    this.#schedule(this.#probeWaitMs);
  }
}
