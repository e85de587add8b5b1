/**
 * The index API's HTTP face over a synthetic index (in-memory PGlite, built by the indexer's rules): envelope,
 * block pinning, cursors that hold their block while the index moves on, the shared board, strict parameters
 * (every malformed input a 400 BAD_PARAMS, never a 5xx), 404 for an unminted lock, 503 without an index, the
 * rate-limit prefix. The answers' values against the chain are test/index/chain.test.ts's business.
 */
import { createHash, createHmac } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { getAddress } from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../api/app";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { createMetrics } from "../../api/observability/metrics";
import { createLockIndex } from "../../api/read/atBlock";
import type { LockIndex } from "../../api/read/contract";
import { CURSOR_MAC_BYTES, CursorCodec, cursorKey, cursorList } from "../../api/read/cursor";
import { freshness } from "../../api/read/shapes";
import { VeBoards } from "../../api/read/veBoard";
import {
  checkpointOf,
  generateSyntheticIndex,
  type SyntheticIndex,
  writeSyntheticIndex,
} from "../support/syntheticIndex";

/** The index's ETag at `block` on Base: the chain, the block and a digest of the answer (api/index/answer.ts). */
const tagAt = (block: bigint) => new RegExp(`^W/"8453-${block}-[\\w-]{16}"$`);
const BASE = "/api/index/v1";
const SCHEMA = "synthetic";
// Base mainnet's manifest: VeLockNFT starts at 46183959, so the synthetic chain starts there too.
const START = 46_183_959n;
let index: SyntheticIndex;
let client: PGlite;
let reader: LockIndex;
let boards: VeBoards;
let app: ReturnType<typeof createApp>;
let roomy: ReturnType<typeof createApp>;

type Json = Record<string, unknown> & { ok: boolean; blockNumber: string; blockTimestamp: string };
async function get(path: string, a = app): Promise<{ status: number; body: Json; headers: Headers }> {
  const res = await a.request(`${BASE}${path}`);
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

beforeAll(async () => {
  index = generateSyntheticIndex({ events: 2_000, owners: 60, seed: 11, startBlock: START });
  client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), SCHEMA, index, { finalizedLag: 50n });
  reader = createLockIndex({ db: drizzle(client), schema: SCHEMA });
  boards = new VeBoards({ load: (at) => reader.holders(at) });
  app = createApp({
    config: loadConfig({ NETWORK: "base" }),
    rpc: null,
    index: { atBlock: reader, boards: boards },
    logger: silentLogger,
    metrics: createMetrics(),
  });
  // The same, with room for the many requests of the shared-board tests (the budget is pinned above).
  roomy = createApp({
    config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 1e6, windowSec: 60 } },
    rpc: null,
    index: { atBlock: reader, boards: boards },
    logger: silentLogger,
  });
}, 60_000);

/** A block of the synthetic chain in which an event happened (its time is in the index: no node needed). */
const eventBlock = (i: number) => index.events[i]!.blockNumber;

describe("envelope and block", () => {
  it("every answer names the chain, its block and that block's time; the head by default", async () => {
    const { status, body, headers } = await get("/stats");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ok: true,
      chainId: 8453,
      blockNumber: String(index.head.block),
      blockTimestamp: String(index.head.time),
    });
    expect(headers.get("cache-control")).toBe("public, max-age=2");
    expect(headers.get("etag")).toMatch(tagAt(index.head.block));
    expect(headers.get("ratelimit-policy")).toBe('"index";q=300;w=60');
    expect(headers.get("access-control-allow-origin")).toBe("*");
  });

  it("?block=N answers as of N; a finalized block is cacheable for a day", async () => {
    const n = eventBlock(500);
    const { status, body, headers } = await get(`/stats?block=${n}`);
    expect(status).toBe(200);
    expect(body.blockNumber).toBe(String(n));
    expect(body.blockTimestamp).toBe(String(index.blockTimes.get(n)));
    expect(headers.get("cache-control")).toBe("public, max-age=86400, immutable");
    const { body: head } = await get("/stats");
    expect(body.totalLockedWei).not.toBe(head.totalLockedWei);
  });

  it("a block without events and no node to ask for its time: 502 STATE_READ_FAILED, not a guess", async () => {
    const withEvents = new Set(index.events.map((e) => e.blockNumber));
    const empty = [...index.blockTimes.keys()].find((b) => !withEvents.has(b) && b !== index.head.block)!;
    const { status, body } = await get(`/stats?block=${empty}`);
    expect(status).toBe(502);
    expect(body).toMatchObject({ ok: false, error: "STATE_READ_FAILED" });
  });

  it("a block above the head, before the start block, or not a canonical integer: 400 BAD_PARAMS naming it", async () => {
    const huge = [String(2n ** 63n), String(2n ** 64n), String(2n ** 256n - 1n)];
    for (const block of [
      String(index.head.block + 1n),
      String(START - 1n),
      "-1",
      "1e3",
      "0x10",
      "01",
      "",
      "1.5",
      ...huge,
    ]) {
      for (const path of [
        "/stats",
        "/locks/1",
        "/leaderboards/ve",
        "/locks/1/events",
        "/leaderboards/ve/0x0000000000000000000000000000000000000001",
      ]) {
        const { status, body } = await get(`${path}?block=${encodeURIComponent(block)}`);
        expect(status, `${path} block=${block}`).toBe(400);
        expect(body).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param: "block" } });
      }
    }
    const range = { param: "block", min: String(START), max: String(index.head.block) };
    const { body } = await get(`/stats?block=${index.head.block + 1n}`);
    expect(body.detail).toEqual(range);
    // Beyond any block the index can hold: the same range, its max too (the head), as one above the head.
    for (const block of [...huge, String(10n ** 30n)]) {
      for (const path of ["/stats", "/locks/1/events", "/leaderboards/ve"]) {
        expect((await get(`${path}?block=${block}`, roomy)).body.detail, `${path} block=${block}`).toEqual(range);
      }
    }
  });
});

describe("conditional GETs (RFC 9110 §13.1.2)", () => {
  const owner = () => getAddress([...index.locks.values()].find((l) => !l.burned)!.owner!);
  const routes = () => [
    "/stats",
    "/locks/1",
    "/locks/1/events?limit=5",
    `/accounts/${owner()}/events?limit=5`,
    `/accounts/${owner()}/locks`,
    "/leaderboards/ve?limit=5",
    `/leaderboards/ve/${owner()}`,
  ];
  const revalidate = (path: string, tag: string, method = "GET") =>
    roomy.request(`${BASE}${path}`, { method, headers: { "if-none-match": tag } });

  it("every route answers its own ETag in If-None-Match with 304: no body, the same caching, type and CORS headers", async () => {
    for (const path of routes()) {
      const first = await roomy.request(`${BASE}${path}`);
      expect(first.status, path).toBe(200);
      const etag = first.headers.get("etag")!;
      expect(etag, path).toMatch(tagAt(index.head.block));
      for (const method of ["GET", "HEAD"]) {
        const again = await revalidate(path, etag, method);
        expect(again.status, `${method} ${path}`).toBe(304);
        expect(await again.text()).toBe("");
        expect(again.headers.get("etag")).toBe(etag);
        expect(again.headers.get("cache-control")).toBe(first.headers.get("cache-control"));
        expect(again.headers.get("access-control-allow-origin")).toBe("*");
        expect(again.headers.get("access-control-expose-headers")).toBe("*");
        expect(again.headers.get("x-request-id")).toMatch(/.+/);
        expect(again.headers.get("ratelimit-policy")).toBe(first.headers.get("ratelimit-policy"));
        // The 200's media type, so a cache refreshing its stored headers from the 304 keeps it (RFC 9111 §4.3.4).
        expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
      }
    }
  });

  it("a past block's answer revalidated: 304 that keeps `immutable`; a cursor's page at its block too", async () => {
    const n = eventBlock(500);
    const first = await roomy.request(`${BASE}/stats?block=${n}`);
    expect(first.headers.get("etag")).toMatch(tagAt(n));
    const again = await revalidate(`/stats?block=${n}`, first.headers.get("etag")!);
    expect(again.status).toBe(304);
    expect(again.headers.get("cache-control")).toBe("public, max-age=86400, immutable");
    const page = await get(`/leaderboards/ve?limit=3&block=${n}`, roomy);
    const next = `/leaderboards/ve?limit=3&cursor=${page.body.nextCursor}`;
    const nextTag = (await roomy.request(`${BASE}${next}`)).headers.get("etag")!;
    expect(nextTag).toMatch(tagAt(n));
    expect((await revalidate(next, nextTag)).status).toBe(304);
    // Another answer's tag at the same block (the stats') names another body.
    expect((await revalidate(next, first.headers.get("etag")!)).status).toBe(200);
  });

  it("the weak comparison, lists and *: a strong or weak form of the tag, among others, or any tag", async () => {
    const tag = (await roomy.request(`${BASE}/stats`)).headers.get("etag")!.slice(2);
    for (const field of [tag, `W/${tag}`, `"x", W/"8453-1", ${tag}`, "*"]) {
      expect((await revalidate("/stats", field)).status, field).toBe(304);
    }
  });

  it("a tag that does not match gets the 200 and its body: another block, another chain, garbage", async () => {
    const n = eventBlock(500);
    const head = (await roomy.request(`${BASE}/stats`)).headers.get("etag")!;
    for (const field of [
      (await roomy.request(`${BASE}/stats?block=${n}`)).headers.get("etag")!,
      head.replace("8453-", "84532-"),
      `${head.slice(0, -1)}0"`,
      `W/"8453-${index.head.block}"`,
      "nonsense",
    ]) {
      const res = await revalidate("/stats", field);
      expect(res.status, field).toBe(200);
      expect(((await res.json()) as Json).blockNumber).toBe(String(index.head.block));
    }
  });

  it("validators never turn a refusal into a 304: bad parameters are 400, an unminted lock 404", async () => {
    expect((await revalidate("/stats?block=x", "*")).status).toBe(400);
    expect((await revalidate(`/locks/${10n ** 12n}`, "*")).status).toBe(404);
  });
});

describe("locks", () => {
  it("a lock; one never minted is 404; malformed ids are 400", async () => {
    const { status, body } = await get("/locks/1");
    expect(status).toBe(200);
    expect((body.lock as { tokenId: string }).tokenId).toBe("1");
    const unminted = BigInt(index.locks.size + 1);
    expect((await get(`/locks/${unminted}`)).status).toBe(404);
    expect((await get(`/locks/${unminted}/events`)).status).toBe(404);
    // Minted after the block asked about: not there yet.
    const late = index.events.find((e) => e.kind === "create" && e.blockNumber > START + 100n)!;
    const before = await get(`/locks/${late.tokenId}?block=${eventBlock(0)}`);
    expect(before.status).toBe(404);
    expect(before.body).toMatchObject({ error: "NOT_FOUND", detail: { tokenId: String(late.tokenId) } });
    for (const bad of ["-1", "01", "0x1", "1e2", "abc", "1.0", `${2n ** 256n}`]) {
      const { status, body: b } = await get(`/locks/${encodeURIComponent(bad)}`);
      expect(status, bad).toBe(400);
      expect(b).toMatchObject({ error: "BAD_PARAMS", detail: { param: "tokenId" } });
    }
  });

  it("an account's locks; a bad address or checksum is 400; an unknown parameter is 400", async () => {
    const owner = [...index.locks.values()].find((l) => !l.burned)!.owner!;
    const { status, body } = await get(`/accounts/${owner}/locks`);
    expect(status).toBe(200);
    const locks = body.locks as { owner: string; burned: boolean }[];
    expect(locks.length).toBeGreaterThan(0);
    for (const l of locks) expect(l).toMatchObject({ owner: getAddress(owner), burned: false });
    const wrongCase = `0x${owner.slice(2, 3).toLowerCase() === owner.slice(2, 3) ? owner.slice(2, 3).toUpperCase() : owner.slice(2, 3).toLowerCase()}${owner.slice(3)}`;
    for (const bad of ["0x123", "zz", wrongCase === owner ? "0xZZ" : wrongCase]) {
      expect((await get(`/accounts/${bad}/locks`)).status, bad).toBe(400);
    }
    const unknown = await get(`/accounts/${owner}/locks?limit=5`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ detail: { param: "limit", accepted: ["block", "minBlock", "waitMs"] } });
  });
});

describe("pages", () => {
  it("limit is 1…1000 (default 100); repeated or unknown parameters are 400", async () => {
    for (const q of ["limit=0", "limit=1001", "limit=-5", "limit=ten", "limit=1&limit=2", "offset=10", "n=5"]) {
      const { status, body } = await get(`/leaderboards/ve?${q}`);
      expect(status, q).toBe(400);
      expect(body.error).toBe("BAD_PARAMS");
    }
    const { body } = await get("/leaderboards/ve");
    expect((body.rows as unknown[]).length).toBe(Math.min(100, Number(body.holders)));
  });

  it("bad cursors are 400 BAD_PARAMS: garbage, tampered, another list's, another encoding, a block above the head", async () => {
    // Signed as the app signs (its config's derived key), so each case fails for the reason it names.
    const encodeCursor = (cursor: Parameters<CursorCodec["encode"]>[0]) =>
      new CursorCodec(cursorKey(loadConfig({ NETWORK: "base" }))).encode(cursor);
    const events = encodeCursor({
      kind: "events",
      list: cursorList.lock(1n),
      block: index.head.block,
      seal: null,
      after: { block: index.head.block, logIndex: 0 },
    });
    const board = encodeCursor({
      kind: "board",
      list: cursorList.ve,
      block: index.head.block,
      seal: null,
      after: { ve: 1n, address: "0x0000000000000000000000000000000000000001" },
    });
    // Well-formed wire JSON under our own MAC: only the JSON's own rules can refuse it.
    const json = (o: unknown) => {
      const wire = Buffer.from(JSON.stringify(o));
      const key = cursorKey(loadConfig({ NETWORK: "base" }));
      const mac = createHmac("sha256", key).update(wire).digest().subarray(0, CURSOR_MAC_BYTES);
      return Buffer.concat([wire, mac]).toString("base64url");
    };
    // A list's digest as the wire carries it (64 bits of SHA-256 of its name).
    const digest = (list: string) => createHash("sha256").update(list).digest().subarray(0, 8).toString("base64url");
    const lock1 = digest(cursorList.lock(1n));
    const ve = digest(cursorList.ve);
    // The control: that JSON, with lock 1's digest, is a cursor of lock 1's history.
    const head = String(index.head.block);
    const ours = await get(`/locks/1/events?cursor=${json({ v: 3, k: "e", l: lock1, b: head, p: [head, 0] })}`);
    expect(ours.status).toBe(200);
    const cases: [string, string][] = [
      ["/leaderboards/ve", "not-a-cursor!"],
      ["/leaderboards/ve", "e30"], // {}
      ["/leaderboards/ve", events], // an events cursor on the board
      ["/locks/1/events", board],
      ["/locks/1/events", `${events}=`], // padded: not the canonical text
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "01", p: ["1", 0] })],
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "10", p: ["11", 0] })], // keyset above its block
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "10", p: ["9", -1] })],
      ["/locks/1/events", json({ v: 4, k: "e", l: lock1, b: "10", p: ["9", 1] })],
      ["/locks/1/events", json({ v: 2, k: "e", l: lock1, b: "10", p: ["9", 1] })], // version 2: no seal
      ["/locks/1/events", json({ v: 1, k: "e", b: "10", p: ["9", 1] })], // version 1: no list, issued before 0.3
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "10", p: ["9", 1], s: ["10", "AAAAAAAAAAAAAAAA"] })], // seal from its block
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "10", p: ["9", 1], s: ["9", "AAAA"] })], // a short digest
      ["/locks/1/events", json({ v: 3, k: "e", l: lock1, b: "10", p: ["9", 1], s: null })], // null, not absent
      ["/locks/1/events", json({ k: "e", v: 3, l: lock1, b: "10", p: ["9", 1] })], // another key order
      ["/locks/1/events", json({ v: 3, k: "e", l: ve, b: "10", p: ["9", 1] })], // another list's digest
      [
        "/leaderboards/ve",
        json({ v: 3, k: "v", l: ve, b: "10", p: ["9", "0xABC0000000000000000000000000000000000001"] }),
      ],
      ["/locks/1/events", "A".repeat(600)],
      [
        "/locks/1/events",
        encodeCursor({
          kind: "events",
          list: cursorList.lock(1n),
          block: index.head.block + 5n,
          seal: null,
          after: { block: 1n, logIndex: 0 },
        }),
      ],
    ];
    for (const [path, cursor] of cases) {
      const { status, body } = await get(`${path}?cursor=${encodeURIComponent(cursor)}`);
      expect(status, `${path} ${cursor}`).toBe(400);
      expect(body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "cursor" } });
    }
    // block and cursor must agree.
    const mismatch = await get(`/locks/1/events?cursor=${events}&block=${index.head.block - 1n}`);
    expect(mismatch.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "block" } });
  });

  it("a cursor carries our MAC: forged, tampered, cut short or another deployment's is 400; ours pages every list", async () => {
    // A lock with three events or more, so its list has a third page.
    const perLock = new Map<bigint, number>();
    for (const e of index.events) perLock.set(e.tokenId, (perLock.get(e.tokenId) ?? 0) + 1);
    const lock = [...perLock.entries()].find(([, n]) => n >= 3)![0];
    const lists = [
      "/leaderboards/ve?limit=2",
      `/locks/${lock}/events?limit=1`,
      `/accounts/${mostActive()}/events?limit=1`,
    ];
    // Another deployment: same chain and index, another CURSOR_SECRET.
    const other = createApp({
      config: {
        ...loadConfig({ NETWORK: "base", CURSOR_SECRET: "x".repeat(32) }),
        rateLimit: { max: 1e6, windowSec: 60 },
      },
      rpc: null,
      index: { atBlock: reader, boards },
      logger: silentLogger,
    });
    for (const list of lists) {
      const first = await get(list, roomy);
      const cursor = first.body.nextCursor as string;
      expect(cursor, list).toBeTypeOf("string");
      // Ours: the next page, twice over.
      const next = await get(`${list}&cursor=${cursor}`, roomy);
      expect(next.status, list).toBe(200);
      expect(await get(`${list}&cursor=${next.body.nextCursor as string}`, roomy)).toMatchObject({ status: 200 });
      const bytes = Buffer.from(cursor, "base64url");
      const payload = bytes.subarray(0, bytes.length - CURSOR_MAC_BYTES);
      const wire = JSON.parse(payload.toString()) as { b: string; p: [string, unknown] };
      // Self-consistent and plausible (an earlier block), with a MAC made up.
      const forgedWire = Buffer.from(JSON.stringify({ ...wire, b: String(BigInt(wire.b) - 1n) }));
      const forged = Buffer.concat([forgedWire, Buffer.alloc(CURSOR_MAC_BYTES, 7)]).toString("base64url");
      // Our MAC over other JSON: one byte of the payload changed, the MAC kept.
      const tampered = Buffer.from(bytes);
      const at = payload.indexOf(Buffer.from(wire.b));
      tampered.writeUInt8(tampered.readUInt8(at) ^ 1, at);
      const cases = {
        forged,
        tampered: tampered.toString("base64url"),
        "MAC cut short": bytes.subarray(0, bytes.length - 4).toString("base64url"),
        "no MAC": payload.toString("base64url"),
        "the MAC alone": bytes.subarray(payload.length).toString("base64url"),
        "another deployment's": (await get(list, other)).body.nextCursor as string,
      };
      for (const [name, bad] of Object.entries(cases)) {
        const res = await get(`${list}&cursor=${bad}`, roomy);
        expect(res.status, `${list} ${name}`).toBe(400);
        expect(res.body, `${list} ${name}`).toMatchObject({
          ok: false,
          error: "BAD_PARAMS",
          detail: { param: "cursor" },
        });
      }
      // And the other deployment refuses ours.
      expect((await get(`${list}&cursor=${cursor}`, other)).status, list).toBe(400);
    }
  });

  it("a cursor pages only the list it was handed out for: another lock's, account's, board's, window's or filter's is 400", async () => {
    const key = cursorKey(loadConfig({ NETWORK: "base" }));
    const next = async (path: string) => {
      const { status, body } = await get(path, roomy);
      expect(status, path).toBe(200);
      expect(body.nextCursor, path).toBeTypeOf("string");
      return body.nextCursor as string;
    };
    // Two locks with two events or more (each list has a next page), the two most active accounts.
    const perLock = new Map<bigint, number>();
    for (const e of index.events) perLock.set(e.tokenId, (perLock.get(e.tokenId) ?? 0) + 1);
    const [lockA, lockB] = [...perLock.entries()].filter(([, n]) => n >= 2).map(([id]) => id);
    const perAccount = new Map<string, number>();
    for (const e of index.events) perAccount.set(e.account, (perAccount.get(e.account) ?? 0) + 1);
    const [a, b] = [...perAccount.entries()].sort((x, y) => y[1] - x[1]).map(([address]) => getAddress(address));
    const lists = {
      lockA: `/locks/${lockA}/events?limit=1`,
      lockB: `/locks/${lockB}/events?limit=1`,
      accountA: `/accounts/${a}/events?limit=1`,
      accountB: `/accounts/${b}/events?limit=1`,
      activity: "/activity?limit=1",
      activityCreate: "/activity?kind=create&limit=1",
      activityCreateTopup: "/activity?kind=create,topup&limit=1",
      activityA: `/activity?account=${a}&limit=1`,
      ve: "/leaderboards/ve?limit=1",
      takeovers7d: "/leaderboards/takeovers?window=7d&limit=1",
      takeovers24h: "/leaderboards/takeovers?window=24h&limit=1",
      takeoversLifetime: "/leaderboards/takeovers?window=lifetime&limit=1",
      royalties7d: "/leaderboards/royalties?window=7d&limit=1",
    };
    const cursors: Partial<Record<keyof typeof lists, string>> = {};
    for (const name of [
      "lockA",
      "accountA",
      "activity",
      "activityCreate",
      "activityCreateTopup",
      "activityA",
      "ve",
    ] as const) {
      cursors[name] = await next(lists[name]);
    }
    // The synthetic index has no protocol events: the duration boards are empty, so their cursor is made as the app
    // makes one (its key, the board's list).
    cursors.takeovers7d = new CursorCodec(key).encode({
      kind: "board",
      list: cursorList.board("takeovers", "7d"),
      block: index.head.block,
      seal: null,
      after: { ve: 1n, address: "0x0000000000000000000000000000000000000001" },
    });
    // Each on its own list pages on; the kinds of an activity filter are a set (their order is not the list's).
    const accepted: [keyof typeof lists, string][] = [
      ...Object.entries(cursors).map(
        ([name, cursor]) => [name as keyof typeof lists, cursor] as [keyof typeof lists, string],
      ),
    ];
    for (const [name, cursor] of accepted) {
      const res = await get(`${lists[name]}&cursor=${cursor}`, roomy);
      expect(res.status, name).toBe(200);
    }
    expect((await get(`/activity?kind=topup,create&limit=1&cursor=${cursors.activityCreateTopup}`, roomy)).status).toBe(
      200,
    );
    const refused: [keyof typeof lists, keyof typeof lists][] = [
      ["lockA", "lockB"], // another lock's history
      ["lockA", "accountA"],
      ["lockA", "activity"],
      ["accountA", "accountB"], // another account's history
      ["accountA", "activityA"], // the account's activity is not its lock history
      ["accountA", "lockA"],
      ["activity", "activityCreate"], // another filter
      ["activityCreate", "activity"],
      ["activityCreate", "activityCreateTopup"],
      ["activityA", "activity"],
      ["activityA", "accountA"],
      ["activity", "lockA"],
      ["ve", "takeovers7d"], // another board
      ["takeovers7d", "ve"],
      ["takeovers7d", "takeovers24h"], // another window
      ["takeovers7d", "takeoversLifetime"],
      ["takeovers7d", "royalties7d"], // another duration board, the same window
    ];
    for (const [from, on] of refused) {
      const res = await get(`${lists[on]}&cursor=${cursors[from]}`, roomy);
      expect(res.status, `${from} on ${on}`).toBe(400);
      expect(res.body, `${from} on ${on}`).toMatchObject({
        ok: false,
        error: "BAD_PARAMS",
        detail: { param: "cursor" },
      });
    }
  });

  it("a list walked page by page gives every row once, in order: a lock's history, a filtered feed", async () => {
    const perLock = new Map<bigint, number>();
    for (const e of index.events) perLock.set(e.tokenId, (perLock.get(e.tokenId) ?? 0) + 1);
    const lock = [...perLock.entries()].sort((x, y) => y[1] - x[1])[0]![0];
    for (const [first, whole] of [
      [`/locks/${lock}/events?limit=1`, `/locks/${lock}/events?limit=1000`],
      ["/activity?kind=create,topup&limit=7", "/activity?kind=create,topup&limit=1000"],
      [`/activity?account=${mostActive()}&limit=3`, `/activity?account=${mostActive()}&limit=1000`],
    ] as const) {
      const ids: string[] = [];
      let path: string = first;
      for (let i = 0; i < 1_000; i++) {
        const { status, body } = await get(path, roomy);
        expect(status, path).toBe(200);
        ids.push(...(body.events as { txHash: string; logIndex: number }[]).map((e) => `${e.txHash}-${e.logIndex}`));
        if (body.nextCursor === null) break;
        path = `${first}&cursor=${body.nextCursor as string}`;
      }
      const all = ((await get(whole, roomy)).body.events as { txHash: string; logIndex: number }[]).map(
        (e) => `${e.txHash}-${e.logIndex}`,
      );
      expect(all.length, first).toBeGreaterThan(2);
      expect(new Set(ids).size, first).toBe(ids.length);
      expect(ids, first).toEqual(all);
    }
  });

  it("the board pages by keyset at the first page's block, whatever the index does meanwhile", async () => {
    const all = await collect("/leaderboards/ve?limit=7", "rows");
    const { body: whole } = await get("/leaderboards/ve?limit=1000");
    expect(all.rows).toEqual(whole.rows);
    expect(all.rows.map((r) => (r as { rank: number }).rank)).toEqual(all.rows.map((_, i) => i + 1));
    expect(new Set(all.blocks)).toEqual(new Set([String(index.head.block)]));
  });

  it("history pages hold their block while new blocks arrive", async () => {
    const busy = mostActive();
    const first = await get(`/accounts/${busy}/events?limit=3`);
    expect(first.status).toBe(200);
    const cursor = first.body.nextCursor as string;
    expect(cursor).toBeTypeOf("string");
    // The index moves on: a new block with a new event of this account.
    const next = index.head.block + 10n;
    await client.query(
      `INSERT INTO "${SCHEMA}"."lock_event" SELECT 'new-event', 'create', 999999, $1, 1, 1, false, NULL, NULL, $1, 1, false, false, $2, $3, '0x00', 0`,
      [busy.toLowerCase(), String(next), String(index.head.time + 600n)],
    );
    await client.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET latest_checkpoint = $1`, [
      checkpointOf(8453, next, index.head.time + 600n),
    ]);
    try {
      const second = await get(`/accounts/${busy}/events?limit=3&cursor=${cursor}`);
      expect(second.body.blockNumber).toBe(first.body.blockNumber);
      const ids = [
        ...(first.body.events as { txHash: string; logIndex: number }[]),
        ...(second.body.events as { txHash: string; logIndex: number }[]),
      ].map((e) => `${e.txHash}-${e.logIndex}`);
      expect(new Set(ids).size).toBe(ids.length);
      const fresh = await get(`/accounts/${busy}/events?limit=3`);
      expect(fresh.body.blockNumber).toBe(String(next));
      expect((fresh.body.events as { tokenId: string }[])[0]?.tokenId).toBe("999999");
    } finally {
      await client.query(`DELETE FROM "${SCHEMA}"."lock_event" WHERE id = 'new-event'`);
      await client.query(`UPDATE "${SCHEMA}"."_ponder_checkpoint" SET latest_checkpoint = $1`, [
        checkpointOf(8453, index.head.block, index.head.time),
      ]);
    }
  });
});

describe("the shared board", () => {
  it("many board and rank requests in one block cost one computation", async () => {
    const block = eventBlock(1_000);
    const before = boards.computed;
    const owner = getAddress(index.events[1_000]!.account);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        get(i % 2 ? `/leaderboards/ve?block=${block}&limit=5` : `/leaderboards/ve/${owner}?block=${block}`, roomy),
      ),
    );
    for (const a of answers) expect(a.status).toBe(200);
    expect(boards.computed - before).toBe(1);
  });

  it("rank lookup: the row and the one above; null without ve", async () => {
    const { body: board } = await get("/leaderboards/ve?limit=3", roomy);
    const rows = board.rows as { address: string; rank: number }[];
    const second = await get(`/leaderboards/ve/${rows[1]!.address}`, roomy);
    expect(second.body.row).toEqual(rows[1]);
    expect(second.body.above).toEqual(rows[0]);
    const first = await get(`/leaderboards/ve/${rows[0]!.address}`, roomy);
    expect(first.body.above).toBeNull();
    const nobody = await get("/leaderboards/ve/0x0000000000000000000000000000000000000001", roomy);
    expect(nobody.body).toMatchObject({ row: null, above: null });
  });

  it("rank lookup: an address in lower case, upper case or EIP-55 finds the same row; a wrong checksum is 400", async () => {
    const { body: board } = await get("/leaderboards/ve?limit=3", roomy);
    const shown = (board.rows as { address: string }[])[1]!.address;
    // A row's address is EIP-55 (mixed case); its first letter's case flipped breaks the checksum.
    const at = shown.slice(2).search(/[a-fA-F]/) + 2;
    const flip = shown[at] === shown[at]!.toLowerCase() ? shown[at]!.toUpperCase() : shown[at]!.toLowerCase();
    const wrong = `${shown.slice(0, at)}${flip}${shown.slice(at + 1)}`;
    const answers = [];
    for (const spelled of [shown, shown.toLowerCase(), `0x${shown.slice(2).toUpperCase()}`]) {
      const res = await get(`/leaderboards/ve/${spelled}`, roomy);
      expect(res.status, spelled).toBe(200);
      answers.push({ holders: res.body.holders, row: res.body.row, above: res.body.above });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect((answers[0] as { row: { address: string } }).row.address).toBe(shown);
    for (const [bad, message] of [
      [wrong, "address has an invalid EIP-55 checksum."],
      [`0X${shown.slice(2)}`, "address must be a 0x-prefixed 20-byte hex address."],
      [shown.slice(0, -1), "address must be a 0x-prefixed 20-byte hex address."],
    ] as const) {
      const res = await get(`/leaderboards/ve/${bad}`, roomy);
      expect(res.status, bad).toBe(400);
      expect(res.body, bad).toMatchObject({ error: "BAD_PARAMS", message, detail: { param: "address" } });
    }
  });
});

describe("rate limit", () => {
  it("the index routes share one budget of their own: over it, 429 RATE_LIMITED; other prefixes unaffected", async () => {
    const tight = createApp({
      config: { ...loadConfig({ NETWORK: "base" }), rateLimit: { max: 2, windowSec: 60 } },
      rpc: null,
      index: { atBlock: reader },
      logger: silentLogger,
    });
    expect((await get("/stats", tight)).status).toBe(200);
    expect((await get("/locks/1", tight)).status).toBe(200);
    const over = await get("/leaderboards/ve", tight);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ ok: false, error: "RATE_LIMITED" });
    expect(over.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(over.headers.get("ratelimit")).toMatch(/^"index";r=0;t=\d+$/);
    // The preparation API's budgets are its own.
    const preflight = await tight.request("/api/mcp/v1/preflight");
    expect(preflight.status).not.toBe(429);
  });
});

describe("without an index", () => {
  it("503 INDEX_UNAVAILABLE, parameters still judged first", async () => {
    const bare = createApp({ config: loadConfig({ NETWORK: "base" }), rpc: null, logger: silentLogger });
    const { status, body } = await get("/stats", bare);
    expect(status).toBe(503);
    expect(body).toMatchObject({ ok: false, error: "INDEX_UNAVAILABLE", detail: { reason: "unconfigured" } });
    expect((await get("/locks/x", bare)).status).toBe(400);
  });

  it.each([
    // The views (or their schema) not created yet: the database answers, the index does not exist yet.
    ["a schema that does not exist is 503 not started", "no_such_schema", "not started"],
    // A relation of the index that is there failing (a table dropped under it, a view left broken): the database's.
    ["a database that fails is 503 unreachable", "pg_catalog", "unreachable"],
  ])("%s, never a 500", async (_name, schema, reason) => {
    const broken = createLockIndex({
      db: drizzle(client),
      schema,
      // Whatever the statement, the database refuses it (an SQLSTATE neither of a missing index nor retried).
      ...(reason === "unreachable"
        ? { prepared: async () => Promise.reject(Object.assign(new Error("the database is down"), { code: "57P01" })) }
        : {}),
    });
    const a = createApp({
      config: loadConfig({ NETWORK: "base" }),
      rpc: null,
      index: { atBlock: broken },
      logger: silentLogger,
    });
    for (const path of [
      "/stats",
      "/locks/1",
      "/leaderboards/ve",
      "/accounts/0x0000000000000000000000000000000000000001/events",
    ]) {
      const { status, body } = await get(path, a);
      expect(status, path).toBe(503);
      expect(body).toMatchObject({ error: "INDEX_UNAVAILABLE", detail: { reason } });
    }
  });
});

function mostActive(): string {
  const counts = new Map<string, number>();
  for (const e of index.events) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
  return getAddress([...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0]);
}

async function collect(first: string, key: "rows" | "events") {
  const rows: unknown[] = [];
  const blocks: string[] = [];
  let path = first;
  for (let i = 0; i < 1_000; i++) {
    const { status, body } = await get(path);
    expect(status).toBe(200);
    rows.push(...(body[key] as unknown[]));
    blocks.push(body.blockNumber);
    if (body.nextCursor === null) break;
    path = `${first}&cursor=${body.nextCursor as string}`;
  }
  return { rows, blocks };
}

describe("freshness (issue 31 item 5) and minBlock in process", () => {
  const lagAt = (nowSec: number) => Math.max(0, nowSec - Number(index.head.time));

  it("indexLagSeconds is now minus the head block's time, for a past block too; stale above INDEX_STALE_SECONDS (a leaderboard's answer: INDEX_BOARD_STALE_SECONDS)", async () => {
    const before = Math.floor(Date.now() / 1000);
    const head = await get("/stats");
    const past = await get(`/stats?block=${eventBlock(3)}`);
    const after = Math.floor(Date.now() / 1000);
    for (const r of [head, past]) {
      expect(r.body.indexLagSeconds).toBeGreaterThanOrEqual(lagAt(before));
      expect(r.body.indexLagSeconds).toBeLessThanOrEqual(lagAt(after));
    }
    expect(past.body.blockNumber).toBe(String(eventBlock(3)));
    // The synthetic chain's head is days old: over the default 180 s.
    expect(lagAt(before)).toBeGreaterThan(180);
    expect(head.body.stale).toBe(true);
    const lag = lagAt(before);
    // A leaderboard's answers (the boards and their rank lookups) by INDEX_BOARD_STALE_SECONDS, the reference's 15
    // minutes; any other by INDEX_STALE_SECONDS.
    // Each app its own (this file's app has spent much of its request budget).
    let holder: string | undefined;
    for (const [threshold, boardThreshold, stale, boardStale] of [
      [lag + 120, lag + 120, false, false],
      [lag - 120, lag + 120, true, false],
      [lag + 120, lag - 120, false, true],
    ] as const) {
      const other = createApp({
        config: {
          ...loadConfig({ NETWORK: "base" }),
          indexStaleSeconds: threshold,
          indexBoardStaleSeconds: boardThreshold,
        },
        rpc: null,
        index: { atBlock: reader, boards },
        logger: silentLogger,
        metrics: createMetrics(),
      });
      const label = `${threshold - lag} / ${boardThreshold - lag}`;
      expect((await get("/stats", other)).body.stale, label).toBe(stale);
      holder ??= ((await get("/leaderboards/ve?limit=1", other)).body.rows as { address: string }[])[0]!.address;
      const boardPaths = [
        "/leaderboards/ve?limit=1",
        `/leaderboards/ve/${holder}`,
        "/leaderboards/takeovers?limit=1",
        `/leaderboards/takeovers/${holder}`,
      ];
      for (const path of boardPaths) {
        const r = await get(path, other);
        expect(r.status, path).toBe(200);
        expect(r.body.stale, `${path} ${label}`).toBe(boardStale);
      }
    }
    // Unset, the defaults: 180 and 900 (a head days old is stale to both).
    expect(loadConfig({ NETWORK: "base" })).toMatchObject({ indexStaleSeconds: 180, indexBoardStaleSeconds: 900 });
  });

  it("a head timestamp ahead of the wall clock is a lag of 0, never negative", () => {
    const now = 1_800_000_000_000;
    expect(freshness(1_800_000_100n, 180, now)).toEqual({ indexLagSeconds: 0, stale: false });
    expect(freshness(1_799_999_819n, 180, now)).toEqual({ indexLagSeconds: 181, stale: true });
    expect(freshness(1_799_999_820n, 180, now)).toEqual({ indexLagSeconds: 180, stale: false });
  });

  it("minBlock at or below the head answers at the head; the ETag and a 304 do not depend on it", async () => {
    const r = await get(`/stats?minBlock=${index.head.block}`);
    expect(r.status).toBe(200);
    expect(r.body.blockNumber).toBe(String(index.head.block));
    expect(r.headers.get("etag")).toMatch(tagAt(index.head.block));
    const res = await app.request(`${BASE}/stats?minBlock=${index.head.block - 5n}`, {
      headers: { "if-none-match": r.headers.get("etag")! },
    });
    expect(res.status).toBe(304);
  });

  it("above the head without a node to judge how far: waitMs 0 is 409 at once with the head; a cursor below minBlock is 400", async () => {
    const r = await get(`/accounts/${getAddress(index.events[0]!.account)}/events?minBlock=${index.head.block + 1n}`);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      error: "INDEX_BEHIND",
      retryAfterSec: 2,
      detail: { head: String(index.head.block), minBlock: String(index.head.block + 1n), of: "index", waitedMs: 0 },
    });
    expect(r.headers.get("retry-after")).toBe("2");
    const cursor = new CursorCodec(cursorKey(loadConfig({ NETWORK: "base" }))).encode({
      kind: "board",
      list: cursorList.ve,
      block: eventBlock(5),
      seal: null,
      after: { ve: 1n, address: index.events[0]!.account },
    });
    // (On the roomy app: a past block's board costs 10 of the budget, and this file's tests have spent the app's.)
    const below = await get(`/leaderboards/ve?cursor=${cursor}&minBlock=${eventBlock(5) + 1n}`, roomy);
    expect(below.status).toBe(400);
    expect(below.body).toMatchObject({ error: "BAD_PARAMS", detail: { param: "cursor" } });
  });
});
