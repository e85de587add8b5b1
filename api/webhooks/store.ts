/**
 * The webhooks' state, all of it in the database (api/webhooks/sql.ts), in a schema of the API's own (WEBHOOK_SCHEMA,
 * default `webhooks`; never Ponder's): the subscriptions, the outbox of deliveries, and the feed's cursor (the last
 * block fed). Every API process feeds and works the same tables, so a restart loses nothing (an undelivered row stays
 * pending) and a second process doubles nothing: exactly one process feeds a block (the cursor row is locked and
 * moved in the transaction that inserts its deliveries), and a delivery is claimed by one worker at a time (FOR UPDATE
 * SKIP LOCKED, then a lease in `next_attempt_at`).
 *
 * Order per subscriber: `seq` is the order of insertion, which is block order (one feeder at a time, ascending
 * blocks); only a subscriber's oldest undelivered (pending or dead) delivery may be attempted, and only when it is
 * pending: a failing one holds the rest back, and a dead one holds back every later one until a replay — those fed
 * after it are queued dead too, so the list says why they wait.
 */
import { randomBytes } from "node:crypto";
import type { Sql } from "./sql";

export type DeliveryStatus = "pending" | "delivered" | "dead" | "cancelled";
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "delivered", "dead", "cancelled"];

export type Subscription = { id: string; url: string; topics: string[]; secret: string; createdAt: string };

export type SubscriptionSummary = Omit<Subscription, "secret"> & {
  pending: number;
  dead: number;
  oldestPendingAt: string | null;
};

export type Delivery = {
  id: string;
  webhook: string;
  blockNumber: string;
  topic: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
};

/** A delivery a worker holds: what to send, where, signed with which secret. */
export type Claimed = { seq: string; id: string; url: string; secret: string; payload: string; attempts: number };

/**
 * What the index held of the blocks fed, as the feed read it at the cursor block: the digest of the index's own events
 * in blocks `from` + 1 to the cursor block (contract.ts Seal: each event named by its block, transaction hash and log
 * index). A reorg that replaced any of them reads another digest there.
 */
export type FedSeal = { from: bigint; digest: string };

/** One row the feeder adds to the outbox. */
export type NewDelivery = { subscription: string; block: bigint; topic: string; type: string; payload: string };

type Query = Pick<Sql, "query">;

export const newId = (prefix: string) => `${prefix}_${randomBytes(16).toString("base64url")}`;

/** A delivery's attempt is in flight: claimed, its outcome not recorded, its lease not over. */
const IN_FLIGHT = "(status = 'pending' AND leased AND next_attempt_at > now())";

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).toISOString());

export class WebhookStore {
  readonly #s: string;

  constructor(
    readonly sql: Sql,
    schema: string,
  ) {
    this.#s = quote(schema);
  }

  /** Creates the schema and tables when missing; one process at a time (concurrent CREATE … IF NOT EXISTS races). */
  async migrate(): Promise<void> {
    const s = this.#s;
    await this.sql.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('webhooks-migrate'))");
      await tx.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.subscription (
        id text PRIMARY KEY,
        url text NOT NULL,
        topics text[] NOT NULL,
        secret text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())`);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.delivery (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        subscription_id text NOT NULL REFERENCES ${s}.subscription (id) ON DELETE CASCADE,
        block bigint NOT NULL,
        topic text NOT NULL,
        type text NOT NULL,
        payload text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz)`);
      await tx.query(
        `CREATE INDEX IF NOT EXISTS delivery_pending ON ${s}.delivery (subscription_id, seq) WHERE status = 'pending'`,
      );
      // A subscriber's undelivered ones in order: the claim's heads, and the feed's look for a dead one.
      await tx.query(
        `CREATE INDEX IF NOT EXISTS delivery_open ON ${s}.delivery (subscription_id, seq) WHERE status IN ('pending', 'dead')`,
      );
      await tx.query(`CREATE INDEX IF NOT EXISTS delivery_block ON ${s}.delivery (block)`);
      // Told reverted once: a later reorg from a lower block, or a switch of the index, does not revert it again.
      await tx.query(`ALTER TABLE ${s}.delivery ADD COLUMN IF NOT EXISTS reverted boolean NOT NULL DEFAULT false`);
      await tx.query(`CREATE TABLE IF NOT EXISTS ${s}.cursor (
        id integer PRIMARY KEY CHECK (id = 1),
        block bigint,
        reorg_to bigint)`);
      await tx.query(`INSERT INTO ${s}.cursor (id, block) VALUES (1, NULL) ON CONFLICT (id) DO NOTHING`);
      // The index's rows the feed was fed from (LockIndex.source); null: not known yet (a store made before it).
      await tx.query(`ALTER TABLE ${s}.cursor ADD COLUMN IF NOT EXISTS source text`);
      // The index's seal of the cursor block as fed (FedSeal): a reorg no signal told is found by it.
      await tx.query(`ALTER TABLE ${s}.cursor ADD COLUMN IF NOT EXISTS seal_from bigint`);
      await tx.query(`ALTER TABLE ${s}.cursor ADD COLUMN IF NOT EXISTS seal_digest text`);
      // An attempt in flight (claimed, its outcome not recorded; a worker that died lets it go with its lease), and
      // one whose block a reorg orphaned meanwhile: it ends as delivered or cancelled, never retried (orphan()).
      await tx.query(`ALTER TABLE ${s}.delivery ADD COLUMN IF NOT EXISTS leased boolean NOT NULL DEFAULT false`);
      await tx.query(`ALTER TABLE ${s}.delivery ADD COLUMN IF NOT EXISTS orphaned boolean NOT NULL DEFAULT false`);
      await tx.query(
        `CREATE INDEX IF NOT EXISTS delivery_orphaned ON ${s}.delivery (seq) WHERE orphaned AND status = 'pending'`,
      );
    });
  }

  /** The feed starts at `head` if it has not started yet (the first registration, before any head was fed). */
  async startFeedAt(head: bigint): Promise<void> {
    await this.sql.query(`UPDATE ${this.#s}.cursor SET block = $1 WHERE id = 1 AND block IS NULL`, [head.toString()]);
  }

  /** Null when the store already holds `max` webhooks (WEBHOOK_MAX, the deployment's: every replica's). */
  async create(url: string, topics: string[], secret: string, max: number): Promise<Subscription | null> {
    const id = newId("wh");
    const rows = await this.sql.transaction(async (tx) => {
      // One registration at a time per store, every replica's: under READ COMMITTED concurrent ones each counted
      // the rows before any of theirs and all inserted (40 at once past a max of 5 stored 7 to 17).
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`webhooks-create:${this.#s}`]);
      return tx.query<{ created_at: string }>(
        `INSERT INTO ${this.#s}.subscription (id, url, topics, secret)
         SELECT $1, $2, $3, $4 WHERE (SELECT count(*) FROM ${this.#s}.subscription) < $5
         RETURNING created_at`,
        [id, url, topics, secret, max],
      );
    });
    if (rows.length === 0) return null;
    return { id, url, topics, secret, createdAt: iso(rows[0]!.created_at)! };
  }

  async list(): Promise<SubscriptionSummary[]> {
    const rows = await this.sql.query(
      `SELECT s.id, s.url, s.topics, s.created_at,
              count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
              count(*) FILTER (WHERE d.status = 'dead')::int AS dead,
              min(d.created_at) FILTER (WHERE d.status = 'pending') AS oldest
         FROM ${this.#s}.subscription s LEFT JOIN ${this.#s}.delivery d ON d.subscription_id = s.id
        GROUP BY s.id ORDER BY s.created_at, s.id`,
    );
    return rows.map((r) => ({
      id: r.id as string,
      url: r.url as string,
      topics: r.topics as string[],
      createdAt: iso(r.created_at)!,
      pending: r.pending as number,
      dead: r.dead as number,
      oldestPendingAt: iso(r.oldest),
    }));
  }

  /** Every subscription with its topics, for the feeder. */
  async subscriptions(q: Query = this.sql): Promise<{ id: string; topics: string[] }[]> {
    return q.query<{ id: string; topics: string[] }>(`SELECT id, topics FROM ${this.#s}.subscription ORDER BY id`);
  }

  /** Whether any subscription exists (the worker polls the outbox only then). */
  async hasSubscriptions(): Promise<boolean> {
    const [row] = await this.sql.query<{ any: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#s}.subscription) AS any`,
    );
    return row?.any === true;
  }

  /** Deletes a subscription and its deliveries; false when there is none. */
  async remove(id: string): Promise<boolean> {
    const rows = await this.sql.query(`DELETE FROM ${this.#s}.subscription WHERE id = $1 RETURNING id`, [id]);
    return rows.length > 0;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.sql.query(`SELECT 1 FROM ${this.#s}.subscription WHERE id = $1`, [id])).length > 0;
  }

  async deliveries(filter: { status?: DeliveryStatus; webhook?: string; limit: number }): Promise<Delivery[]> {
    const rows = await this.sql.query(
      `SELECT id, subscription_id, block::text AS block, topic, type, status, attempts, next_attempt_at, last_error,
              created_at, delivered_at
         FROM ${this.#s}.delivery
        WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR subscription_id = $2)
        ORDER BY seq DESC LIMIT $3`,
      [filter.status ?? null, filter.webhook ?? null, filter.limit],
    );
    return rows.map((r) => ({
      id: r.id as string,
      webhook: r.subscription_id as string,
      blockNumber: r.block as string,
      topic: r.topic as string,
      type: r.type as string,
      status: r.status as DeliveryStatus,
      attempts: r.attempts as number,
      nextAttemptAt: r.status === "pending" ? iso(r.next_attempt_at) : null,
      lastError: (r.last_error as string | null) ?? null,
      createdAt: iso(r.created_at)!,
      deliveredAt: iso(r.delivered_at),
    }));
  }

  /** A subscription's dead deliveries back to pending, in their order, from now; how many. */
  async replay(id: string): Promise<number> {
    const rows = await this.sql.query(
      `UPDATE ${this.#s}.delivery SET status = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL
        WHERE subscription_id = $1 AND status = 'dead' RETURNING seq`,
      [id],
    );
    return rows.length;
  }

  /**
   * Runs `feed` holding the cursor (SELECT … FOR UPDATE): the one feeder of its blocks. `feed` is given the last block
   * fed (null before the first), the head the last reorg went down to, the index's rows it was fed from
   * (LockIndex.source; null: not known) and their seal at the cursor block (null: none read), and returns the block it
   * fed up to (the cursor's new value), the rows to insert, for a reorg the head it went down to, the source it read
   * and the seal at the new cursor block — all committed together, or nothing when it throws.
   */
  async feed(
    feed: (
      cursor: bigint | null,
      lastReorgTo: bigint | null,
      tx: Query,
      fedFrom: string | null,
      sealed: FedSeal | null,
    ) => Promise<{
      to: bigint;
      rows: NewDelivery[];
      reorgTo?: bigint;
      source?: string | null;
      /** Absent or null: none kept (the next feed checks nothing). */
      seal?: FedSeal | null;
    } | null>,
  ): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const [row] = await tx.query<{
        block: string | null;
        reorg_to: string | null;
        source: string | null;
        seal_from: string | null;
        seal_digest: string | null;
      }>(
        `SELECT block::text AS block, reorg_to::text AS reorg_to, source, seal_from::text AS seal_from, seal_digest
           FROM ${this.#s}.cursor WHERE id = 1 FOR UPDATE`,
      );
      const cursor = row?.block == null ? null : BigInt(row.block);
      const sealed =
        row?.seal_from == null || row.seal_digest == null
          ? null
          : { from: BigInt(row.seal_from), digest: row.seal_digest };
      const fed = await feed(
        cursor,
        row?.reorg_to == null ? null : BigInt(row.reorg_to),
        tx,
        row?.source ?? null,
        sealed,
      );
      if (!fed) return 0;
      for (const d of fed.rows) {
        await tx.query(
          // A subscription deleted meanwhile gets nothing (rather than failing the whole feed on its foreign key). One
          // with a dead delivery gets this one dead behind it: sent in order by the replay, never before it.
          `INSERT INTO ${this.#s}.delivery (id, subscription_id, block, topic, type, payload, status, last_error)
           SELECT $1::text, $2::text, $3::bigint, $4::text, $5::text, $6::text,
                  CASE WHEN dead THEN 'dead' ELSE 'pending' END,
                  CASE WHEN dead THEN 'an earlier delivery of its webhook went dead' END
             FROM (SELECT EXISTS (SELECT 1 FROM ${this.#s}.delivery WHERE subscription_id = $2 AND status = 'dead') AS dead) d
            WHERE EXISTS (SELECT 1 FROM ${this.#s}.subscription WHERE id = $2)`,
          [newId("msg"), d.subscription, d.block.toString(), d.topic, d.type, d.payload],
        );
      }
      await tx.query(
        `UPDATE ${this.#s}.cursor SET block = $1, reorg_to = coalesce($2, reorg_to), source = coalesce($3, source),
                seal_from = $4, seal_digest = $5
          WHERE id = 1`,
        [
          fed.to.toString(),
          fed.reorgTo?.toString() ?? null,
          fed.source ?? null,
          fed.seal?.from.toString() ?? null,
          fed.seal?.digest ?? null,
        ],
      );
      return fed.rows.length;
    });
  }

  /**
   * A reorg that orphaned the blocks from `from` up: their deliveries that a subscriber may have received (delivered,
   * or attempted at least once) for the feeder to revert, oldest first; and every undelivered one of them cancelled —
   * but one in flight, which stays its webhook's oldest undelivered until its attempt ends (delivered when
   * acknowledged, else cancelled: orphaned, never retried), so the revert fed behind it is sent after it, one at a
   * time as every delivery. In the feeder's transaction.
   */
  async orphan(tx: Query, from: bigint): Promise<{ id: string; subscription: string; block: bigint; topic: string }[]> {
    // Each is marked reverted as it is selected: told once, whichever reorg or switch comes next.
    const rows = await tx.query<{ id: string; subscription_id: string; block: string; topic: string }>(
      `WITH told AS (
         UPDATE ${this.#s}.delivery SET reverted = true
          WHERE block >= $1 AND type <> 'index.reverted' AND NOT reverted AND (status = 'delivered' OR attempts > 0)
          RETURNING seq, id, subscription_id, block, topic)
       SELECT id, subscription_id, block::text AS block, topic FROM told ORDER BY seq`,
      [from.toString()],
    );
    await tx.query(
      `UPDATE ${this.#s}.delivery
          SET status = CASE WHEN ${IN_FLIGHT} THEN status ELSE 'cancelled' END,
              orphaned = ${IN_FLIGHT},
              last_error = CASE WHEN ${IN_FLIGHT} THEN last_error ELSE 'orphaned by a reorg' END
        WHERE block >= $1 AND type <> 'index.reverted' AND status IN ('pending', 'dead')`,
      [from.toString()],
    );
    return rows.map((r) => ({ id: r.id, subscription: r.subscription_id, block: BigInt(r.block), topic: r.topic }));
  }

  /**
   * The deliveries of the index's events not reverted nor cancelled (sent or not), their blocks below `below` (null:
   * any), newest block first, the first `limit` blocks' worth: what the feeder checks against the index after it
   * switched (api/webhooks/engine.ts). In the feeder's transaction.
   */
  async unreverted(
    tx: Query,
    below: bigint | null,
    limit: number,
  ): Promise<{ block: bigint; topic: string; payload: string }[]> {
    const rows = await tx.query<{ block: string; topic: string; payload: string }>(
      `SELECT block::text AS block, topic, payload FROM ${this.#s}.delivery
        WHERE block IN (
          SELECT DISTINCT block FROM ${this.#s}.delivery
           WHERE ($1::bigint IS NULL OR block < $1) AND type <> 'index.reverted' AND NOT reverted AND status <> 'cancelled'
           ORDER BY block DESC LIMIT $2)
          AND type <> 'index.reverted' AND NOT reverted AND status <> 'cancelled'
        ORDER BY block DESC, seq`,
      [below?.toString() ?? null, limit],
    );
    return rows.map((r) => ({ block: BigInt(r.block), topic: r.topic, payload: r.payload }));
  }

  /**
   * Claims due deliveries, each the oldest undelivered of its subscriber (none while that one is dead: a row fed in
   * the instant it died may be pending behind it), for `leaseMs` (pushed into `next_attempt_at`, so no other worker
   * takes it meanwhile, and a worker that dies lets it go when the lease ends): up to `lanes.first` never attempted
   * (their subscriber's last delivery went through: the worker's shared slots) and up to `lanes.retries` attempted
   * before (their subscriber is backing off: its back-off slots), each lane oldest due first. `attempts` is the
   * claimed attempt's number (above 1: a retry).
   */
  async claim(lanes: { first: number; retries: number }, leaseMs: number): Promise<Claimed[]> {
    const s = this.#s;
    const rows = await this.sql.query<{
      seq: string;
      id: string;
      url: string;
      secret: string;
      payload: string;
      attempts: number;
    }>(
      `WITH let_go AS (
         UPDATE ${s}.delivery SET status = 'cancelled', leased = false, last_error = 'orphaned by a reorg'
          WHERE status = 'pending' AND orphaned AND next_attempt_at <= now()),
       heads AS (
         SELECT DISTINCT ON (subscription_id) seq FROM ${s}.delivery
          WHERE status IN ('pending', 'dead') AND NOT (orphaned AND next_attempt_at <= now())
          ORDER BY subscription_id, seq),
       first AS (
         SELECT d.seq FROM ${s}.delivery d JOIN heads h ON h.seq = d.seq
          WHERE d.status = 'pending' AND NOT d.orphaned AND d.next_attempt_at <= now() AND d.attempts = 0
          ORDER BY d.next_attempt_at, d.seq LIMIT $1
          FOR UPDATE OF d SKIP LOCKED),
       retries AS (
         SELECT d.seq FROM ${s}.delivery d JOIN heads h ON h.seq = d.seq
          WHERE d.status = 'pending' AND NOT d.orphaned AND d.next_attempt_at <= now() AND d.attempts > 0
          ORDER BY d.next_attempt_at, d.seq LIMIT $3
          FOR UPDATE OF d SKIP LOCKED),
       due AS (SELECT seq FROM first UNION ALL SELECT seq FROM retries)
       UPDATE ${s}.delivery d SET attempts = d.attempts + 1, leased = true,
              next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
         FROM due, ${s}.subscription sub
        WHERE d.seq = due.seq AND sub.id = d.subscription_id
       RETURNING d.seq::text AS seq, d.id, sub.url, sub.secret, d.payload, d.attempts`,
      [lanes.first, leaseMs, lanes.retries],
    );
    return rows;
  }

  /** The attempt `attempts` of `seq` succeeded; false when the delivery was no longer this attempt's. */
  async delivered(seq: string, attempts: number): Promise<boolean> {
    const rows = await this.sql.query(
      `UPDATE ${this.#s}.delivery SET status = 'delivered', delivered_at = now(), last_error = NULL, leased = false
        WHERE seq = $1 AND attempts = $2 AND status = 'pending' RETURNING seq`,
      [seq, attempts],
    );
    return rows.length > 0;
  }

  /**
   * The attempt failed: retried after `retryMs`, or — null, the schedule spent — dead, with every later pending
   * delivery of its subscriber (the endpoint failed for the whole schedule; a replay sends them all again, in order).
   */
  async failed(seq: string, attempts: number, error: string, retryMs: number | null): Promise<void> {
    const s = this.#s;
    // Orphaned while in flight: reverted already (its revert waits behind it), so never retried.
    const ended = await this.sql.query(
      `UPDATE ${s}.delivery SET status = 'cancelled', leased = false, last_error = $3
        WHERE seq = $1 AND attempts = $2 AND status = 'pending' AND orphaned RETURNING seq`,
      [seq, attempts, `orphaned by a reorg while in flight; ${error}`.slice(0, 500)],
    );
    if (ended.length > 0) return;
    if (retryMs !== null) {
      await this.sql.query(
        `UPDATE ${s}.delivery SET leased = false, last_error = $3, next_attempt_at = now() + make_interval(secs => $4::double precision / 1000)
          WHERE seq = $1 AND attempts = $2 AND status = 'pending'`,
        [seq, attempts, error.slice(0, 500), retryMs],
      );
      return;
    }
    await this.sql.transaction(async (tx) => {
      const rows = await tx.query<{ subscription_id: string }>(
        `UPDATE ${s}.delivery SET status = 'dead', leased = false, last_error = $3
          WHERE seq = $1 AND attempts = $2 AND status = 'pending' RETURNING subscription_id`,
        [seq, attempts, error.slice(0, 500)],
      );
      if (rows.length === 0) return;
      await tx.query(
        `UPDATE ${s}.delivery SET status = 'dead', last_error = 'an earlier delivery of its webhook went dead'
          WHERE subscription_id = $1 AND status = 'pending' AND seq > $2`,
        [rows[0]!.subscription_id, seq],
      );
    });
  }

  /** For the metrics: pending and dead deliveries, and the age (s) of the oldest pending one. */
  async backlog(): Promise<{ pending: number; dead: number; oldestPendingSeconds: number }> {
    const [row] = await this.sql.query<{ pending: number; dead: number; oldest: number | null }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
              count(*) FILTER (WHERE status = 'dead')::int AS dead,
              extract(epoch FROM now() - min(created_at) FILTER (WHERE status = 'pending'))::float8 AS oldest
         FROM ${this.#s}.delivery WHERE status IN ('pending', 'dead')`,
    );
    return { pending: row?.pending ?? 0, dead: row?.dead ?? 0, oldestPendingSeconds: row?.oldest ?? 0 };
  }
}
