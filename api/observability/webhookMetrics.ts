import { Counter } from "./counter";
import { Gauge } from "./gauge";

/**
 * The webhooks (api/webhooks): what an operator alerts on — dead deliveries, and a backlog that ages (a receiver down,
 * or no worker running) — and the attempts by outcome. The backlog gauges are read from the shared outbox, so every
 * replica reports the same figures (alert on max, not sum).
 */
export type WebhookMetrics = {
  /** Attempts by outcome: delivered (2xx), retry (failed, retried later), dead (failed, schedule spent). */
  attempts: Counter;
  /** Deliveries added to the outbox by this process's feeder, by type (index.lock, index.reverted, …). */
  enqueued: Counter;
  pending: Gauge;
  dead: Gauge;
  oldestPendingSeconds: Gauge;
  all: readonly { render(): string }[];
};

export function createWebhookMetrics(): WebhookMetrics {
  const attempts = new Counter(
    "api_webhook_attempts_total",
    "Webhook delivery attempts by this process, by outcome: delivered (2xx), retry (failed; retried later), dead " +
      "(failed with the retry schedule spent).",
    ["outcome"],
  );
  const enqueued = new Counter(
    "api_webhook_enqueued_total",
    "Webhook deliveries this process's feeder added to the outbox, by type (index.lock, index.reverted, ...).",
    ["type"],
  );
  const pending = new Gauge("api_webhook_pending", "Webhook deliveries waiting to be delivered (the shared outbox).");
  const dead = new Gauge(
    "api_webhook_dead",
    "Webhook deliveries dead (retries spent), waiting for an operator's replay.",
  );
  const oldestPendingSeconds = new Gauge(
    "api_webhook_oldest_pending_seconds",
    "Age in seconds of the oldest webhook delivery still pending (0 when none): the backlog's age.",
  );
  return {
    attempts,
    enqueued,
    pending,
    dead,
    oldestPendingSeconds,
    all: [attempts, enqueued, pending, dead, oldestPendingSeconds],
  };
}
