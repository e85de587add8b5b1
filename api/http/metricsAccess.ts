import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Who may read the metrics (METRICS_TOKEN): a check of a request's Authorization header against
 * `Bearer <token>`, or null when no token is set (the metrics are open). Compared in constant time: both
 * sides are hashed to 32 bytes first, so neither the token's length nor how much of it a guess got right
 * shows in the time an answer takes.
 */
export type MetricsAccess = ((authorization: string | null | undefined) => boolean) | null;

const digest = (s: string) => createHash("sha256").update(s).digest();

export function metricsAccess(token: string | null): MetricsAccess {
  if (token === null) return null;
  const expected = digest(token);
  return (authorization) => {
    // RFC 9110 §11.1: the scheme is case-insensitive; RFC 6750 §2.1: one space, then the token.
    const given = /^bearer ([^\s]+)\s*$/i.exec(authorization ?? "")?.[1] ?? "";
    return timingSafeEqual(digest(given), expected);
  };
}
