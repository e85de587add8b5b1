/**
 * Conditional GETs of the index API on the API process as operators run it (dist/server/main.js over a Postgres
 * index, test/support/servedIndex.ts): what goes on the wire for a 304 — the status line and the headers the 200
 * had for caching and CORS, and no body, no Content-Length or Transfer-Encoding (RFC 9110 §15.4.5, RFC 9112 §6.3); the 200's Content-Type,
 * since a cache refreshes its stored headers from a 304's and the server would otherwise write text/plain.
 * The routes' behaviour in full is test/index/router.test.ts's, in process.
 */
import { getAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendRaw } from "../support/rawHttp";
import { type ServedIndex, startServedIndex } from "../support/servedIndex";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const BASE = "/api/index/v1";

let served: ServedIndex;
let chainId: number;

beforeAll(async () => {
  served = await startServedIndex({
    serverUrl: PG_URL,
    schema: "conditional",
    synthetic: { events: 400, owners: 4, seed: 7 },
  });
  chainId = served.devnet.deployment.manifest.chainId;
}, 120_000);

afterAll(async () => {
  await served?.stop();
});

const url = (path: string) => `${served.api.url}${BASE}${path}`;

describe("If-None-Match on the API process", () => {
  it("the head's answer revalidated: 304 on the wire with its ETag, caching and CORS headers and nothing else of the 200", async () => {
    const owner = getAddress(served.index.events[0]!.account);
    for (const path of ["/stats", `/accounts/${owner}/events?limit=10`, "/leaderboards/ve?limit=10"]) {
      const first = await sendRaw(url(path));
      expect(first.status, path).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(new RegExp(`^W/"${chainId}-\\d+"$`));
      const again = await sendRaw(url(path), "GET", { "if-none-match": etag });
      expect(again.status, path).toBe(304);
      expect(again.body).toBe("");
      // The type too (the server would otherwise write text/plain, which a cache would take into its stored headers).
      for (const h of [
        "etag",
        "cache-control",
        "content-type",
        "access-control-allow-origin",
        "access-control-expose-headers",
      ])
        expect(again.headers[h], `${path} ${h}`).toBe(first.headers[h]);
      expect(again.headers["x-request-id"]).toMatch(/.+/);
      for (const h of ["content-length", "transfer-encoding"]) expect(again.headers[h], `${path} ${h}`).toBeUndefined();
    }
  });

  it("a past block's answer revalidated: 304 that keeps `immutable`; a tag that does not match gets the 200", async () => {
    const head = served.index.head.block;
    // A block well below the finalized one (30 blocks under the head) in which an event happened.
    const past = served.index.events.map((e) => e.blockNumber).find((b) => b < head - 100n)!;
    const first = await sendRaw(url(`/stats?block=${past}`));
    expect(first.status).toBe(200);
    expect(first.headers["cache-control"]).toBe("public, max-age=86400, immutable");
    expect(first.headers.etag).toBe(`W/"${chainId}-${past}"`);
    const again = await sendRaw(url(`/stats?block=${past}`), "GET", { "if-none-match": `"x", W/"${chainId}-${past}"` });
    expect([again.status, again.body]).toEqual([304, ""]);
    expect(again.headers["cache-control"]).toBe("public, max-age=86400, immutable");

    // The past block's tag does not validate the head's answer (nor a strong tag of another block, nor garbage).
    for (const tag of [`W/"${chainId}-${past}"`, `"${chainId}-${past + 1n}"`, "garbage"]) {
      const other = await sendRaw(url("/stats"), "GET", { "if-none-match": tag });
      expect(other.status, tag).toBe(200);
      expect(JSON.parse(other.body).blockNumber).toBe(String(head));
    }
  });
});
