/**
 * The per-request pool of the index database, with admission: a statement whose turn for a connection would not come
 * within the checkout's wait is refused at once (IndexPoolBusyError "queue full"), and one that waited out the
 * checkout anyway is refused the same way ("wait expired"). Both are load, not an outage: the read model answers them
 * 503 INDEX_UNAVAILABLE "busy" with Retry-After (api/read/runtime.ts guarded), never "unreachable" — which stays for
 * a database that does not answer (a connection refused or not made in time, a statement failing on its socket).
 *
 * How deep a queue the pool serves in time is measured, not configured: `max` connections, each held for the recent
 * hold time (checkout to release, an exponential average: the statement and the event loop's delay in handing its
 * answer back, which is what grows under a flood), serve max × waitMs / hold waiting statements within waitMs; half
 * of that is admitted, the margin for a hold time that grows while they wait. Never fewer than `max`: a pool that has
 * just started, or met one slow statement, still queues a pool's worth.
 */
import pg from "pg";
import { IndexPoolBusyError } from "../read/contract";

/** pg-pool's error for a checkout that waited `connectionTimeoutMillis` in its queue (pg-pool 3: index.js connect). */
export const CHECKOUT_TIMEOUT_MESSAGE = "timeout exceeded when trying to connect";

/** The hold time assumed before any is measured, and the weight of each new one in the average. */
const FIRST_HOLD_MS = 5;
const HOLD_WEIGHT = 0.1;
/** The share of what the pool serves within its wait that is admitted to wait (the rest: the estimate's margin). */
const ADMITTED_SHARE = 0.5;

export type IndexPoolOptions = {
  /** How long a statement may wait for a connection: the checkout's own timeout (connectionTimeoutMillis). */
  waitMs: number;
  /** Told each statement refused before a connection was its own, and why (the metrics). */
  onRefused?: (why: IndexPoolBusyError["why"]) => void;
};

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

export class IndexPool extends pg.Pool {
  readonly #max: number;
  readonly #waitMs: number;
  readonly #onRefused: IndexPoolOptions["onRefused"];
  #holdMs = FIRST_HOLD_MS;

  constructor(config: pg.PoolConfig, options: IndexPoolOptions) {
    super(config);
    this.#max = config.max ?? 10;
    this.#waitMs = options.waitMs;
    this.#onRefused = options.onRefused;
  }

  /** Statements that may wait for a connection now: what the pool serves within waitMs at the recent hold time. */
  get queueCapacity(): number {
    return Math.max(this.#max, Math.floor((this.#max * this.#waitMs * ADMITTED_SHARE) / this.#holdMs));
  }

  /** The recent time a connection is held, checkout to release (ms). */
  get holdMs(): number {
    return this.#holdMs;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    // Every checkout comes here: the prepared statements' (api/read/statements.ts) and pool.query's (drizzle's).
    // Idle connections are handed to the queue on the next tick: those waiting beyond them are the queue.
    const full = this.waitingCount - this.idleCount >= this.queueCapacity;
    const refused = full ? this.#refuse("queue full") : null;
    if (callback) {
      if (refused) {
        process.nextTick(() => callback(refused, undefined, () => {}));
        return undefined;
      }
      super.connect((err, client, done) => {
        if (err) callback(this.#said(err), undefined, done);
        else callback(undefined, this.#timed(client as pg.PoolClient), done);
      });
      return undefined;
    }
    if (refused) return Promise.reject(refused);
    return super.connect().then(
      (client) => this.#timed(client),
      (err: unknown) => Promise.reject(this.#said(err)),
    );
  }

  /** The checkout's timeout said as load; any other failure as it is. */
  #said(err: unknown): Error {
    if (err instanceof Error && err.message === CHECKOUT_TIMEOUT_MESSAGE) return this.#refuse("wait expired", err);
    return err as Error;
  }

  #refuse(why: IndexPoolBusyError["why"], cause?: unknown): IndexPoolBusyError {
    this.#onRefused?.(why);
    return new IndexPoolBusyError(why, Math.max(1, Math.ceil(this.#waitMs / 1000)), cause);
  }

  /** The client's release, timed into the hold average (pg-pool gives each checkout a release of its own). */
  #timed(client: pg.PoolClient): pg.PoolClient {
    const started = performance.now();
    const release = client.release;
    client.release = (err?: Error | boolean) => {
      this.#holdMs += HOLD_WEIGHT * (performance.now() - started - this.#holdMs);
      return release.call(client, err);
    };
    return client;
  }
}
