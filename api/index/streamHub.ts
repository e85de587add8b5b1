/**
 * The streams of one process and the one loop that feeds them. The index's signal (api/read/indexSignal.ts: one
 * LISTEN connection per process) names each new head; the hub reads, once per head for all its streams, who the events
 * of the new blocks concern (LockIndex.changes), and for each stream and each block in which one of its topics
 * changed writes one event whose data is the REST route's answer at that block — fetched once per topic and block
 * however many streams follow it, through the route itself (no second query path). A head told with a revert at or
 * below the last one (or, where no revert is heard, a head below the last one) is a reorg: every stream is told which
 * blocks were orphaned by its own catch-up, which replays the new branch's blocks up to the new head as a resumed
 * stream's (one still catching up first sends the blocks below them it had not reached). When a
 * stream follows a windowed duration board, the hub also asks which board entries left a window since the last
 * head's timestamp (it keeps that timestamp; else the block clock or the node gives it).
 */
import { timeOfBlock } from "../live/blockTime";
import type { AnswerFetcher } from "../live/routeAnswers";
import { topicAnswer } from "../live/topicAnswer";
import type { Topic } from "../live/topics";
import type { StreamMetrics } from "../observability/streamMetrics";
import { causeOf } from "../observability/throttle";
import type { AtBlock, BlockChange } from "../read/contract";
import type { Reverted } from "../read/indexSignal";
import { type HeardReorg, replacedFrom } from "../read/reorgLog";
import type { IndexRuntime } from "../read/runtime";
import { reconnectDelays, STREAM_RETRY_MS } from "./reconnectSpread";

export type StreamLimits = { max: number; perIp: number; heartbeatMs: number; replayBlocks: number };

/** Bytes of answer text the hub keeps for all its streams (the shared answers), oldest out. */
export const STREAM_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * The answers by topic and block, shared by every stream, bounded by the bytes of their text (one char a byte: the
 * answers are ASCII JSON), oldest first out: a board's first page is ~100 kB, a lock's 1 kB, so a count says nothing
 * of the memory. A failed read is not remembered (the next stream or block asks again).
 */
export class AnswerMemo {
  readonly #kept = new Map<string, { answer: Promise<string | null>; bytes: number }>();
  #bytes = 0;

  constructor(readonly maxBytes = STREAM_ANSWER_BYTES) {}

  /** Bytes of the settled answers kept now. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#kept.size;
  }

  get(key: string, fetch: () => Promise<string | null>): Promise<string | null> {
    const found = this.#kept.get(key);
    if (found) return found.answer;
    const entry = { answer: fetch(), bytes: 0 };
    this.#kept.set(key, entry);
    entry.answer.then(
      (text) => {
        if (this.#kept.get(key) !== entry) return;
        entry.bytes = text?.length ?? 0;
        this.#bytes += entry.bytes;
        this.#fit();
      },
      () => {
        if (this.#kept.get(key) === entry) this.#kept.delete(key);
      },
    );
    return entry.answer;
  }

  /** Oldest out until the bytes fit; the newest answer stays whatever its size (its streams are being written). */
  #fit(): void {
    for (const [key, entry] of this.#kept) {
      if (this.#bytes <= this.maxBytes || this.#kept.size === 1) return;
      this.#kept.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}

/**
 * Topic answers one #answersAt call reads at once. The past lane computes one ranking at a time (its one slot), so a
 * second read waiting keeps the slot busy and more gain nothing; each waits behind at most one computation, well
 * within INDEX_COMPUTE_WAIT_MS, and the queue stays free for clients.
 */
export const HUB_READS_AT_ONCE = 2;

/** Bytes a stream may have waiting in the server before it counts as unread and is closed. */
export const STREAM_MAX_QUEUED_BYTES = 1024 * 1024;

const encoder = new TextEncoder();

/**
 * Where a served stream writes: Node's ServerResponse itself (node:http), so an idle stream holds the socket and its
 * response and nothing else — no web stream, Request, Response or context kept alive per stream.
 */
export type EventSink = {
  write(chunk: string): boolean;
  /** Its connection is gone (the client hung up): nothing written reaches anyone. */
  readonly destroyed: boolean;
  readonly writableLength: number;
  /** Past its high-water mark: a paced writer waits for 'drain' (or 'close'). */
  readonly writableNeedDrain: boolean;
  once(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
  end(): unknown;
  destroy(error?: Error): unknown;
};

/** One open stream: its topics, and where it writes — a sink (served), or the ReadableStream `body` (in process). */
export class EventStream {
  #body: ReadableStream<Uint8Array> | undefined;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly #sink: EventSink | undefined;
  #closed = false;
  /** Paced writers waiting for the in-process reader to pull (the served sink's own 'drain' wakes the others). */
  #pulled: (() => void)[] = [];
  /**
   * Whether the stream is still being caught up (its answers at the head, or the blocks it missed) by its own paced
   * loop: the hub's heads pass it by until the loop has caught it up to the hub's last head.
   */
  catchingUp = true;
  /**
   * A reorg the stream has not been told yet: its catch-up tells it when it has sent the blocks below the lowest one
   * the reorg may have replaced (at once when it is past them), then replays the new branch from there.
   */
  reorg: StreamReorg | null = null;
  onClose: () => void = () => {};

  constructor(
    readonly topics: readonly Topic[],
    readonly ip: string,
    readonly metrics: StreamMetrics | undefined,
    sink?: EventSink,
  ) {
    this.#sink = sink;
    if (sink) return;
    this.#body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          for (const wake of this.#pulled.splice(0)) wake();
        },
        cancel: () => this.close(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
    );
  }

  get body(): ReadableStream<Uint8Array> {
    if (!this.#body) throw new Error("a served stream writes to its response");
    return this.#body;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes raw SSE text; a stream whose client has left STREAM_MAX_QUEUED_BYTES unread is closed instead. */
  write(text: string): void {
    if (this.#closed) return;
    const sink = this.#sink;
    if (sink) {
      // A response whose connection closed without this stream hearing it (its "close" came before the stream was
      // opened) is closed on its next write — the next heartbeat at the latest — instead of holding its slots for good.
      if (sink.destroyed) {
        this.close();
        return;
      }
      if (sink.writableLength > STREAM_MAX_QUEUED_BYTES) {
        this.metrics?.dropped.inc({ reason: "unread" });
        this.close(new Error("the client left its events unread"));
        return;
      }
      sink.write(text);
      return;
    }
    const size = this.#controller.desiredSize;
    if (size !== null && size < -STREAM_MAX_QUEUED_BYTES) {
      this.metrics?.dropped.inc({ reason: "unread" });
      // Errored, not closed: the queue is discarded at once and the response aborted, not flushed to a non-reader.
      this.close(new Error("the client left its events unread"));
      return;
    }
    this.#controller.enqueue(encoder.encode(text));
  }

  /**
   * Resolves when the client has taken what was written down to the sink's high-water mark (true), or the stream has
   * closed (false). A catch-up writes through it, so a reader gets the whole replay at its own pace; a client that
   * never reads stays behind this until the send timeout (SEND_TIMEOUT_MS, api/server/sendTimeout.ts) closes its socket.
   */
  async ready(): Promise<boolean> {
    if (this.#closed) return false;
    const sink = this.#sink;
    if (sink) {
      if (!sink.writableNeedDrain) return true;
      await new Promise<void>((resolve) => {
        const done = () => {
          sink.off("drain", done);
          sink.off("close", done);
          resolve();
        };
        sink.once("drain", done);
        sink.once("close", done);
      });
    } else {
      const size = this.#controller.desiredSize;
      if (size === null || size > 0) return !this.#closed;
      await new Promise<void>((resolve) => this.#pulled.push(resolve));
    }
    return !this.#closed;
  }

  event(id: bigint, event: string, data: string): void {
    this.write(`id: ${id}\nevent: ${event}\ndata: ${data}\n\n`);
    // Counted when written: not for a stream closed before (or by) this write.
    if (!this.#closed) this.metrics?.events.inc({ event });
  }

  close(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.catchingUp = false;
    for (const wake of this.#pulled.splice(0)) wake();
    try {
      if (this.#sink) {
        // Destroyed, not ended, when unread: what is queued is let go, not flushed to a client that does not read.
        if (error) this.#sink.destroy();
        else this.#sink.end();
      } else if (error) this.#controller.error(error);
      else this.#controller.close();
    } catch {
      // already closed or errored by the reader
    }
    this.onClose();
  }
}

export class StreamHub {
  readonly #streams = new Set<EventStream>();
  readonly #perIp = new Map<string, number>();
  /** The last head every open stream is up to date with. */
  #last: bigint | null = null;
  /**
   * The hub's reads in order: a head's, and each step of a catch-up (its changes, one block's answers), one at a time.
   * What a catch-up writes is paced by its client outside it, so a slow reader holds no other stream's events.
   */
  #queue: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** The timestamp of #last when known: where the next head's board exits start. */
  #lastTime: bigint | null = null;
  /**
   * Answers by topic and block, shared by every stream: 10,000 streams opening on one topic cost one read, not 10,000.
   * A block's answer changes only if a reorg replaces the block, when this is replaced.
   */
  #answers: AnswerMemo;
  /** The catch-ups' reads of which blocks changed, by range (#changesShared), the newest CHANGES_KEPT. */
  #changesRead = new Map<string, Promise<AtBlock<BlockChange[]> | null>>();
  /** Catch-ups that failed in this turn of the event loop, to be closed together (#loseSoon). */
  readonly #losing: EventStream[] = [];

  constructor(
    readonly rt: IndexRuntime,
    readonly fetchAnswer: AnswerFetcher,
    readonly limits: StreamLimits,
    readonly metrics?: StreamMetrics,
    readonly answerBytes = STREAM_ANSWER_BYTES,
  ) {
    this.#answers = new AnswerMemo(answerBytes);
  }

  get size(): number {
    return this.#streams.size;
  }

  /** Why a new stream from `ip` would be refused now, else null. */
  refusal(ip: string): "total" | "per_ip" | null {
    if (this.#streams.size >= this.limits.max) return "total";
    if ((this.#perIp.get(ip) ?? 0) >= this.limits.perIp) return "per_ip";
    return null;
  }

  /**
   * Opens a stream: at once its topics' answers at the head (without `lastEventId`), or the blocks it missed since
   * `lastEventId` (at most replayBlocks of them, else one `reset`), then every change as it is indexed.
   */
  open(topics: readonly Topic[], ip: string, lastEventId: bigint | null, sink?: EventSink): EventStream {
    const stream = new EventStream(topics, ip, this.metrics, sink);
    this.#streams.add(stream);
    this.#perIp.set(ip, (this.#perIp.get(ip) ?? 0) + 1);
    this.metrics?.open.set(this.#streams.size);
    stream.onClose = () => {
      if (!this.#streams.delete(stream)) return;
      const n = (this.#perIp.get(ip) ?? 1) - 1;
      if (n === 0) this.#perIp.delete(ip);
      else this.#perIp.set(ip, n);
      this.metrics?.open.set(this.#streams.size);
      if (this.#streams.size === 0) this.#idle();
    };
    stream.write(`retry: ${STREAM_RETRY_MS}\n\n`);
    this.#start();
    this.#run(stream, this.#catchUp(stream, lastEventId));
    return stream;
  }

  /**
   * A stream's catch-up, run outside the hub's turn. When it fails it is closed, not made live: live from the hub's
   * head on, it would pass over the blocks it was never sent (its ids could not show it). Its client resumes from the
   * last id it was sent.
   */
  #run(stream: EventStream, catchUp: Promise<void>): void {
    catchUp.catch((error: unknown) => {
      this.rt.warn("index stream", "index stream update failed", {
        error: (error as Error).name,
        cause: causeOf(error),
      });
      this.#lose([stream]);
    });
  }

  #start(): void {
    if (this.#unsubscribe) return;
    const signal = this.rt.signal;
    if (signal) {
      this.#unsubscribe = signal.subscribe((block, _time, reverted) =>
        this.#enqueue(() => this.#advance(block, reverted)),
      );
    }
    this.#heartbeat = setInterval(() => {
      for (const s of this.#streams) s.write(":\n\n");
    }, this.limits.heartbeatMs);
    this.#heartbeat.unref();
  }

  #idle(): void {
    this.#answers = new AnswerMemo(this.answerBytes);
    this.#changesRead = new Map();
    this.#lastTime = null;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    clearInterval(this.#heartbeat);
    this.#last = null;
  }

  #enqueue(work: () => Promise<void>): void {
    this.#queue = this.#queue.then(work).catch((error: unknown) => {
      this.rt.warn("index stream", "index stream update failed", {
        error: (error as Error).name,
        cause: causeOf(error),
      });
    });
  }

  /** `work` in the hub's order (after the heads and catch-up steps before it); its result or failure is the caller's. */
  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work);
    this.#queue = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  async #head(): Promise<bigint> {
    if (this.#last === null) {
      const { head } = await this.rt.index.probe(null);
      // A head told meanwhile is newer than the probe's.
      if (this.#last === null) {
        this.#last = head.block;
        this.#lastTime = head.time;
      }
    }
    return this.#last ?? (await this.#head());
  }

  /** Whether a stream follows a windowed duration board (only then are board exits read). */
  #wantsExits(streams: readonly EventStream[]): boolean {
    return streams.some((s) => s.topics.some((t) => t.exits === true));
  }

  /** Block `block`'s timestamp: the block clock's, the index's (an event in it, or the head), else the node's. */
  #timeOf(block: bigint): Promise<bigint> {
    return timeOfBlock(this.rt, block);
  }

  /** What changed in from..to: with board exits since block from − 1's timestamp when a stream follows a window. */
  async #changes(streams: readonly EventStream[], from: bigint, to: bigint, since: bigint | null) {
    const exits = this.#wantsExits(streams);
    // A time that cannot be had (the node down) costs the range's exits, not its events.
    const start = exits ? (since ?? (await this.#timeOf(from - 1n).catch(() => null))) : null;
    return this.rt.index.changes(from, to, start);
  }

  /**
   * #changes read once more when it fails (a pool's timeout, a statement cancelled under load); null when it still
   * fails (warned, counted). Its caller closes the streams it was read for (#lose): which blocks changed is not known,
   * so going on past them would leave a gap the client's ids could not show.
   */
  async #changesOrNull(streams: readonly EventStream[], from: bigint, to: bigint, since: bigint | null) {
    try {
      return await this.#changes(streams, from, to, since).catch(() => this.#changes(streams, from, to, since));
    } catch (error) {
      this.rt.warn("index stream", "index stream changes failed", {
        error: (error as Error).name,
        cause: causeOf(error),
      });
      return null;
    }
  }

  /**
   * The stream's first events, written at its client's pace (EventStream.ready) outside the hub's turn: its topics'
   * answers at the head, or the blocks it missed since `lastEventId`, then the heads that came meanwhile, until it is
   * up to the hub's last head (#follow) — then the hub's heads carry it (it is left out of them until then). Its reads
   * take turns with the heads' (#inTurn); a closed stream's stop at once.
   */
  async #catchUp(stream: EventStream, lastEventId: bigint | null): Promise<void> {
    const head = await this.#inTurn(() => this.#head());
    if (stream.closed) return;
    const replaced = lastEventId === null ? null : this.rt.reorgs.covering(lastEventId);
    if (replaced !== null && lastEventId !== null) {
      // A reorg this process heard may have orphaned the client's last block (whose number the new branch repeats):
      // told (from the first replaced block with rows of ours, or the client's own block when that is lower: in doubt
      // it tells) as a reorg heard live is, and the new branch replayed from the lowest block that may differ.
      const from = replaced.from < lastEventId ? replaced.from : lastEventId;
      stream.reorg = withReorg(stream.reorg, { lo: replaced.lo, from, to: lastEventId, head });
      return this.#follow(stream, lastEventId);
    }
    if (lastEventId === null || lastEventId > head) {
      // A new client, or one that saw blocks this process has not (another replica ahead, or orphaned): the head.
      if ((await this.#sendPaced(stream, head, stream.topics)) === null) return;
      return this.#follow(stream, head);
    }
    return this.#follow(stream, lastEventId);
  }

  /**
   * Sends a catching-up stream, at its pace, the blocks after `upTo` (the last it was sent, or is true up to) until it
   * is up to the hub's last head, then leaves it to the hub's heads. A reorg heard meanwhile (EventStream.reorg: the
   * resumed one #catchUp found, or one #advance told it) is told once the stream has been sent the blocks below the
   * lowest block it may have replaced — at once when it is past them, and no block read before it from there on is
   * written after it —, with the id of the block before that one (or the head's, when lower: a client reconnecting
   * after the event resumes from there), and the new branch's blocks are replayed from there as any catch-up's, the
   * last with every topic's answer (a topic the orphaned blocks changed and the new branch did not is told again).
   */
  async #follow(stream: EventStream, upTo: bigint): Promise<void> {
    /** After a reorg: the replay up to the head ends with every topic's answer. */
    let whole = false;
    const bound = BigInt(this.limits.replayBlocks);
    for (;;) {
      // Read and compared in one turn of the event loop: a head told after this reaches the stream through #advance.
      const last = this.#last;
      const reorg = stream.reorg;
      if (stream.closed) return;
      if (reorg !== null) {
        const below = reorg.lo - 1n;
        const more = last !== null && upTo < last && last - upTo <= bound;
        // Told once the blocks below it are sent, or when they cannot be (the head below them; too far behind: the
        // `reset` follows).
        if (upTo >= below || !more) {
          stream.reorg = null;
          const at = min(min(below, upTo), last ?? upTo);
          const data = {
            orphaned: { from: reorg.from.toString(), to: reorg.to.toString() },
            head: reorg.head.toString(),
          };
          if ((await this.#sendPaced(stream, at, [], { event: "reorg", data: JSON.stringify(data) })) === null) return;
          upTo = at;
          whole = true;
          continue;
        }
      }
      if (last === null || upTo >= last) {
        if (whole) {
          // A reorg's new head at or below the block before its first replaced one: the topics' answers there.
          const sent = await this.#sendPaced(stream, upTo, stream.topics);
          if (sent === null) return;
          whole = false;
          continue;
        }
        stream.catchingUp = false;
        return;
      }
      if (last - upTo > bound) {
        stream.event(last, "reset", JSON.stringify({ reason: "too_far_behind", lastEventId: upTo.toString() }));
        upTo = last;
        whole = false;
        continue;
      }
      // Up to the reorg not told yet: the blocks from its lowest are sent after it.
      const to = reorg !== null && reorg.lo - 1n < last ? reorg.lo - 1n : last;
      const from = upTo + 1n;
      const read = await this.#inTurn(async () => (stream.closed ? undefined : this.#changesShared(stream, from, to)));
      if (stream.closed || read === undefined) return;
      if (read === null) return void this.#loseSoon(stream);
      const reached = await this.#replayPaced(stream, read.value, to, whole && to === last);
      if (reached === null) return;
      if (reached === to && to === last) whole = false;
      upTo = reached;
    }
  }

  /**
   * Which blocks changed in from..to for one catch-up (#changesOrNull), shared by the catch-ups that ask for the same
   * range until the next reorg: after a reorg every stream reads the new branch from the same block to the same head,
   * in one statement rather than one a stream. A failed read is not kept.
   */
  #changesShared(stream: EventStream, from: bigint, to: bigint): Promise<AtBlock<BlockChange[]> | null> {
    const key = `${from}:${to}:${this.#wantsExits([stream])}`;
    const kept = this.#changesRead.get(key);
    if (kept) return kept;
    const read = this.#changesOrNull([stream], from, to, null);
    const memo = this.#changesRead;
    memo.set(key, read);
    if (memo.size > CHANGES_KEPT) memo.delete(memo.keys().next().value!);
    void read.then((r) => {
      if (r === null && memo.get(key) === read) memo.delete(key);
    });
    return read;
  }

  /**
   * `changes`' blocks (ascending, up to `to`) written to one catching-up stream at its pace, and every topic's answer
   * at `to` when `whole`. The block it is true up to: `to`, or the block before the lowest one a reorg heard meanwhile
   * may have replaced (what was read from there on is not written); null once the stream is closed.
   */
  async #replayPaced(stream: EventStream, changes: BlockChange[], to: bigint, whole: boolean): Promise<bigint | null> {
    const blocks = byBlock(changes);
    if (whole && !blocks.has(to)) blocks.set(to, []);
    for (const [block, list] of blocks) {
      const topics =
        whole && block === to ? stream.topics : stream.topics.filter((t) => list.some((c) => t.concerns(c)));
      const sent = await this.#sendPaced(stream, block, topics);
      if (sent === null) return null;
      if (!sent) return stream.reorg!.lo - 1n;
    }
    return to;
  }

  /**
   * The topics' answers at `block` (read in the hub's turn), each written once the client has taken the last, after
   * `first` (a reorg told with them). True when written; false, and nothing written, when a reorg heard since may have
   * replaced the block (its catch-up tells it, and replays the new branch); null once the stream is closed — when one
   * answer cannot be read, none is written and the stream is closed (#loseSoon).
   */
  async #sendPaced(
    stream: EventStream,
    block: bigint,
    topics: readonly Topic[],
    first?: Told,
  ): Promise<boolean | null> {
    const replaced = () => first === undefined && stream.reorg !== null && block >= stream.reorg.lo;
    if (stream.closed) return null;
    if (replaced()) return false;
    if (topics.length === 0 && first === undefined) return true;
    // Read in turn, unless the client has hung up while it waited for it.
    const texts = await this.#inTurn(async () => (stream.closed ? [] : this.#answersAt(block, topics, this.#answers)));
    if (stream.closed) return null;
    if (texts === null) return this.#loseSoon(stream);
    // Read before a reorg heard since, or after it for a block of the branch it replaced: not written.
    if (replaced()) return false;
    const events = first === undefined ? [] : [first];
    for (const [i, t] of topics.entries()) {
      const text = texts[i];
      if (text != null) events.push({ event: t.event, data: text });
    }
    // A block once begun is written whole (a reorg heard meanwhile is told after it).
    for (const e of events) {
      if (!(await stream.ready())) return null;
      stream.event(block, e.event, e.data);
    }
    return stream.closed ? null : true;
  }

  /**
   * Streams that could not be sent a block's answers (one still failed when read again), or not told which blocks
   * changed (that read still failed), are closed before any event of those blocks, not passed over: each client
   * reconnects with the last id it was sent, below them, and its catch-up reads them again. Skipping them would leave
   * a gap the client's ids could not show. The streams one failure closes are closed together, each told a `retry:` of
   * its own first (api/index/reconnectSpread.ts), so that their clients do not all come back at the same moment to a
   * database that has just failed.
   */
  #lose(streams: readonly EventStream[]): false {
    const open = streams.filter((s) => !s.closed);
    const delays = reconnectDelays(open.length);
    for (const [i, s] of open.entries()) {
      this.metrics?.dropped.inc({ reason: "read_failed" });
      s.write(`retry: ${delays[i]}\n\n`);
      s.close();
    }
    return false;
  }

  /**
   * A catch-up that could not read (#lose), closed with the others that fail in the same turn of the event loop — after
   * a reorg every stream catches up on the same reads, and one failure is theirs together. Still catching up until
   * then, so no head writes to it.
   */
  #loseSoon(stream: EventStream): null {
    if (this.#losing.push(stream) === 1) setImmediate(() => this.#lose(this.#losing.splice(0)));
    return null;
  }

  /**
   * A new head; `reverted`: the reorg told with it. A reorg is told to every stream by its own catch-up (#follow): a
   * stream up to date is made to catch up from its last head, one catching up is told it when it reaches it.
   */
  async #advance(block: bigint, reverted?: Reverted): Promise<void> {
    if (this.#streams.size === 0) return;
    const last = this.#last;
    if (last === null) {
      this.#last = block;
      return;
    }
    // A revert above the last head orphaned nothing the streams were sent; without one, a head going back did.
    const orphaned =
      reverted !== undefined ? (reverted.from <= last ? reverted.from : null) : block < last ? block : null;
    if (block === last && orphaned === null) return;
    if (orphaned !== null) {
      this.#last = block;
      this.#lastTime = null;
      // What was kept of the replaced blocks is forgotten (every block above the finalized one may differ).
      this.#answers = new AnswerMemo(this.answerBytes);
      this.#changesRead = new Map();
      const lo = min(replacedFrom(block, reverted), orphaned);
      const heard = { lo, from: orphaned, to: last, head: block };
      for (const s of this.#streams) {
        s.reorg = withReorg(s.reorg, heard);
        if (s.catchingUp) continue;
        // Up to date with the last head: it catches up from there (outside this turn, at its client's pace).
        s.catchingUp = true;
        this.#run(s, this.#follow(s, last));
      }
      return;
    }
    // A plain head only to the streams caught up (the others' catch-up reads up to it).
    const streams = [...this.#streams].filter((s) => !s.catchingUp);
    const since = this.#lastTime;
    const answers = this.#answers;
    this.#last = block;
    if (block - last > BigInt(this.limits.replayBlocks)) {
      this.#lastTime = null;
      const data = JSON.stringify({ reason: "too_far_behind", lastEventId: last.toString() });
      for (const s of streams) s.event(block, "reset", data);
      return;
    }
    this.#lastTime = null;
    const read = await this.#changesOrNull(streams, last + 1n, block, since);
    if (read === null) {
      // The streams' last id is `last`: they resume from there, and their catch-up reads last + 1 … block again.
      this.#lose(streams);
      return;
    }
    // When the range's end is the head the statement saw, its timestamp starts the next range's exits.
    if (read.head.block === block) this.#lastTime = read.head.time;
    await this.#replay(streams, read.value, answers);
  }

  /** For each block with changes (ascending), each stream's topics that changed in it. */
  async #replay(streams: EventStream[], changes: BlockChange[], answers: AnswerMemo): Promise<void> {
    for (const [block, list] of byBlock(changes)) {
      // A stream closed meanwhile (its client hung up, or a block before could not be read) costs no more reads.
      const open = streams.filter((s) => !s.closed);
      const sent = await Promise.all(
        open.map((s) =>
          this.#send(
            s,
            block,
            s.topics.filter((t) => list.some((c) => t.concerns(c))),
            answers,
          ),
        ),
      );
      this.#lose(open.filter((_, i) => !sent[i]));
    }
  }

  /**
   * The topics' answers at `block`, each fetched once per call chain (`answers`), written to the stream in the topics'
   * order after `first` (a reorg told with them); or, when one cannot be read, none of them, and false: the caller
   * closes the stream (#lose) with the others that failure closes.
   */
  async #send(
    stream: EventStream,
    block: bigint,
    topics: readonly Topic[],
    answers: AnswerMemo,
    first?: Told,
  ): Promise<boolean> {
    if (topics.length === 0 && first === undefined) return true;
    const texts = await this.#answersAt(block, topics, answers);
    if (texts === null) return false;
    if (first !== undefined) stream.event(block, first.event, first.data);
    topics.forEach((t, i) => {
      const text = texts[i];
      if (text != null) stream.event(block, t.event, text);
    });
    return true;
  }

  /**
   * Each topic's answer at `block` (null: nothing to send for it), a failed one read once more (a pool's timeout, a
   * statement cancelled under load: the memo keeps no failure); null when one still fails (warned, counted), so that
   * the block is sent whole or not at all. Read HUB_READS_AT_ONCE at a time, not all at once: a past block's rankings
   * wait in the compute gate's past lane (one slot, INDEX_COMPUTE_QUEUE waiting, api/read/computeGate.ts), and 28
   * duration boards read at once overflowed it and came back busy — the server's own reader refused, its events lost.
   */
  async #answersAt(block: bigint, topics: readonly Topic[], answers: AnswerMemo): Promise<(string | null)[] | null> {
    const read = (t: Topic) => answers.get(`${t.key}@${block}`, () => topicAnswer(t, this.fetchAnswer, block));
    const texts: PromiseSettledResult<string | null>[] = [];
    let next = 0;
    const reader = async () => {
      for (let i = next++; i < topics.length; i = next++) {
        const t = topics[i]!;
        [texts[i]] = await Promise.allSettled([read(t).catch(() => read(t))]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(HUB_READS_AT_ONCE, topics.length) }, reader));
    const failed = texts.find((r) => r.status === "rejected");
    if (failed === undefined) return texts.map((r) => (r as PromiseFulfilledResult<string | null>).value);
    const code = (failed.reason as { code?: unknown }).code;
    this.metrics?.answersFailed.inc({ code: typeof code === "string" ? code : "INTERNAL_ERROR" });
    this.rt.warn("index stream", "index stream answer failed", {
      error: (failed.reason as Error).name,
      cause: causeOf(failed.reason),
    });
    return null;
  }
}

/** An event told before a block's answers, with them or not at all. */
type Told = { event: string; data: string };

/** A reorg heard (api/read/reorgLog.ts) as a stream is told it: with the head it was heard with. */
type StreamReorg = HeardReorg & { head: bigint };

/** The catch-ups' reads of which blocks changed kept for other catch-ups of the same range (#changesShared). */
const CHANGES_KEPT = 8;

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** A reorg heard added to the one a stream has not been told yet: told as one, to the newer head. */
function withReorg(pending: StreamReorg | null, heard: StreamReorg): StreamReorg {
  if (pending === null) return heard;
  return {
    lo: min(pending.lo, heard.lo),
    from: min(pending.from, heard.from),
    to: max(pending.to, heard.to),
    head: heard.head,
  };
}

/** Changes by block, ascending as given. */
function byBlock(changes: BlockChange[]): Map<bigint, BlockChange[]> {
  const blocks = new Map<bigint, BlockChange[]>();
  for (const c of changes) {
    const list = blocks.get(c.block);
    if (list) list.push(c);
    else blocks.set(c.block, [c]);
  }
  return blocks;
}
