/**
 * The official duration boards against the chain (issue 31, items 1, 2 and 6): a real Ponder index of the seeded
 * devnet (whose seed puts every board's events inside 24 h, 7 d, 30 d and beyond, from several accounts), the app
 * over it, and every board × window compared with the ranking computed in the test from eth_getLogs AT THE
 * ANSWER'S BLOCK (test/support/boardTruth.ts: the rules of protocol.md §9, not the indexer's code) — at the head
 * and at past blocks, every page and every rank lookup.
 */
import { randomUUID } from "node:crypto";
import { encodeFunctionData, getAddress, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi, VeLockNFTAbi } from "../../abis";
import { createApp } from "../../api/app";
import type { TtlCache } from "../../api/cache/ttlCache";
import { loadConfig } from "../../api/config";
import { silentLogger } from "../../api/observability/logger";
import { buildOpenApiDocument } from "../../api/openapi/document";
import { createLockIndex } from "../../api/read/atBlock";
import { boardCodec, createSharedAnswers } from "../../api/read/sharedAnswers";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { BOARD_PLAYERS, DEVNET_ACCOUNTS } from "../../devnet/seed";
import { BOARDS, type Board, chainEntries, rank, WINDOWS, type WindowKey } from "../support/boardTruth";
import { graphqlData, graphqlPost } from "../support/graphqlChain";
import { type IndexChain, startIndexChain } from "../support/indexChain";
import { headBlock } from "../support/lockChain";
import { openApiValidator } from "../support/openApiValidator";

const BASE = "/api/index/v1";
const UNIT: Record<Board, string> = {
  "king-claim-mined": "wei",
  "longest-reign": "seconds",
  takeovers: "count",
  "takeover-eth": "wei",
  royalties: "wei",
  "furnace-claim": "wei",
  "furnace-eth": "wei",
};
type Row = { rank: number; address: string; value: string; unit: string };
type Json = Record<string, unknown> & { ok: boolean; blockNumber: string; blockTimestamp: string };

describe("official duration boards against the chain", () => {
  let chain: IndexChain;
  let validate: ReturnType<typeof openApiValidator>;

  beforeAll(async () => {
    chain = await startIndexChain();
    validate = openApiValidator(await buildOpenApiDocument());
  }, 240_000);
  afterAll(() => chain?.stop());

  async function get(route: string, documented: string): Promise<{ status: number; body: Json }> {
    const res = await chain.app.request(`${BASE}${route}`);
    const body = (await res.json()) as Json;
    if (res.status === 200) {
      expect(validate.check(validate.media(`${BASE}${documented}`, 200).schema, body), route).toBeNull();
    }
    return { status: res.status, body };
  }

  /** Every page of a board (pages of 2: the cursors are exercised), all at the first page's block. */
  async function pages(board: Board, window: WindowKey, block?: bigint) {
    const rows: Row[] = [];
    let cursor: string | null = null;
    let first: Json | null = null;
    for (let i = 0; i < 100; i++) {
      const q = new URLSearchParams({ window, limit: "2" });
      if (block !== undefined && cursor === null) q.set("block", String(block));
      if (cursor !== null) q.set("cursor", cursor);
      const { status, body } = await get(`/leaderboards/${board}?${q}`, "/leaderboards/{board}");
      expect(status, JSON.stringify(body)).toBe(200);
      first ??= body;
      expect(body.blockNumber).toBe(first.blockNumber);
      rows.push(...(body.rows as Row[]));
      cursor = body.nextCursor as string | null;
      if (cursor === null) return { rows, body: first };
    }
    throw new Error("too many pages");
  }

  async function compareAll(block?: bigint) {
    const client = chain.devnet.clients.publicClient;
    let shown = 0;
    for (const board of BOARDS) {
      for (const window of Object.keys(WINDOWS) as WindowKey[]) {
        const { rows, body } = await pages(board, window, block);
        const at = BigInt(body.blockNumber);
        if (block !== undefined) expect(at).toBe(block);
        const time = (await client.getBlock({ blockNumber: at })).timestamp;
        expect(body.blockTimestamp).toBe(String(time));
        expect(body).toMatchObject({ board, window, chainId: 31337 });
        const span = WINDOWS[window];
        expect(body.windowStart).toBe(span === null ? null : String(time - span));
        const truth = rank(await chainEntries(client as never, chain.devnet.addresses, at), board, window, time);
        expect(rows, `${board} ${window} at ${at}`).toEqual(
          truth.map((r) => ({ ...r, address: getAddress(r.address), unit: UNIT[board] })),
        );
        expect(body.accounts).toBe(truth.length);
        shown += rows.length;
        // The rank lookup of every ranked account, and of one that is not ranked.
        const q = `?window=${window}&block=${at}`;
        for (const [i, r] of rows.entries()) {
          const { status, body: one } = await get(
            `/leaderboards/${board}/${r.address}${q}`,
            "/leaderboards/{board}/{address}",
          );
          expect(status).toBe(200);
          expect(one.row).toEqual(r);
          expect(one.above).toEqual(i === 0 ? null : rows[i - 1]);
        }
        const nobody = await get(
          `/leaderboards/${board}/0x000000000000000000000000000000000000dEaD${q}`,
          "/leaderboards/{board}/{address}",
        );
        expect(nobody.body).toMatchObject({ row: null, above: null });
      }
    }
    return shown;
  }

  it("at the head: every board in every window equals the chain's events, every page and every rank", async () => {
    expect(await compareAll()).toBeGreaterThan(50);
  });

  it("at past blocks (the seed's phases): every board in every window equals the chain's events at that block", async () => {
    const phases = chain.devnet.seed.boardPhases;
    for (const block of [phases.month.toBlock, phases.week.fromBlock + 2n, phases.day.fromBlock - 1n]) {
      await compareAll(block);
    }
  });

  it("the windows differ on every board at the head (the seed covers each)", async () => {
    for (const board of BOARDS) {
      const seen = new Set<string>();
      for (const window of Object.keys(WINDOWS) as WindowKey[])
        seen.add(JSON.stringify((await pages(board, window)).rows));
      expect(seen.size, board).toBe(4);
    }
  });

  it("the documented examples match their schemas, and the examples' own requests answer 200", async () => {
    for (const path of ["/leaderboards/{board}", "/leaderboards/{board}/{address}"]) {
      const media = validate.media(`${BASE}${path}`, 200);
      expect(validate.check(media.schema, media.example)).toBeNull();
    }
    const res = await get(
      "/leaderboards/takeover-eth/0x70997970C51812dc3A010C7d01b50e0d17dc79C8?window=7d",
      "/leaderboards/{board}/{address}",
    );
    expect(res.status).toBe(200);
  });

  it("profiles: each account's lifetime figure and rank on every board, its ve rank, its first and last activity", async () => {
    const client = chain.devnet.clients.publicClient;
    const at = chain.devnet.addresses;
    const players = Object.values(BOARD_PLAYERS).map((p) => p.address);
    const roles = [DEVNET_ACCOUNTS.alice, DEVNET_ACCOUNTS.bob, DEVNET_ACCOUNTS.carol, DEVNET_ACCOUNTS.idle].map(
      (a) => a.address,
    );
    const phases = chain.devnet.seed.boardPhases;
    for (const block of [undefined, phases.month.toBlock]) {
      for (const who of [...players, ...roles]) {
        const q = block === undefined ? "" : `?block=${block}`;
        const { status, body } = await get(`/accounts/${who}${q}`, "/accounts/{address}");
        expect(status, JSON.stringify(body)).toBe(200);
        const b = BigInt(body.blockNumber);
        const time = BigInt(body.blockTimestamp);
        const entries = await chainEntries(client as never, at, b);
        const boards = body.boards as Record<string, { value: string; rank: number | null; unit: string }>;
        for (const board of BOARDS) {
          const truth = rank(entries, board, "lifetime", time);
          const row = truth.find((r) => r.address === who.toLowerCase());
          expect(boards[board], `${who} ${board} at ${b}`).toEqual({
            value: row?.value ?? "0",
            rank: row?.rank ?? null,
            unit: UNIT[board],
          });
        }
        const ve = await get(`/leaderboards/ve/${who}?block=${b}`, "/leaderboards/ve/{address}");
        const veRow = ve.body.row as { rank: number; veWei: string } | null;
        expect(boards.ve).toEqual({ value: veRow?.veWei ?? "0", rank: veRow?.rank ?? null, unit: "wei" });
        if (players.includes(who)) {
          // The players' events all name them as user, king, newKing or previousKing.
          const logs = parseEventLogs({
            abi: [...MineCoreAbi, ...FurnaceAbi, ...ShareholderRoyaltiesAbi, ...VeLockNFTAbi],
            logs: await client.getLogs({
              address: [at.MineCore, at.Furnace, at.ShareholderRoyalties, at.VeLockNFT],
              fromBlock: 0n,
              toBlock: b,
            }),
          }).filter((l) =>
            ["user", "king", "newKing", "previousKing"].some(
              (k) => String((l.args as Record<string, unknown>)[k] ?? "").toLowerCase() === who.toLowerCase(),
            ),
          );
          const blocks = logs.map((l) => l.blockNumber).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
          expect(body.firstActivityBlock).toBe(String(blocks[0]));
          expect(body.lastActivityBlock).toBe(String(blocks.at(-1)));
        }
        if (who === DEVNET_ACCOUNTS.idle.address) {
          expect(body).toMatchObject({ firstActivityBlock: null, lastActivityBlock: null });
          for (const v of Object.values(boards)) expect(v).toMatchObject({ value: "0", rank: null });
        }
      }
    }
    const media = validate.media(`${BASE}/accounts/{address}`, 200);
    expect(validate.check(media.schema, media.example)).toBeNull();
  });

  it("GraphQL: leaderboard, rank, activity and profile answer what the REST routes answer at the same block", async () => {
    const post = graphqlPost((p, init) => chain.app.request(p, init));
    const block = chain.devnet.seed.boardPhases.week.toBlock;
    for (const board of BOARDS) {
      for (const window of ["24h", "lifetime"] as const) {
        const rest = await pages(board, window, block);
        const data = await graphqlData(
          post,
          `query($b: String!, $w: String!, $n: Block) { leaderboard(board: $b, window: $w, limit: 2, block: $n) {
             board window windowStart accounts items { rank address value unit } pageInfo { hasNextPage endCursor } }
           _meta { block } }`,
          { b: board, w: window, n: String(block) },
        );
        expect(data._meta.block).toBe(String(block));
        const lb = data.leaderboard;
        expect(lb).toMatchObject({ board, window, windowStart: rest.body.windowStart, accounts: rest.body.accounts });
        expect(lb.items).toEqual(rest.rows.slice(0, 2));
        expect(lb.pageInfo.hasNextPage).toBe(rest.rows.length > 2);
        if (lb.pageInfo.hasNextPage) {
          const next = await graphqlData(
            post,
            `query($b: String!, $w: String!, $a: String) { leaderboard(board: $b, window: $w, limit: 2, after: $a) { items { rank address value unit } } }`,
            { b: board, w: window, a: lb.pageInfo.endCursor },
          );
          expect(next.leaderboard.items).toEqual(rest.rows.slice(2, 4));
        }
        const who = rest.rows.at(-1)?.address;
        if (who !== undefined) {
          const r = await graphqlData(
            post,
            `query($b: String!, $w: String!, $a: String!, $n: Block) { rank(board: $b, window: $w, address: $a, block: $n) { row { rank address value unit } above { rank } } }`,
            { b: board, w: window, a: who, n: String(block) },
          );
          expect(r.rank.row).toEqual(rest.rows.at(-1));
        }
      }
    }
    const feedRest = await get(`/activity?limit=5&block=${block}`, "/activity");
    const feedGql = await graphqlData(
      post,
      `query($n: Block) { activity(limit: 5, block: $n) { items { id kind accounts fields blockNumber blockTimestamp txHash logIndex } } }`,
      { n: String(block) },
    );
    expect(feedGql.activity.items.map((i: { fields: string }) => ({ ...i, fields: JSON.parse(i.fields) }))).toEqual(
      feedRest.body.events,
    );
    const who = BOARD_PLAYERS.frank.address;
    const profileRest = await get(`/accounts/${who}?block=${block}`, "/accounts/{address}");
    const profileGql = await graphqlData(
      post,
      `query($a: String!, $n: Block) { profile(address: $a, block: $n) { address boards { board value rank unit } firstActivityBlock lastActivityBlock } }`,
      { a: who, n: String(block) },
    );
    const restBoards = profileRest.body.boards as Record<string, unknown>;
    expect(profileGql.profile).toEqual({
      address: who,
      boards: Object.entries(restBoards).map(([board, v]) => ({ board, ...(v as object) })),
      firstActivityBlock: profileRest.body.firstActivityBlock,
      lastActivityBlock: profileRest.body.lastActivityBlock,
    });
    const bad = await post(`{ leaderboard(board: "richest") { accounts } }`);
    expect(bad.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });

  it("two replicas sharing Redis compute each board and window once per block between them", async () => {
    const inner = createLockIndex({ db: chain.idx.db, schema: chain.ponder.schema });
    const block = chain.devnet.seed.boardPhases.day.toBlock;
    // The rankings of that block, computed whole or derived from a board's anchor (at the finalized block, computed
    // whole): each made once between the two replicas, the anchors too.
    let computed = 0;
    const elsewhere = new Map<string, number>();
    const count = (board: string, window: string, at: { block: bigint } | null) => {
      if (at?.block === block) computed++;
      else
        elsewhere.set(`${board}:${window}:${at?.block}`, (elsewhere.get(`${board}:${window}:${at?.block}`) ?? 0) + 1);
    };
    const reader = {
      ...inner,
      board: (...args: Parameters<typeof inner.board>) => {
        count(args[0], args[1], args[2]);
        return inner.board(...args);
      },
      boardDelta: (...args: Parameters<typeof inner.boardDelta>) => {
        count(args[0], args[1], args[3]);
        return inner.boardDelta(...args);
      },
    };
    const config = {
      ...loadConfig({ NETWORK: "local", MANIFEST_FILE: chain.manifestFile, RPC_URL: chain.devnet.rpcUrl }),
      redisUrl: "redis://127.0.0.1:6379",
      rateLimit: { max: 1e6, windowSec: 60 },
      // 28 past rankings asked for at once: the past lane admits them all (the gate is not what is under test).
      indexCompute: { queue: 64, waitMs: 30_000 },
    };
    const prefix = `test-boards-${randomUUID()}:`;
    const caches: TtlCache[] = [];
    const replica = async () => {
      const shared = await createSharedAnswers(config, { keyPrefix: prefix });
      if (!shared) throw new Error("no Redis cache");
      caches.push(shared);
      return createApp({ config, rpc: null, index: { atBlock: reader, shared }, logger: silentLogger });
    };
    try {
      const [a, b] = [await replica(), await replica()];
      const paths = BOARDS.flatMap((board) =>
        (Object.keys(WINDOWS) as WindowKey[]).map((w) => `${BASE}/leaderboards/${board}?window=${w}&block=${block}`),
      );
      const answers = await Promise.all(
        [...paths, ...paths].map((p, i) => Promise.resolve((i % 2 ? a : b).request(p)).then((r) => r.text())),
      );
      expect(computed).toBe(BOARDS.length * 4);
      expect(
        [...elsewhere.values()].every((n) => n === 1),
        JSON.stringify([...elsewhere]),
      ).toBe(true);
      // Both replicas answer the same, whichever computed.
      for (let i = 0; i < paths.length; i++) expect(answers[i]).toBe(answers[i + paths.length]);
      const at = { block, time: (await chain.devnet.clients.publicClient.getBlock({ blockNumber: block })).timestamp };
      const one = await inner.board("takeover-eth", "30d", at);
      expect(boardCodec.decode(boardCodec.encode(one))).toEqual(one);
    } finally {
      for (const c of caches) await c.close();
    }
  });

  it("window defaults to 7d; an unknown board is 404, a bad window or block 400, in the envelope", async () => {
    const dflt = await get("/leaderboards/takeovers", "/leaderboards/{board}");
    expect(dflt.body.window).toBe("7d");
    const unknown = await chain.app.request(`${BASE}/leaderboards/richest`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ ok: false, error: "NOT_FOUND" });
    const unknownRank = await chain.app.request(
      `${BASE}/leaderboards/richest/0x000000000000000000000000000000000000dEaD`,
    );
    expect(unknownRank.status).toBe(404);
    for (const bad of ["?window=1y", "?window=7D", "?window=", "?block=99999999", "?block=-1", "?limit=0"]) {
      const res = await chain.app.request(`${BASE}/leaderboards/royalties${bad}`);
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, error: "BAD_PARAMS" });
    }
    // ve keeps its own route.
    expect((await chain.app.request(`${BASE}/leaderboards/ve`)).status).toBe(200);
  });

  it("a board's cursor pages that board in that window only: on the ve board, another window or board it is 400", async () => {
    const cursorOf = async (route: string) => {
      const { status, body } = await get(
        route,
        route.startsWith("/leaderboards/ve") ? "/leaderboards/ve" : "/leaderboards/{board}",
      );
      expect(status, route).toBe(200);
      expect(body.nextCursor, route).toBeTypeOf("string");
      return body.nextCursor as string;
    };
    const takeovers = await cursorOf("/leaderboards/takeovers?window=lifetime&limit=1");
    const ve = await cursorOf("/leaderboards/ve?limit=1");
    // Its own list pages on.
    const next = await get(
      `/leaderboards/takeovers?window=lifetime&limit=1&cursor=${takeovers}`,
      "/leaderboards/{board}",
    );
    expect(next.status).toBe(200);
    expect((next.body.rows as Row[])[0]?.rank).toBe(2);
    for (const [route, cursor] of [
      ["/leaderboards/ve?limit=1", takeovers], // the ranked holders, not an empty last page
      ["/leaderboards/takeovers?window=7d&limit=1", takeovers],
      ["/leaderboards/takeovers?limit=1", takeovers], // the default window, 7d
      ["/leaderboards/takeover-eth?window=lifetime&limit=1", takeovers],
      ["/leaderboards/takeovers?window=lifetime&limit=1", ve],
    ] as const) {
      const res = await chain.app.request(`${BASE}${route}&cursor=${cursor}`);
      expect(res.status, route).toBe(400);
      expect(await res.json(), route).toMatchObject({ ok: false, error: "BAD_PARAMS", detail: { param: "cursor" } });
    }
  });
  // Last: it adds a block to the chain the tests above compare at its head.
  it("a reign of 0 seconds (two takeovers in one block) is ranked at 0, as the reference's SQL ranks it", async () => {
    // anvil's account #9 (unlocked, never used by the seed) takes the throne twice in one block: the second takeover
    // finalizes its own reign of 0 seconds, which mined nothing.
    const who = "0xa0ee7a142d267c1f36714e4a8f75612f20a79720";
    const { testClient, publicClient } = chain.devnet.clients;
    const price = (await publicClient.readContract({
      address: chain.devnet.addresses.MineCore,
      abi: DEVNET_ABIS.MineCore,
      functionName: "price",
    })) as bigint;
    const data = encodeFunctionData({ abi: DEVNET_ABIS.MineCore, functionName: "takeover", args: [price * 2n] });
    const tx = { from: who, to: chain.devnet.addresses.MineCore, data, value: price * 2n, gas: 300_000n } as const;
    await testClient.setAutomine(false);
    try {
      await testClient.sendUnsignedTransaction(tx);
      await testClient.sendUnsignedTransaction(tx);
      await testClient.mine({ blocks: 1 });
    } finally {
      await testClient.setAutomine(true);
    }
    const block = await headBlock(chain.devnet);
    const logs = parseEventLogs({
      abi: MineCoreAbi,
      logs: await publicClient.getLogs({
        address: chain.devnet.addresses.MineCore,
        fromBlock: block,
      }),
      eventName: "ReignFinalized",
    });
    // The chain did what the test is about: a finalized reign of 0 seconds and 0 mined, the account's only one.
    expect(logs.filter((l) => l.args.king.toLowerCase() === who)).toMatchObject([{ args: { totalClaimMined: 0n } }]);
    expect(logs.at(-1)?.args.endTime).toBe(logs.at(-1)?.args.startTime);
    await chain.catchUp(60_000);
    const q = `?window=24h&block=${block}`;
    for (const board of ["longest-reign", "king-claim-mined"] as const) {
      const { status, body } = await get(
        `/leaderboards/${board}/${getAddress(who)}${q}`,
        "/leaderboards/{board}/{address}",
      );
      expect(status).toBe(200);
      expect((body.row as Row | null)?.value, board).toBe("0");
    }
    const profile = await get(`/accounts/${getAddress(who)}?block=${block}`, "/accounts/{address}");
    const boards = profile.body.boards as Record<string, { value: string; rank: number | null }>;
    expect(boards["longest-reign"]?.value).toBe("0");
    expect(boards["longest-reign"]?.rank).toBeTypeOf("number");
    // Every board, window, page and rank at that block against the chain's logs (the rule ranks value 0 too).
    await compareAll(block);
  });
});
