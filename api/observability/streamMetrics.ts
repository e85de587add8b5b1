import { Counter } from "./counter";
import { Gauge } from "./gauge";

/**
 * The index's event streams (api/index/stream.ts) and the one signal that drives them (api/read/indexSignal.ts):
 * what an operator watches to see streams pile up, get dropped, or stop moving because the signal fell back to polls.
 */
export type StreamMetrics = {
  /** Streams open now in this process. */
  open: Gauge;
  /** Events written, by event (a topic's name, reorg, reset). */
  events: Counter;
  /** Streams refused with 429 before they opened, by reason: total, per_ip. */
  refused: Counter;
  /**
   * Streams closed by the server, by reason: unread (the client did not take its events), read_failed (a block's
   * answers, or which blocks changed, could not be read: the client resumes from its last id).
   */
  dropped: Counter;
  /** Topic answers the hub could not read (its event not written), by the route's error code. */
  answersFailed: Counter;
  /** Heads the signal learned, by how: notified, polled, missed (a poll found a head no notification announced). */
  signalHeads: Counter;
  /** 1 while this process's LISTEN connection is up, 0 while it falls back to polls. */
  signalListening: Gauge;
  all: readonly { render(): string }[];
};

export function createStreamMetrics(): StreamMetrics {
  const open = new Gauge("api_streams_open", "Event streams open now in this process.");
  const events = new Counter(
    "api_stream_events_total",
    "Events written to event streams, by event: a topic's name (lock, account, board, stats, activity), reorg, reset.",
    ["event"],
  );
  const refused = new Counter(
    "api_streams_refused_total",
    "Event streams refused with 429 before they opened, by reason: total (STREAM_MAX), per_ip (STREAM_MAX_PER_IP).",
    ["reason"],
  );
  const dropped = new Counter(
    "api_streams_dropped_total",
    "Event streams the server closed, by reason: unread (the client left its events unread), read_failed (a " +
      "block's answers, or which blocks changed, could not be read even when read again: the client resumes from its " +
      "last id).",
    ["reason"],
  );
  const answersFailed = new Counter(
    "api_stream_answers_failed_total",
    "Topic answers the stream hub could not read at a block, by the route's error code (INDEX_UNAVAILABLE: busy or " +
      "unreachable; INTERNAL_ERROR: a bug); the reason is in the warning 'index stream answer failed'.",
    ["code"],
  );
  const signalHeads = new Counter(
    "api_index_signal_heads_total",
    "Index heads this process learned, by how: notified (LISTEN/NOTIFY), polled (while not listening), missed (a " +
      "poll found a head no notification announced).",
    ["how"],
  );
  const signalListening = new Gauge(
    "api_index_signal_listening",
    "1 while this process's LISTEN connection to the index database is up; 0 while it falls back to slow polls.",
  );
  open.set(0);
  signalListening.set(0);
  return {
    open,
    events,
    refused,
    dropped,
    answersFailed,
    signalHeads,
    signalListening,
    all: [open, events, refused, dropped, answersFailed, signalHeads, signalListening],
  };
}
