/**
 * One attempt (api/webhooks/send.ts) against real receivers on 127.0.0.1: the answer's status ends it, as the docs
 * say — a receiver that sends its status and never ends the body has answered (a 2xx acknowledged, anything else
 * failed) at once, not at the timeout; a receiver that sends no status times out.
 */
import { afterEach, describe, expect, it } from "vitest";
import { postWebhook } from "../../api/webhooks/send";
import { WebhookReceiver } from "../support/webhookReceiver";

const TIMEOUT_MS = 3_000;
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.down();
});

async function receiver(set: (r: WebhookReceiver) => void): Promise<WebhookReceiver> {
  const r = new WebhookReceiver();
  set(r);
  await r.up();
  receivers.push(r);
  return r;
}

async function attempt(r: WebhookReceiver) {
  const at = Date.now();
  const result = await postWebhook({
    url: r.url,
    body: '{"type":"index.stats"}',
    headers: { "webhook-id": "msg_test" },
    timeoutMs: TIMEOUT_MS,
    allow: "loopback",
  });
  return { result, ms: Date.now() - at };
}

describe("one webhook attempt", () => {
  it("is acknowledged by a 2xx status whose body never ends, at once", async () => {
    const r = await receiver((x) => {
      x.neverEndsBody = true;
    });
    const { result, ms } = await attempt(r);
    expect(result).toEqual({ ok: true, status: 200 });
    expect(ms).toBeLessThan(TIMEOUT_MS / 2);
    expect(r.received).toHaveLength(1);
  });

  it("fails on a non-2xx status whose body never ends, at once, naming the status", async () => {
    const r = await receiver((x) => {
      x.neverEndsBody = true;
      x.failing = true;
    });
    const { result, ms } = await attempt(r);
    expect(result).toEqual({ ok: false, error: "HTTP 500" });
    expect(ms).toBeLessThan(TIMEOUT_MS / 2);
  });

  it("times out when no status comes within the timeout", async () => {
    const r = await receiver((x) => {
      x.delayMs = TIMEOUT_MS * 2;
    });
    const { result, ms } = await attempt(r);
    expect(result).toEqual({ ok: false, error: `no answer within ${TIMEOUT_MS} ms` });
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  });
});
