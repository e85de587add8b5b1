/**
 * An EventSource as a test or a benchmark reads one: every event of a `text/event-stream` response parsed as it
 * arrives, with the time it arrived (performance.now(): the stream-latency bench measures from it), and `until` to wait
 * for one that matches. The stream's tests (test/index/stream.test.ts) and bench/stream-latency.ts read through it.
 */

export type SseEvent = { id: string | undefined; event: string; data: string; at: number };

export type SseReader = {
  /** Every event so far, in order. */
  readonly events: SseEvent[];
  /** The `retry:` fields so far (ms, in order): the reconnection delay the server asked for. */
  readonly retries: number[];
  /** Comment lines (`:`, the heartbeat) so far. */
  comments(): number;
  /** Whether the server ended the stream (its body done), as against still open or aborted by the caller. */
  ended(): boolean;
  /** The first event that matches, waiting up to `ms` for it. */
  until(match: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
};

/**
 * Reads `res`'s body until it ends or its request is aborted (the caller's AbortController). Only a 200's: another
 * answer (a 400 or 429 in the envelope) is the caller's to read, and has no events.
 */
export function readSse(res: Response): SseReader {
  const events: SseEvent[] = [];
  const retries: number[] = [];
  const waiters: (() => void)[] = [];
  let comments = 0;
  let ended = false;
  if (res.status === 200 && res.body) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) {
            ended = true;
            for (const w of waiters.splice(0)) w();
            return;
          }
          buffer += value;
          const at = performance.now();
          let cut = buffer.indexOf("\n\n");
          while (cut !== -1) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            cut = buffer.indexOf("\n\n");
            const fields = new Map<string, string>();
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) comments++;
              const colon = line.indexOf(": ");
              if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
            }
            if (fields.has("retry")) retries.push(Number(fields.get("retry")));
            if (fields.has("event")) {
              events.push({ id: fields.get("id"), event: fields.get("event")!, data: fields.get("data") ?? "", at });
              for (const w of waiters.splice(0)) w();
            }
          }
        }
      } catch {
        // aborted
      }
    })();
  }
  return {
    events,
    retries,
    comments: () => comments,
    ended: () => ended,
    async until(match, ms = 30_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching event in ${ms} ms; saw ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}
