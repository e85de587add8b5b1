/**
 * The webhooks of one process: its feeder and its worker, over the shared store (api/webhooks/store.ts).
 *
 * The feeder follows the index's signal (api/read/indexSignal.ts) as the streams do (api/index/streamHub.ts), with the
 * same topics and answers (api/live/): on each new head it takes the feed's cursor and, for each block since, each
 * subscription's topics that an event of the block concerns (Topic.concerns over LockIndex.changes), inserts one
 * delivery whose data is the topic's REST answer at that block (fetched through the route itself). A head told with a
 * revert at or below the cursor (or, where no revert is heard, a head below it) is a reorg: an `index.reverted`
 * delivery for each delivery of an orphaned block a subscriber may have received, the undelivered ones cancelled,
 * then every topic's answer at the new head, below the cursor or past it. The cursor keeps the index's seal of what
 * was fed (FedSeal: the digest of the index's events up to the cursor block), read again on every feed: a revert is
 * handled when the cursor's last reorg landed on its head and the seal holds (another process fed it: a second reorg
 * on the same height replaced what the first fed, and the seal says so), and a seal that no longer holds
 * is a reorg no signal told (every process down, or the one LISTEN connection dropped, as it happened), reverted
 * from the lowest fed block whose answer differs now. The index moving to another schema (a
 * redeploy, a re-index after a reorg Ponder could not revert) is heard as no revert: the cursor names the schema it
 * was fed from, and on a change what was fed is answered again at its block, the lowest that differs fed as a reorg
 * from it. Each delivery is reverted once at most. Whichever process holds the cursor feeds;
 * the others find it moved and feed nothing.
 *
 * The worker, in every process, keeps a pool of attempts: it claims due deliveries (each subscriber's oldest
 * undelivered, when pending) into its free slots — shared ones, or back-off ones for a subscriber retrying, so a receiver
 * that hangs holds back no other (SHARED_SLOTS) — and POSTs them signed; a failure is retried on the schedule
 * (WEBHOOK_RETRY_SCHEDULE), then dead until an operator replays it. It polls the
 * outbox only while a subscription exists: with none there can be no delivery (deleting a subscription deletes its
 * deliveries), so an idle deployment costs one look at the subscriptions every 10 s (one registered by another
 * replica) instead of a claim every 500 ms. A registration, a replay or a feed with subscriptions in this process
 * wakes it at once.
 */
import { timeOfBlock } from "../live/blockTime";
import type { AnswerFetcher } from "../live/routeAnswers";
import { topicAnswer } from "../live/topicAnswer";
import type { Topic } from "../live/topics";
import type { Logger } from "../observability/logger";
import { causeOf } from "../observability/throttle";
import type { WebhookMetrics } from "../observability/webhookMetrics";
import type { BlockChange } from "../read/contract";
import type { IndexRuntime } from "../read/runtime";
import { postWebhook } from "./send";
import { signedHeaders } from "./signature";
import type { Claimed, FedSeal, NewDelivery, WebhookStore } from "./store";
import type { PrivateTargets } from "./target";
import { parseWebhookTopic } from "./topics";

export type WebhookSettings = {
  /** OPERATOR_TOKEN: the bearer the routes ask for; null: the routes answer 401 to everyone. */
  operatorToken: string | null;
  /** WEBHOOK_ALLOW_PRIVATE: which non-public targets are allowed. */
  allowPrivate: PrivateTargets;
  /** WEBHOOK_RETRY_SCHEDULE: the waits (ms) before each retry; spent, the delivery is dead. */
  retryScheduleMs: readonly number[];
  /** WEBHOOK_TIMEOUT_MS: one attempt's whole exchange. */
  timeoutMs: number;
  /** WEBHOOK_MAX: subscriptions in the deployment. */
  maxSubscriptions: number;
};

/**
 * After the index switched schemas, how many fed blocks in a row must still hold, below the lowest that does not,
 * before the check stops (#replaced); and how many fed blocks it reads at a time.
 */
const RECHECK_RUN = 256;
const RECHECK_PAGE_BLOCKS = 64;

/**
 * Whether an answer fed still is the index's (`now`, null: none there now). `indexLagSeconds` and `stale` say the
 * moment of the answer, not its block (api/index/answer.ts): they are not compared.
 */
function sameAnswer(fed: unknown, now: string | null): boolean {
  if (now === null) return false;
  const strip = (a: unknown) => {
    const { indexLagSeconds: _lag, stale: _stale, ...rest } = a as Record<string, unknown>;
    return JSON.stringify(rest);
  };
  return strip(fed) === strip(JSON.parse(now));
}

/** Whether two sources (WebhookEngine #source) name one build; a source recorded without its build names none. */
function sameBuild(a: string, b: string): boolean {
  const build = (source: string) => {
    const cut = source.lastIndexOf("#");
    return cut === -1 || source.slice(cut + 1) === "-" ? null : source.slice(cut + 1);
  };
  return build(a) !== null && build(a) === build(b);
}

/** Blocks one feeding step covers (a process back after a long stop feeds in steps of this many). */
const FEED_STEP_BLOCKS = 500n;
/**
 * A worker's attempts in flight, each of a different subscriber (one at a time per webhook keeps its block order),
 * in three counts, so a receiver that hangs (each attempt lasting up to WEBHOOK_TIMEOUT_MS) delays no other:
 * - SHARED_SLOTS for the first attempts of the webhooks in good standing (their last delivery went through), each
 *   held for at most `slowAfterMs` (WebhookTiming): an attempt still unanswered then is counted slow and its slot
 *   goes to the next due delivery at once;
 * - BACKOFF_SLOTS for the retries of the webhooks backing off (their last attempt failed: a receiver down, erring or
 *   timing out), which never take a shared slot;
 * - in all, the slow ones included, SHARED_SLOTS + BACKOFF_SLOTS + WEBHOOK_MAX (maxInFlight): an attempt is a socket
 *   and a timer, and a webhook has at most one in flight, so the slow ones (one per hanging receiver) never fill it.
 *   A fixed 128 did: 160 new receivers that never answer held every slot, slow, and a healthy receiver's deliveries
 *   waited for their timeouts (6–10 s, red team rthook 4).
 * So a healthy receiver's delivery waits for a shared slot at most `slowAfterMs`, and only while SHARED_SLOTS new
 * receivers hang at once (each once: then it is backing off); however many receivers hang, they hold back-off slots.
 */
const SHARED_SLOTS = 32;
const BACKOFF_SLOTS = 32;
/**
 * The attempts a worker holds in flight at most: room for every webhook's one besides the shared and back-off slots,
 * up to MAX_IN_FLIGHT descriptors (a WEBHOOK_MAX above ~4,000 whose receivers all hang at once meets it).
 */
export const maxInFlight = (settings: Pick<WebhookSettings, "maxSubscriptions">): number =>
  Math.min(SHARED_SLOTS + BACKOFF_SLOTS + settings.maxSubscriptions, MAX_IN_FLIGHT);
const MAX_IN_FLIGHT = 4_096;

/** Which count an attempt in flight is in (see SHARED_SLOTS). */
type Lane = "shared" | "slow" | "backoff";

/** The engine's clocks (a test shortens them). */
export type WebhookTiming = {
  /** How often a worker with subscriptions looks for due deliveries (a feeder in the same process wakes it at once). */
  pollMs: number;
  /** How often it asks whether any subscription exists: one registered by another replica, or the last deleted. */
  subscribedCheckMs: number;
  /** How often the backlog gauges are read (with no subscription they are zero, read from nothing). */
  backlogMs: number;
  /** How long an attempt holds a shared slot before it is counted slow (SHARED_SLOTS). */
  slowAfterMs: number;
};

export const WEBHOOK_TIMING: WebhookTiming = {
  pollMs: 500,
  subscribedCheckMs: 10_000,
  backlogMs: 5_000,
  slowAfterMs: 250,
};

/**
 * The delivery's body: Standard Webhooks' `{ type, timestamp, data }`, the answer's JSON text embedded as is. Stored
 * as made, so `timestamp` is when the delivery's body was made in its feed (the spec's "timestamp of the event"; the
 * row's created_at is the feed transaction's start, up to the answers' reads before it), the same on every retry; each
 * attempt's time is its `webhook-timestamp` header.
 */
function payload(type: string, data: string): string {
  return `{"type":"${type}","timestamp":"${new Date().toISOString()}","data":${data}}`;
}

const answerData = (topic: Followed, block: bigint, answer: string) =>
  `{"topic":${JSON.stringify(topic.text)},"blockNumber":"${block}","answer":${answer}}`;

export class WebhookEngine {
  #queue: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | undefined;
  #timers: NodeJS.Timeout[] = [];
  #working = false;
  #again = false;
  #stopped = false;
  /** The attempts in flight, each with its count (Lane). */
  #inFlight = new Map<Promise<unknown>, { lane: Lane }>();
  #lastSignal: bigint | null = null;
  /** Whether a subscription exists, as last seen: the worker polls the outbox only while it does. */
  #subscribed = false;
  /** Bumped by each wake(): a look at the subscriptions begun before it may not put the worker back to sleep. */
  #wakes = 0;

  constructor(
    readonly store: WebhookStore,
    readonly ready: () => Promise<void>,
    readonly rt: IndexRuntime,
    readonly fetchAnswer: AnswerFetcher,
    readonly settings: WebhookSettings,
    readonly logger: Logger,
    readonly metrics?: WebhookMetrics,
    readonly timing: WebhookTiming = WEBHOOK_TIMING,
  ) {}

  /** Whether the worker polls the outbox now (a subscription exists, as last seen). */
  get polling(): boolean {
    return this.#subscribed;
  }

  start(): void {
    const signal = this.rt.signal;
    if (signal) {
      this.#unsubscribe = signal.subscribe((head, _time, reverted) => {
        // A reorg is told with the head (the revert heard), or shows as this process's own heads going down; a head
        // below the cursor that is neither is only this process being behind another that fed further.
        const dropped = this.#lastSignal !== null && head < this.#lastSignal ? head : null;
        this.#lastSignal = head;
        this.#enqueue(() => this.#feed(head, reverted?.from ?? dropped));
      });
    }
    // The head now, without waiting for the next block: a deployment's first feed starts here, and a process back after
    // every process was down feeds the blocks indexed meanwhile (an index not started yet waits for its signal).
    this.#enqueue(async () => {
      const head = await this.rt.index.probe(null).then(
        (p) => p.head.block,
        () => null,
      );
      if (head !== null) await this.#feed(head, null);
    });
    const poll = setInterval(() => {
      if (this.#subscribed) this.kick();
    }, this.timing.pollMs);
    const check = setInterval(() => void this.#checkSubscribed(), this.timing.subscribedCheckMs);
    const backlog = setInterval(() => void this.#readBacklog(), this.timing.backlogMs);
    for (const t of [poll, check, backlog]) {
      t.unref();
      this.#timers.push(t);
    }
    // Subscriptions left by an earlier run (or another replica) are polled for from the start.
    void this.#checkSubscribed().then(() => this.#readBacklog());
  }

  /**
   * A subscription exists (one was registered, or a replay re-queued deliveries, in this process): the worker polls
   * from now on, starting at once.
   */
  wake(): void {
    this.#wakes++;
    this.#subscribed = true;
    this.kick();
  }

  /** Whether any subscription exists; a database away keeps what was last seen (the worker's warning says why). */
  async #checkSubscribed(): Promise<void> {
    if (this.#stopped) return;
    const wakes = this.#wakes;
    try {
      await this.ready();
      const any = await this.store.hasSubscriptions();
      if (any) {
        if (!this.#subscribed) this.wake();
      } else if (wakes === this.#wakes) {
        this.#subscribed = false;
      }
    } catch {
      // kept as last seen
    }
  }

  /** Stops feeding and claiming; waits (bounded by the attempts' timeout) for the attempts in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    for (const t of this.#timers) clearInterval(t);
    await Promise.allSettled([this.#queue, ...this.#inFlight.keys()]);
  }

  #enqueue(work: () => Promise<void>): void {
    this.#queue = this.#queue.then(work).catch((error: unknown) => {
      this.rt.warn("webhook feed", "webhook feed failed", { error: (error as Error).name, cause: causeOf(error) });
    });
  }

  /**
   * Feeds up to `head`, in steps of FEED_STEP_BLOCKS. `orphaned`: the first block a reorg this process saw replaced
   * — fed as one if the cursor had reached it, unless the cursor's last reorg already landed on this head (another
   * process saw it first).
   */
  async #feed(head: bigint, orphaned: bigint | null): Promise<void> {
    if (this.#stopped) return;
    await this.ready();
    for (;;) {
      let reached = head;
      let subscribed = false;
      const added = await this.store.feed(async (cursor, lastReorgTo, tx, fedFrom, sealed) => {
        const source = () => this.#source();
        // The first feed of a deployment starts at the head: webhooks announce what is indexed from now on.
        // Nothing fed yet, nothing to check later: no seal.
        if (cursor === null) return { to: head, rows: [], source: await source(), seal: null };
        // Whether the index still holds what was fed up to the cursor (null: no seal to tell, or the index below it).
        const holds = sealed === null ? null : await this.#holds(cursor, sealed);
        // A revert is handled when the cursor's last reorg landed on its head (another process saw it first) and the
        // seal fed then still holds: a second reorg landing on the same height replaced what that one fed.
        const pending = lastReorgTo !== head || holds === false;
        const signalled = orphaned !== null && orphaned <= cursor && pending ? orphaned : null;
        // A head below the cursor with no revert is this process behind another; a seal found not to hold is fed as a
        // reorg at a head at or past the cursor (the index has it: the seal was read there).
        if (signalled === null && (head < cursor || (head === cursor && holds !== false))) return null;
        const from = await source();
        const subscriptions = (await this.store.subscriptions(tx)).map((s) => ({
          id: s.id,
          topics: topicsOf(s.topics),
        }));
        if (subscriptions.length > 0) subscribed = true;
        // Another schema's rows (a redeploy, a re-index after a reorg Ponder could not revert): no revert is heard
        // for what they lack, so what was fed is checked against them, and a difference is a reorg from its block.
        const switched = from !== null && fedFrom !== null && from !== fedFrom;
        // A redeploy's new schema is ready before it has indexed the blocks mined meanwhile: what was fed above its
        // head cannot be checked yet, so nothing is fed (nor the switch recorded) until it has caught up.
        if (switched && head < cursor) return null;
        if (switched) {
          // This process's answers kept by block are the old schema's rows (a same-build re-index is no new build).
          for (const memo of [this.rt.stats, this.rt.boards, this.rt.durationBoards]) memo.forgetAll();
        }
        // Only a re-index of the same build is checked (the runbook's recovery): another build's answers may be shaped
        // otherwise (a field added or renamed), and every delivery fed would differ — reverted, however old.
        const recheck = switched && sameBuild(from, fedFrom);
        const replaced = recheck ? await this.#replaced(tx, cursor) : null;
        // The seal no longer holds and no signal told why: a reorg replaced events fed (while no process listened).
        // What was fed since the seal's range began is answered again; the lowest block that differs is reverted from,
        // and, none differing, every topic's answer at the head is sent (what the new branch changed elsewhere).
        let unheard: bigint | null = null;
        if (holds === false && signalled === null && !switched && sealed !== null) {
          for (const memo of [this.rt.stats, this.rt.boards, this.rt.durationBoards]) memo.forgetAll();
          unheard = (await this.#replaced(tx, cursor, sealed.from)) ?? cursor + 1n;
          this.logger.warn("webhook feed found a reorg no signal told", {
            cursor: String(cursor),
            from: String(unheard),
          });
        }
        const reorg = [signalled, replaced, unheard].reduce<bigint | null>(
          (low, b) => (b === null ? low : low === null || b < low ? b : low),
          null,
        );
        if (reorg !== null) {
          const seal = await this.#seal(head);
          const rows = await this.#reorg(tx, reorg, head, subscriptions);
          await this.#sameSource(from);
          return { to: head, rows, reorgTo: head, source: from, seal };
        }
        reached = head - cursor > FEED_STEP_BLOCKS ? cursor + FEED_STEP_BLOCKS : head;
        // With no subscription nothing is fed, so nothing can be replaced: no seal to keep.
        if (subscriptions.length === 0) return { to: reached, rows: [], source: from, seal: null };
        // Read before the answers: a reorg between the two leaves a seal of the older branch, found not to hold.
        const seal = await this.#seal(reached);
        // A windowed board's entries leave it as time passes: their exits since the cursor block's time (a time
        // that cannot be had, the node down, costs the range's exits, not its events).
        const exits = subscriptions.some((sub) => sub.topics.some((t) => t.exits));
        const since = exits ? await timeOfBlock(this.rt, cursor).catch(() => null) : null;
        const changes = (await this.rt.index.changes(cursor + 1n, reached, since)).value;
        const rows = await this.#blocks(changes, subscriptions);
        await this.#sameSource(from);
        return { to: reached, rows, source: from, seal };
      });
      // Steps after the first read the new branch: what they feed is not the reorg's to revert.
      orphaned = null;
      if (subscribed && !this.#subscribed) this.wake();
      else if (added > 0) this.kick();
      if (reached >= head || this.#stopped) return;
    }
  }

  /** For each block with changes (ascending), each subscription's topics that changed in it. */
  async #blocks(changes: BlockChange[], subscriptions: Subscribed[]): Promise<NewDelivery[]> {
    const byBlock = new Map<bigint, BlockChange[]>();
    for (const c of changes) {
      const list = byBlock.get(c.block);
      if (list) list.push(c);
      else byBlock.set(c.block, [c]);
    }
    const rows: NewDelivery[] = [];
    for (const [block, list] of [...byBlock].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const wanted = subscriptions.map((s) => ({
        ...s,
        topics: s.topics.filter((t) => list.some((c) => t.concerns(c))),
      }));
      rows.push(...(await this.#answers(block, wanted)));
    }
    return rows;
  }

  /**
   * The index's rows and the build that wrote them, as `<schema>:<oid>#<build id>` (LockIndex.sourceHead: the source
   * and the head's build, one statement); null when the index cannot say.
   */
  async #source(): Promise<string | null> {
    const read = await this.rt.index.sourceHead?.();
    return read == null ? null : `${read.source}#${read.head.build ?? "-"}`;
  }

  /**
   * The index's seal at `block` (FedSeal), from its finalized block down to a multiple of 64 (atBlock.ts SEAL_STEP);
   * null when the block is final (never rewritten), not indexed, or the index reads no seal (a stand-in).
   */
  async #seal(block: bigint): Promise<FedSeal | null> {
    if (!this.rt.index.seal) return null;
    // The seal does not depend on the block's time: any is given, so no time is looked up.
    const read = await this.rt.index.seal({ block, time: 0n }, { from: null });
    return read.inRange && read.seal ? { from: read.seal.from, digest: read.seal.digest } : null;
  }

  /** Whether the index's events up to the cursor block are still those fed (`sealed`); null: it cannot tell now. */
  async #holds(cursor: bigint, sealed: FedSeal): Promise<boolean | null> {
    if (!this.rt.index.seal) return null;
    const read = await this.rt.index.seal({ block: cursor, time: 0n }, { from: sealed.from });
    if (!read.inRange || !read.seal) return null;
    return read.seal.digest === sealed.digest;
  }

  /**
   * The views moved to another schema while this feed read: what it read may be either's, so nothing of it is kept
   * (the transaction rolls back) and the next head feeds again, from the new one.
   */
  async #sameSource(source: string | null): Promise<void> {
    if (source === null) return;
    const now = await this.#source();
    if (now != null && now !== source) throw new Error(`the index moved from ${source} to ${now} during the feed`);
  }

  /**
   * After the index switched schemas (or its seal no longer holds: above `floor` only), the lowest block at which a
   * delivery fed (sent or not, not reverted) is not
   * what the index now answers for its topic there — the new rows lack its event, or hold another —, or null. Walks
   * the fed blocks down from the cursor, and stops after RECHECK_RUN blocks in a row that all still hold below the
   * lowest one that does not (a reorg's two branches share every block below the fork; the sync cache's rewind uses
   * the same run): a redeploy that rewrites only older blocks is not told.
   */
  async #replaced(
    tx: Parameters<WebhookStore["orphan"]>[0],
    cursor: bigint,
    floor: bigint | null = null,
  ): Promise<bigint | null> {
    const answers = new Map<string, Promise<string | null>>();
    let lowest: bigint | null = null;
    let run = 0;
    let below: bigint | null = cursor + 1n;
    while (run < RECHECK_RUN) {
      const page = await this.store.unreverted(tx, below, RECHECK_PAGE_BLOCKS);
      // Only the blocks above `floor` (a seal's range: nothing at or below it was replaced).
      const fed = floor === null ? page : page.filter((d) => d.block > floor);
      if (fed.length === 0) break;
      let block: bigint | null = null;
      let holds = true;
      for (const d of [...fed, null]) {
        if (d === null || d.block !== block) {
          if (block !== null) {
            if (holds) run++;
            else [lowest, run] = [block, 0];
            if (run >= RECHECK_RUN) break;
          }
          if (d === null) break;
          [block, holds] = [d.block, true];
        }
        if (!holds) continue;
        let topic: Topic;
        try {
          topic = parseWebhookTopic(d.topic);
        } catch {
          continue; // a topic this build no longer knows: never fed again, nothing to compare
        }
        const key = `${topic.key}@${d.block}`;
        let now = answers.get(key);
        if (!now) {
          now = topicAnswer(topic, this.fetchAnswer, d.block);
          answers.set(key, now);
        }
        if (!sameAnswer((JSON.parse(d.payload) as { data: { answer: unknown } }).data.answer, await now)) holds = false;
      }
      below = fed.at(-1)!.block;
      if (fed.length < page.length) break;
    }
    return lowest;
  }

  /** The reverted deliveries of the orphaned blocks (`from` up), then every subscription's topics at the new head. */
  async #reorg(tx: Parameters<WebhookStore["orphan"]>[0], from: bigint, head: bigint, subscriptions: Subscribed[]) {
    const orphans = await this.store.orphan(tx, from);
    const rows: NewDelivery[] = orphans.map((o) => ({
      subscription: o.subscription,
      block: o.block,
      topic: o.topic,
      type: "index.reverted",
      payload: payload(
        "index.reverted",
        `{"topic":${JSON.stringify(o.topic)},"blockNumber":"${o.block}","revertedId":${JSON.stringify(o.id)},"head":"${head}"}`,
      ),
    }));
    rows.push(...(await this.#answers(head, subscriptions)));
    return rows;
  }

  /** One delivery per subscription and topic at `block`: the topic's answer there, each fetched once. */
  async #answers(block: bigint, subscriptions: Subscribed[]): Promise<NewDelivery[]> {
    const answers = new Map<string, Promise<string | null>>();
    const answer = (t: Topic) => {
      let a = answers.get(t.key);
      if (!a) {
        a = topicAnswer(t, this.fetchAnswer, block);
        answers.set(t.key, a);
      }
      return a;
    };
    const rows: NewDelivery[] = [];
    for (const s of subscriptions) {
      for (const t of s.topics) {
        const text = await answer(t);
        if (text === null) continue;
        const type = `index.${t.event}`;
        rows.push({
          subscription: s.id,
          block,
          topic: t.text,
          type,
          payload: payload(type, answerData(t, block, text)),
        });
        this.metrics?.enqueued.inc({ type });
      }
    }
    return rows;
  }

  /** Wakes the worker now (a feed added deliveries, a replay re-queued some, an attempt freed a slot). */
  kick(): void {
    if (this.#stopped) return;
    if (this.#working) {
      this.#again = true;
      return;
    }
    this.#working = true;
    void this.#fill().finally(() => {
      this.#working = false;
      if (this.#again) {
        this.#again = false;
        this.kick();
      }
    });
  }

  /**
   * Claims due deliveries into the free slots (SHARED_SLOTS), without waiting for the attempts: each one's end (or its
   * passing `slowAfterMs`) frees its slot and kicks again, so the next due delivery (of any subscriber) goes at once.
   * A subscriber's delivery in flight is leased, so its later ones are not due: one at a time per subscriber, in order.
   */
  async #fill(): Promise<void> {
    try {
      await this.ready();
      if (this.#stopped) return;
      const held = { shared: 0, slow: 0, backoff: 0 };
      for (const { lane } of this.#inFlight.values()) held[lane]++;
      const room = maxInFlight(this.settings) - this.#inFlight.size;
      const first = Math.max(0, Math.min(SHARED_SLOTS - held.shared, room));
      const retries = Math.max(0, Math.min(BACKOFF_SLOTS - held.backoff, room - first));
      if (first === 0 && retries === 0) return;
      const lease = this.settings.timeoutMs + 30_000;
      const claimed = await this.store.claim({ first, retries }, lease);
      for (const d of claimed) this.#start(d, d.attempts > 1 ? "backoff" : "shared");
    } catch (error) {
      this.#warnWorker(error);
    }
  }

  /** One attempt in flight in `lane`; a shared one is counted slow after `slowAfterMs`, freeing its slot. */
  #start(d: Claimed, lane: Lane): void {
    const slot = { lane };
    const attempt = this.#attempt(d);
    this.#inFlight.set(attempt, slot);
    const slow =
      lane === "shared"
        ? setTimeout(() => {
            slot.lane = "slow";
            this.kick();
          }, this.timing.slowAfterMs)
        : undefined;
    slow?.unref();
    void attempt
      .catch((error: unknown) => this.#warnWorker(error))
      .finally(() => {
        clearTimeout(slow);
        this.#inFlight.delete(attempt);
        this.kick();
      });
  }

  #warnWorker(error: unknown): void {
    this.rt.warn("webhook worker", "webhook worker failed", { error: (error as Error).name, cause: causeOf(error) });
  }

  async #attempt(d: Claimed): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    const result = await postWebhook({
      url: d.url,
      body: d.payload,
      headers: signedHeaders(d.secret, d.id, timestamp, d.payload),
      timeoutMs: this.settings.timeoutMs,
      allow: this.settings.allowPrivate,
    });
    if (result.ok) {
      await this.store.delivered(d.seq, d.attempts);
      this.metrics?.attempts.inc({ outcome: "delivered" });
      return;
    }
    const retryMs = this.settings.retryScheduleMs[d.attempts - 1] ?? null;
    await this.store.failed(d.seq, d.attempts, result.error, retryMs);
    this.metrics?.attempts.inc({ outcome: retryMs === null ? "dead" : "retry" });
    if (retryMs === null)
      this.logger.warn("webhook delivery dead", { id: d.id, attempts: d.attempts, error: result.error });
  }

  async #readBacklog(): Promise<void> {
    if (!this.metrics) return;
    if (!this.#subscribed) {
      // No subscription, no delivery (they go with it): nothing to read.
      this.metrics.pending.set(0);
      this.metrics.dead.set(0);
      this.metrics.oldestPendingSeconds.set(0);
      return;
    }
    try {
      await this.ready();
      const b = await this.store.backlog();
      this.metrics.pending.set(b.pending);
      this.metrics.dead.set(b.dead);
      this.metrics.oldestPendingSeconds.set(Math.round(b.oldestPendingSeconds));
    } catch {
      // the database is away: the gauges keep their last reading, the worker's warning says why
    }
  }
}

/**
 * A topic a webhook follows, with the string it was registered as: what its deliveries name in `data.topic` (and the
 * deliveries list), so a receiver routes by the string it registered — not the topic's key, which is the answers'
 * memo key (`account:` lower-cased, `activity:` with its kinds).
 */
type Followed = Topic & { text: string };

type Subscribed = { id: string; topics: Followed[] };

/** A subscription's stored topics; one this build no longer knows is skipped (it was valid when registered). */
function topicsOf(texts: string[]): Followed[] {
  const topics: Followed[] = [];
  for (const text of texts) {
    try {
      topics.push({ ...parseWebhookTopic(text), text });
    } catch {
      // skipped
    }
  }
  return topics;
}
