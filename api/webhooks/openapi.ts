/**
 * The deliveries in the OpenAPI document's `webhooks` (OpenAPI 3.1: requests this API sends, not routes it serves):
 * what a receiver is POSTed, its Standard Webhooks headers, and what it must answer. The operators' routes that
 * register them are platform routes (api/routes.ts INFRASTRUCTURE_ROUTES), described in docs/api.md#webhooks.
 */
const HEADERS = {
  "webhook-id": {
    required: true,
    description: "The delivery's id (`msg_…`), the same on every retry: skip one already processed.",
    schema: { type: "string", pattern: "^msg_[A-Za-z0-9_-]+$" },
  },
  "webhook-timestamp": {
    required: true,
    description: "When this attempt was sent, in Unix seconds: refuse one far from now.",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "webhook-signature": {
    required: true,
    description:
      "`v1,<base64>`: HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}` keyed by the base64-decoded part " +
      "of the webhook's secret after `whsec_`.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$" },
  },
};

const RESPONSES = {
  "2XX": { description: "Acknowledged: delivered. Any other answer (or none within WEBHOOK_TIMEOUT_MS) is retried." },
};

const BLOCK = { type: "string", pattern: "^(0|[1-9][0-9]*)$" };

export const INDEX_EVENT_SCHEMA = {
  type: "object",
  required: ["type", "timestamp", "data"],
  additionalProperties: false,
  properties: {
    type: { type: "string", pattern: "^index\\.(lock|account|board|stats|activity)$" },
    timestamp: { type: "string", description: "When the delivery was made (ISO 8601)." },
    data: {
      type: "object",
      required: ["topic", "blockNumber", "answer"],
      additionalProperties: false,
      properties: {
        topic: {
          type: "string",
          description: "The topic's key: `lock:42`, `account:0x…` (lower case), `board:ve`, `stats`.",
        },
        blockNumber: BLOCK,
        answer: { type: "object", description: "Exactly the topic's REST answer at `blockNumber` (GET …?block=)." },
      },
    },
  },
} as const;

export const INDEX_REVERTED_SCHEMA = {
  type: "object",
  required: ["type", "timestamp", "data"],
  additionalProperties: false,
  properties: {
    type: { const: "index.reverted" },
    timestamp: { type: "string" },
    data: {
      type: "object",
      required: ["topic", "blockNumber", "revertedId", "head"],
      additionalProperties: false,
      properties: {
        topic: { type: "string" },
        blockNumber: { ...BLOCK, description: "The orphaned block the reverted delivery was of." },
        revertedId: { type: "string", description: "The webhook-id of the delivery to discard." },
        head: { ...BLOCK, description: "The index's head after the reorg; every topic's answer there follows." },
      },
    },
  },
} as const;

const delivery = (summary: string, description: string, schema: object) => ({
  post: {
    summary,
    description,
    parameters: Object.entries(HEADERS).map(([name, h]) => ({ name, in: "header", ...h })),
    requestBody: { required: true, content: { "application/json": { schema } } },
    responses: RESPONSES,
  },
});

export const WEBHOOK_DELIVERIES = {
  "index-event": delivery(
    "A topic's answer at a block that changed it",
    "One per registered topic and indexed block with an event concerning it, at least once, in block order per " +
      "webhook (docs/api.md#webhooks).",
    INDEX_EVENT_SCHEMA,
  ),
  "index-reverted": delivery(
    "A delivered block was orphaned by a reorg",
    "For each delivery of an orphaned block the receiver may have received; the topics' answers at the new head follow.",
    INDEX_REVERTED_SCHEMA,
  ),
};
