/**
 * One stream's back-pressure, on the web stream @hono/node-server pipes to the response: a client that reads gets
 * every byte; one that leaves STREAM_MAX_QUEUED_BYTES unread is closed and counted `unread`, and its memory let go.
 */
import { describe, expect, it } from "vitest";
import { EventStream, STREAM_MAX_QUEUED_BYTES } from "../../api/index/streamHub";
import { createStreamMetrics } from "../../api/observability/streamMetrics";

const event = "x".repeat(16 * 1024);

describe("EventStream", () => {
  it("a reader that keeps up gets every event; none is dropped", async () => {
    const metrics = createStreamMetrics();
    const s = new EventStream([], "127.0.0.1", metrics);
    const reader = s.body.getReader();
    let bytes = 0;
    for (let i = 0; i < 200; i++) {
      s.event(BigInt(i), "stats", event);
      const { value } = await reader.read();
      bytes += value?.byteLength ?? 0;
    }
    expect(s.closed).toBe(false);
    expect(bytes).toBeGreaterThan(200 * event.length);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(0);
    expect(metrics.events.get({ event: "stats" })).toBe(200);
  });

  it("a stream left unread past its cap is closed and counted; later writes are ignored", async () => {
    const metrics = createStreamMetrics();
    let closed = 0;
    const s = new EventStream([], "127.0.0.1", metrics);
    s.onClose = () => closed++;
    const writes = Math.ceil((STREAM_MAX_QUEUED_BYTES + 128 * 1024) / event.length) + 2;
    for (let i = 0; i < writes; i++) s.event(BigInt(i), "stats", event);
    expect(s.closed).toBe(true);
    expect(closed).toBe(1);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(1);
    s.event(999n, "stats", event);
    expect(metrics.dropped.get({ reason: "unread" })).toBe(1);
    // The queue is discarded (the stream errors, so the server aborts the response instead of flushing a megabyte).
    await expect(s.body.getReader().read()).rejects.toThrow("unread");
  });
});
