/**
 * The streams of one process and the one loop that feeds them. The index's signal (api/read/indexSignal.ts: one
 * LISTEN connection per process) names each new head; the hub reads, once per head for all its streams, who the events
 * of the new blocks concern (LockIndex.changes), and for each stream and each block in which one of its topics
 * changed writes one event whose data is the REST route's answer at that block — fetched once per topic and block
 * however many streams follow it, through the route itself (no second query path). A head told with a revert at or
 * below the last one (or, where no revert is heard, a head below the last one) is a reorg: every stream is told which
 * blocks were orphaned, then gets its topics' answers at the new head, whether below the last one or past it. When a
 * stream follows a windowed duration board, the hub also asks which board entries left a window since the last
 * head's timestamp (it keeps that timestamp; else the block clock or the node gives it).
 */
import { timeOfBlock } from "../live/blockTime";
import type { AnswerFetcher } from "../live/routeAnswers";
import { topicAnswer } from "../live/topicAnswer";
import type { Topic } from "../live/topics";
import type { StreamMetrics } from "../observability/streamMetrics";
import { causeOf } from "../observability/throttle";
import type { BlockChange } from "../read/contract";
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
    this.#catchUp(stream, lastEventId).then(
      () => {
        stream.catchingUp = false;
      },
      (error: unknown) => {
        // Closed, not made live: live from the hub's head on, it would pass over the blocks it was never sent (its
        // ids could not show it). Its client resumes from the last id it was sent.
        this.rt.warn("index stream", "index stream update failed", {
          error: (error as Error).name,
          cause: causeOf(error),
        });
        this.#lose([stream]);
      },
    );
    return stream;
  }

  #start(): void {
    if (this.#unsubscribe) return;
    const signal = this.rt.signal;
    if (signal) {
      this.#unsubscribe = signal.subscribe((block, _time, reverted) =>
        this.#enqueue(() => this.#advance(block, reverted?.from)),
      );
    }
    this.#heartbeat = setInterval(() => {
      for (const s of this.#streams) s.write(":\n\n");
    }, this.limits.heartbeatMs);
    this.#heartbeat.unref();
  }

  #idle(): void {
    this.#answers = new AnswerMemo(this.answerBytes);
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
   * up to the hub's last head — then the hub's heads carry it (it is left out of them until then). A reorg the hub
   * hears meanwhile takes it over (#advance: told as every stream is), and this stops. Its reads take turns with the
   * heads' (#inTurn); a closed stream's stop at once.
   */
  async #catchUp(stream: EventStream, lastEventId: bigint | null): Promise<void> {
    const head = await this.#inTurn(() => this.#head());
    if (!stream.catchingUp) return;
    let upTo: bigint;
    /** After a resumed reorg: the first replay ends with every topic's answer at its last block. */
    let whole = false;
    const replaced = lastEventId === null ? null : this.rt.reorgs.covering(lastEventId);
    if (replaced !== null && lastEventId !== null) {
      // A reorg this process heard may have orphaned the client's last block (whose number the new branch repeats):
      // told (from the first replaced block with rows of ours, or the client's own block when that is lower: in doubt
      // it tells), with the id of the block before the lowest that may differ (what the client holds up to there is
      // true, and a client reconnecting after this event resumes from there); then the new branch's blocks from that
      // one are replayed as any catch-up's — rows the new branch holds below the first replaced block too — the last
      // with every topic's answer (a topic the orphaned blocks changed and the new branch did not is told it again).
      const orphanedFrom = replaced.from < lastEventId ? replaced.from : lastEventId;
      const data = { orphaned: { from: orphanedFrom.toString(), to: lastEventId.toString() }, head: head.toString() };
      upTo = replaced.lo - 1n < head ? replaced.lo - 1n : head;
      if (!(await this.#sendPaced(stream, upTo, [], { event: "reorg", data: JSON.stringify(data) }))) return;
      whole = true;
    } else if (lastEventId === null || lastEventId > head) {
      // A new client, or one that saw blocks this process has not (another replica ahead, or orphaned): the head.
      if (!(await this.#sendPaced(stream, head, stream.topics))) return;
      upTo = head;
    } else {
      upTo = lastEventId;
    }
    for (;;) {
      // Read and compared in one turn of the event loop: a head told after this reaches the stream through #advance.
      const last = this.#last;
      if (!stream.catchingUp) return;
      if (last === null || upTo >= last) {
        // A reorg's new head at or below the block before its first replaced one: the topics' answers there.
        if (whole && !(await this.#sendPaced(stream, upTo, stream.topics))) return;
        stream.catchingUp = false;
        return;
      }
      if (last - upTo > BigInt(this.limits.replayBlocks)) {
        stream.event(last, "reset", JSON.stringify({ reason: "too_far_behind", lastEventId: upTo.toString() }));
        upTo = last;
        whole = false;
        continue;
      }
      const from = upTo + 1n;
      const read = await this.#inTurn(async () =>
        stream.catchingUp ? this.#changesOrNull([stream], from, last, null) : undefined,
      );
      if (!stream.catchingUp || read === undefined) return;
      if (read === null) {
        this.#lose([stream]);
        return;
      }
      if (!(await this.#replayPaced(stream, read.value, whole ? last : null))) return;
      upTo = last;
      whole = false;
    }
  }

  /**
   * `changes`' blocks (ascending) written to one catching-up stream at its pace, and every topic's answer at `whole`
   * (the range's last block) when given; false once it stops catching up.
   */
  async #replayPaced(stream: EventStream, changes: BlockChange[], whole: bigint | null): Promise<boolean> {
    const blocks = byBlock(changes);
    if (whole !== null && !blocks.has(whole)) blocks.set(whole, []);
    for (const [block, list] of blocks) {
      const topics = block === whole ? stream.topics : stream.topics.filter((t) => list.some((c) => t.concerns(c)));
      if (!(await this.#sendPaced(stream, block, topics))) return false;
    }
    return true;
  }

  /**
   * The topics' answers at `block` (read in the hub's turn), each written once the client has taken the last, after
   * `first` (a reorg told with them). When one cannot be read, none is written and the stream is closed (#lose).
   */
  async #sendPaced(stream: EventStream, block: bigint, topics: readonly Topic[], first?: Told): Promise<boolean> {
    if ((topics.length === 0 && first === undefined) || !stream.catchingUp) return stream.catchingUp;
    // Read in turn, unless the client has hung up (or a reorg took the stream over) while it waited for it.
    const texts = await this.#inTurn(async () =>
      stream.catchingUp ? this.#answersAt(block, topics, this.#answers) : [],
    );
    if (!stream.catchingUp) return false;
    if (texts === null) return this.#lose([stream]);
    const events = first === undefined ? [] : [first];
    for (const [i, t] of topics.entries()) {
      const text = texts[i];
      if (text != null) events.push({ event: t.event, data: text });
    }
    for (const e of events) {
      if (!(await stream.ready()) || !stream.catchingUp) return false;
      stream.event(block, e.event, e.data);
    }
    return stream.catchingUp;
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

  /** A new head; `reverted`: the first block a reorg told with it orphaned. */
  async #advance(block: bigint, reverted?: bigint): Promise<void> {
    if (this.#streams.size === 0) return;
    const last = this.#last;
    if (last === null) {
      this.#last = block;
      return;
    }
    // A revert above the last head orphaned nothing the streams were sent; without one, a head going back did.
    const orphaned = reverted !== undefined ? (reverted <= last ? reverted : null) : block < last ? block : null;
    if (block === last && orphaned === null) return;
    // A reorg is told to every stream, a catching-up one too (its catch-up stops: it is live from this head on);
    // a plain head only to the streams caught up (the others' catch-up reads up to it).
    const streams = [...this.#streams].filter((s) => orphaned !== null || !s.catchingUp);
    for (const s of streams) s.catchingUp = false;
    const since = this.#lastTime;
    if (orphaned !== null) this.#answers = new AnswerMemo(this.answerBytes);
    const answers = this.#answers;
    if (orphaned !== null) {
      const data = JSON.stringify({
        orphaned: { from: orphaned.toString(), to: last.toString() },
        head: block.toString(),
      });
      this.#last = block;
      this.#lastTime = null;
      // The reorg with the head's answers, or neither (#lose): its id is the head's.
      const reorg = { event: "reorg", data };
      const sent = await Promise.all(streams.map((s) => this.#send(s, block, s.topics, answers, reorg)));
      this.#lose(streams.filter((_, i) => !sent[i]));
      return;
    }
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
