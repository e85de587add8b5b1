/**
 * An index answer of an app in process (`app.request`), asserted a 200, and the part of it that describes its block:
 * for tests comparing two apps' answers at one block (one computing ahead or pinned to the notified head, one that
 * makes every answer on request).
 */
import { expect } from "vitest";

export type IndexBody = Record<string, unknown> & { blockNumber: string; nextCursor?: string | null };

const BASE = "/api/index/v1";

export async function readIndex(
  app: { request(path: string): Response | Promise<Response> },
  path: string,
): Promise<IndexBody> {
  const res = await app.request(`${BASE}${path}`);
  const body = (await res.json()) as IndexBody;
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

/** The answer without what describes the moment it was sent (the index's lag), which two apps may differ in. */
export const ofBlock = ({ indexLagSeconds: _, stale: __, ...rest }: IndexBody) => rest;
