/**
 * When the hub cannot read which blocks changed (the database down, a table locked), it closes every live stream at
 * once (api/index/streamHub.ts #lose), and every EventSource would reconnect at once, after the same `retry:` — a
 * herd of catch-ups on a database that has just failed. So each stream closed for a failed read is first sent a
 * `retry:` of its own: the streams closed together share out a window that grows with their number, one slot each,
 * and the reconnects arrive at an even rate instead of in one burst. The client resumes from its last id as before.
 */

/** The reconnection delay a stream is sent on open (`retry:`), and the least a stream closed for a failed read waits. */
export const STREAM_RETRY_MS = 2_000;

/** The window the reconnects of streams closed together are spread over: this much per stream, within the bounds. */
export const RECONNECT_SPREAD_PER_STREAM_MS = 10;
export const RECONNECT_SPREAD_MIN_MS = 2_000;
export const RECONNECT_SPREAD_MAX_MS = 30_000;

/** The window `n` streams closed together reconnect over (ms after STREAM_RETRY_MS). */
export function reconnectWindow(n: number): number {
  return Math.min(RECONNECT_SPREAD_MAX_MS, Math.max(RECONNECT_SPREAD_MIN_MS, n * RECONNECT_SPREAD_PER_STREAM_MS));
}

/**
 * The `retry:` delays (ms) of `n` streams closed together: STREAM_RETRY_MS plus a point of the window, stream i's at
 * random within slot i of n, so no two are the same (whole ms: while n is at most the window in ms, 30,000 at the
 * most, above STREAM_MAX's default) and no slot of the window gets more than its share.
 */
export function reconnectDelays(n: number, random: () => number = Math.random): number[] {
  const window = reconnectWindow(n);
  // Whole-ms slots keep the floored points apart; more streams than ms share them.
  const slot = window >= n ? Math.floor(window / n) : window / n;
  return Array.from({ length: n }, (_, i) => STREAM_RETRY_MS + Math.floor(i * slot + random() * slot));
}
