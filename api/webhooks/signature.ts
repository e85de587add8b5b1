/**
 * Standard Webhooks (standardwebhooks.com) signing: a secret `whsec_<base64>` whose bytes (the base64 decoded) key an
 * HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, sent as `webhook-signature: v1,<base64>`. Any of the
 * spec's libraries (or ten lines of node:crypto, docs/api.md) verifies it.
 */
import { createHmac, randomBytes } from "node:crypto";

/** A new secret: 24 random bytes (the spec asks 24 to 64). */
export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/** The signature header's value for one attempt. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The three headers of one attempt (`timestamp`: Unix seconds, the attempt's). */
export function signedHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": sign(secret, id, timestamp, body),
  };
}
