/**
 * The deliveries in the OpenAPI document's `webhooks` (OpenAPI 3.1: requests this API sends, not routes it serves):
 * what a receiver is POSTed, its Standard Webhooks headers, and what it must answer; and the operators' routes that
 * register them (WEBHOOK_OPERATIONS), described in docs/api.md#webhooks.
 */

import { openApiParameter } from "../route/jsonSchema";
import { DELIVERIES_QUERY } from "./routes";

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
  "2XX": {
    description:
      "Acknowledged: delivered. The status ends the attempt (the body is not read). Any other answer (or no " +
      "status within WEBHOOK_TIMEOUT_MS) is retried.",
  },
};

const BLOCK = { type: "string", pattern: "^(0|[1-9][0-9]*)$" };

export const INDEX_EVENT_SCHEMA = {
  type: "object",
  required: ["type", "timestamp", "data"],
  additionalProperties: false,
  properties: {
    type: { type: "string", pattern: "^index\\.(lock|account|board|stats|activity)$" },
    timestamp: {
      type: "string",
      description:
        "When the delivery was queued (ISO 8601): the same on every retry and replay; the attempt's time is the " +
        "webhook-timestamp header.",
    },
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
        answer: {
          type: "object",
          description:
            "The topic's REST answer at `blockNumber` (GET …?block=); an account's also carries `activity`, that " +
            "block's items of GET /activity?account=.",
        },
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

/**
 * The operators' webhook routes as OpenAPI operations (paths of their own beside the public GETs): POST/GET
 * /webhooks, GET /webhooks/deliveries, DELETE /webhooks/{id}, POST /webhooks/{id}/replay, each behind the operator's
 * bearer token (`operatorToken` in the document's security schemes). Not MCP tools: an assistant reads, it does not
 * administer.
 */
const ERROR = { $ref: "#/components/schemas/ErrorEnvelope" };
const SECURITY = [{ operatorToken: [] }];
const ID = { type: "string", pattern: "^wh_[A-Za-z0-9_-]+$", description: "The webhook's id (`wh_…`)." };
const TIME = { type: "string", description: "ISO 8601." };
const TIME_OR_NULL = { type: ["string", "null"], description: "ISO 8601, or null." };
const TOPICS = {
  type: "array",
  minItems: 1,
  maxItems: 32,
  items: { type: "string", maxLength: 200 },
  description:
    "Topics as the stream's: `lock:<id>`, `account:<address>`, `board:ve`, `board:<key>[:<window>]`, `stats`, " +
    "`activity[:<kinds>]`.",
};
const SUBSCRIPTION = {
  type: "object",
  required: ["id", "url", "topics", "createdAt"],
  properties: {
    id: ID,
    url: { type: "string", description: "Where deliveries are POSTed." },
    topics: TOPICS,
    createdAt: TIME,
  },
};
const SUMMARY = {
  ...SUBSCRIPTION,
  required: [...SUBSCRIPTION.required, "pending", "dead", "oldestPendingAt"],
  properties: {
    ...SUBSCRIPTION.properties,
    pending: { type: "integer", minimum: 0 },
    dead: { type: "integer", minimum: 0 },
    oldestPendingAt: TIME_OR_NULL,
  },
};
const DELIVERY = {
  type: "object",
  required: ["id", "webhook", "blockNumber", "topic", "type", "status", "attempts", "createdAt"],
  properties: {
    id: { type: "string", description: "The `webhook-id` of its requests (`msg_…`)." },
    webhook: ID,
    blockNumber: BLOCK,
    topic: { type: "string" },
    type: { type: "string", description: "`index.<kind>` or `index.reverted`." },
    status: { enum: ["pending", "delivered", "dead", "cancelled"] },
    attempts: { type: "integer", minimum: 0 },
    nextAttemptAt: TIME_OR_NULL,
    lastError: { type: ["string", "null"] },
    createdAt: TIME,
    deliveredAt: TIME_OR_NULL,
  },
};
/** Every answer of the operators' routes: its request id and the `index` budget it spent (as the index routes'). */
const ANSWER_HEADERS = {
  "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
};
const json = (description: string, schema: unknown, example: unknown) => ({
  description,
  headers: ANSWER_HEADERS,
  content: { "application/json": { schema, example } },
});
const ok = (properties: Record<string, unknown>, required: string[]) => ({
  type: "object",
  required: ["ok", ...required],
  properties: { ok: { const: true }, ...properties },
});
const failures = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: {
          400:
            "BAD_PARAMS: a bad url, target, topic or body, or a query parameter the route does not take, given twice " +
            "or malformed (`detail.param` names it).",
          401: "UNAUTHORIZED: no or a wrong operator token (`WWW-Authenticate: Bearer`).",
          404: "NOT_FOUND: no such webhook.",
          413: "PAYLOAD_TOO_LARGE: a body over 16 KiB.",
          429: "RATE_LIMITED: the client's `index` budget is spent (`Retry-After`).",
          503:
            "INDEX_UNAVAILABLE: no database for the deliveries (`detail.reason`: unconfigured, unreachable, or not " +
            "permitted: the API's database user lacks the rights on the webhooks' schema).",
        }[s],
        headers: {
          ...ANSWER_HEADERS,
          ...(s === 429 ? { "Retry-After": { $ref: "#/components/headers/Retry-After" } } : {}),
          ...(s === 401
            ? { "WWW-Authenticate": { description: 'Bearer realm="webhooks"', schema: { type: "string" } } }
            : {}),
        },
        content: { "application/json": { schema: ERROR } },
      },
    ]),
  );
const EXAMPLE_ID = "wh_3J9xk2ZqX8s0b1mH4tVwRg";
const EXAMPLE_SUBSCRIPTION = {
  id: EXAMPLE_ID,
  url: "https://bot.example/hooks/index",
  topics: ["account:0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "board:takeovers:24h"],
  createdAt: "2026-11-26T12:00:00.000Z",
};
const idParameter = { name: "id", in: "path", required: true, schema: ID };
const operation = (o: Record<string, unknown>) => ({
  tags: ["Webhooks"],
  security: SECURITY,
  // They spend the calling address's `index` budget, as the index routes do (docs/api.md, "Webhooks").
  "x-rate-limit-bucket": "index",
  ...o,
});

export const WEBHOOK_OPERATIONS = {
  "/api/index/v1/webhooks": {
    post: operation({
      operationId: "registerWebhook",
      summary: "Register a webhook: a URL and the topics whose changes it is sent; answers its signing secret once.",
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["url", "topics"],
              additionalProperties: false,
              properties: {
                url: {
                  type: "string",
                  description: "An http(s) URL; on a public address unless WEBHOOK_ALLOW_PRIVATE allows.",
                },
                topics: TOPICS,
              },
            },
            example: { url: EXAMPLE_SUBSCRIPTION.url, topics: EXAMPLE_SUBSCRIPTION.topics },
          },
        },
      },
      responses: {
        "201": json(
          "Registered. `secret` (`whsec_<base64>`) signs every delivery and is not shown again.",
          ok(
            {
              webhook: {
                ...SUBSCRIPTION,
                required: [...SUBSCRIPTION.required, "secret"],
                properties: {
                  ...SUBSCRIPTION.properties,
                  secret: { type: "string", pattern: "^whsec_[A-Za-z0-9+/]+=*$" },
                },
              },
            },
            ["webhook"],
          ),
          { ok: true, webhook: { ...EXAMPLE_SUBSCRIPTION, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } },
        ),
        ...failures(400, 401, 413, 429, 503),
      },
    }),
    get: operation({
      operationId: "listWebhooks",
      summary: "The webhooks, each with its pending and dead deliveries and the oldest pending one's time.",
      responses: {
        "200": json("The webhooks.", ok({ webhooks: { type: "array", items: SUMMARY } }, ["webhooks"]), {
          ok: true,
          webhooks: [{ ...EXAMPLE_SUBSCRIPTION, pending: 0, dead: 0, oldestPendingAt: null }],
        }),
        ...failures(400, 401, 429, 503),
      },
    }),
  },
  "/api/index/v1/webhooks/deliveries": {
    get: operation({
      operationId: "listWebhookDeliveries",
      summary: "Deliveries, newest first: all, or by status (`dead` to see what needs a replay) and webhook.",
      // The query the route parses (api/webhooks/routes.ts), as every route's is documented.
      parameters: Object.entries(DELIVERIES_QUERY).map(([name, doc]) => openApiParameter(name, "query", doc)),
      responses: {
        "200": json("The deliveries.", ok({ deliveries: { type: "array", items: DELIVERY } }, ["deliveries"]), {
          ok: true,
          deliveries: [
            {
              id: "msg_Qm2wq1yqgqD8m8rVfJX0Aw",
              webhook: EXAMPLE_ID,
              blockNumber: "46200001",
              topic: "board:takeovers:24h",
              type: "index.board",
              status: "dead",
              attempts: 11,
              nextAttemptAt: null,
              lastError: "HTTP 503",
              createdAt: "2026-11-25T12:00:00.000Z",
              deliveredAt: null,
            },
          ],
        }),
        ...failures(400, 401, 429, 503),
      },
    }),
  },
  "/api/index/v1/webhooks/{id}": {
    delete: operation({
      operationId: "deleteWebhook",
      summary: "Delete a webhook and its deliveries.",
      parameters: [idParameter],
      responses: {
        "200": json("Deleted, with all its deliveries (delivered ones included).", ok({ deleted: ID }, ["deleted"]), {
          ok: true,
          deleted: EXAMPLE_ID,
        }),
        ...failures(400, 401, 404, 429, 503),
      },
    }),
  },
  "/api/index/v1/webhooks/{id}/replay": {
    post: operation({
      operationId: "replayWebhook",
      summary: "Send a webhook's dead deliveries again, in their order (their ids unchanged).",
      parameters: [idParameter],
      responses: {
        "200": json(
          "Queued again.",
          ok({ webhook: ID, replayed: { type: "integer", minimum: 0 } }, ["webhook", "replayed"]),
          {
            ok: true,
            webhook: EXAMPLE_ID,
            replayed: 3,
          },
        ),
        ...failures(400, 401, 404, 429, 503),
      },
    }),
  },
} as const;
