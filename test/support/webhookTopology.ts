/**
 * The webhook tests' and benchmark's setup (test/webhooks/served.test.ts, bench/webhook-outage.ts): the live topology
 * (liveTopology.ts) with what every webhook run needs — an operator token, loopback targets allowed, no Redis — and a
 * registration through the operator route, so each run differs only in its own settings (retry schedule, timeout).
 */

import { type LiveTopology, startLiveTopology } from "./liveTopology";
import type { ServiceChild } from "./replica";
import type { WebhookReceiver } from "./webhookReceiver";

/** The operators' bearer the topology's API processes are given (OPERATOR_TOKEN). */
export const WEBHOOK_OPERATOR_TOKEN = "test-operator-token-0123456789";

/** The topology with `apis` API processes, its webhook settings under `env` (WEBHOOK_RETRY_SCHEDULE, …). */
export const startWebhookTopology = (o: { apis: number; env?: Record<string, string> }): Promise<LiveTopology> =>
  startLiveTopology({
    apis: o.apis,
    env: {
      REDIS_URL: "",
      LOG_LEVEL: "error",
      INDEXER_POLLING_MS: "200",
      OPERATOR_TOKEN: WEBHOOK_OPERATOR_TOKEN,
      WEBHOOK_ALLOW_PRIVATE: "loopback",
      ...o.env,
    },
  });

export type Registered = { id: string; secret: string; topics: string[] };

/** Registers `receiver` for `topics` on `api` (POST /api/index/v1/webhooks); anything but 201 throws with the answer. */
export async function registerWebhook(
  api: ServiceChild,
  receiver: WebhookReceiver,
  topics: string[],
): Promise<Registered> {
  const res = await fetch(`${api.url}/api/index/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${WEBHOOK_OPERATOR_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, topics }),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`webhook registration: ${res.status} ${text}`);
  return (JSON.parse(text) as { webhook: Registered }).webhook;
}
