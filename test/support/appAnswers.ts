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

/**
 * Two apps' answers to `path` at one block, the same: equal but for a board page's next cursor, which one may carry its
 * ranking's carried basis (api/read/cursorSeal.ts) where the other carries its own statement's seal — so each cursor
 * is followed, in the app that handed it out, and the two next pages must be equal (and their cursors alike, again).
 */
export async function expectSamePages(
  a: { app: { request(path: string): Response | Promise<Response> }; answer: IndexBody },
  b: { app: { request(path: string): Response | Promise<Response> }; answer: IndexBody },
  path: string,
  message: string,
): Promise<void> {
  const { nextCursor: aNext, ...aRest } = ofBlock(a.answer);
  const { nextCursor: bNext, ...bRest } = ofBlock(b.answer);
  expect(aRest, message).toEqual(bRest);
  expect(typeof aNext, `${message}: a next cursor in both or neither`).toBe(typeof bNext);
  if (typeof aNext !== "string" || typeof bNext !== "string" || aNext === bNext) return;
  const next = (cursor: string) => `${path}${path.includes("?") ? "&" : "?"}cursor=${cursor}`;
  await expectSamePages(
    { app: a.app, answer: await readIndex(a.app, next(aNext)) },
    { app: b.app, answer: await readIndex(b.app, next(bNext)) },
    path,
    `${message}, next page`,
  );
}
