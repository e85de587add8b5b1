/**
 * The index API against the chain (issue 23, 2 and 9): a real Ponder index of a seeded devnet (PGlite, or Postgres
 * when DATABASE_URL is set), the app over it, and every route compared with the chain AT THE ANSWER'S BLOCK —
 * veBalanceOf, getLockInfo, ownerOf, totalLockedClaim and the logs, read with eth_call / eth_getLogs pinned to that
 * block. After the seed (merges, unlocks, a sell-back, listings, AutoMax switches), at past blocks (time travel),
 * after random activity, with a fresh lock in the last block, across a reorg; cursors hold their block while new
 * blocks arrive; the MCP tools answer what the routes answer; every answer matches its documented schema.
 */
import { PGlite } from "@electric-sql/pglite";
import fc from "fast-check";
import { type Address, getAddress, parseEventLogs, zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VeLockNFTAbi } from "../../abis";
import type { ApiApp } from "../../api/app";
import { buildOpenApiDocument } from "../../api/openapi/document";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS } from "../../devnet/seed";
import { send, type TestDevnet } from "../support/devnet";
import { type IndexChain, startIndexChain } from "../support/indexChain";
import { ACTORS, applyLockOps, headBlock, lockOpArb, readChainLocks } from "../support/lockChain";
import { openApiValidator } from "../support/openApiValidator";
import type { IndexDb } from "../support/ponder";
import { createSyntheticTables } from "../support/syntheticIndex";

const E18 = 10n ** 18n;
const BASE = "/api/index/v1";
const backend = process.env.DATABASE_URL ? "postgres" : "pglite";

type Json = Record<string, unknown> & { ok: boolean; blockNumber: string; blockTimestamp: string };
type LockJson = {
  tokenId: string;
  owner: string | null;
  amountWei: string;
  lockEnd: string;
  autoMax: boolean;
  listed: boolean;
  burned: boolean;
  veWei: string;
  createdBlock: string;
};
type RowJson = { rank: number; address: string; veWei: string; lockedWei: string; locks: number };
type EventJson = {
  kind: string;
  txHash: string;
  logIndex: number;
  tokenId: string;
  blockNumber: string;
  lockEnd: string;
  autoMax: boolean;
  lockAmountWei: string;
  listed: boolean;
};
type ActivityJson = { kind: string; fields: Record<string, unknown>; blockNumber: string; logIndex: number };

describe(`index API against the chain (${backend})`, () => {
  let chain: IndexChain;
  let devnet: TestDevnet;
  let idx: IndexDb;
  let app: ApiApp;
  let validate: ReturnType<typeof openApiValidator>;

  beforeAll(async () => {
    chain = await startIndexChain();
    ({ devnet, idx, app } = chain);
    validate = openApiValidator(await buildOpenApiDocument());
  }, 180_000);

  afterAll(() => chain?.stop());

  /** GET a route; a 200 must match its documented schema. */
  async function get(route: string, documented: string): Promise<{ status: number; body: Json }> {
    const res = await app.request(`${BASE}${route}`);
    const body = (await res.json()) as Json;
    if (res.status === 200) {
      expect(validate.check(validate.media(`${BASE}${documented}`, 200).schema, body), route).toBeNull();
    }
    return { status: res.status, body };
  }

  /** Every page of a list at one block (small pages, so the cursors are exercised). */
  async function all<T>(
    route: string,
    documented: string,
    key: "rows" | "events",
    limit = 2,
  ): Promise<{ rows: T[]; block: string }> {
    const sep = route.includes("?") ? "&" : "?";
    const rows: T[] = [];
    let block = "";
    let cursor: string | null = null;
    for (let i = 0; i < 500; i++) {
      const { status, body } = await get(
        `${route}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
        documented,
      );
      expect(status, JSON.stringify(body)).toBe(200);
      if (block) expect(body.blockNumber, "every page at the first page's block").toBe(block);
      block = body.blockNumber;
      rows.push(...(body[key] as T[]));
      cursor = body.nextCursor as string | null;
      if (cursor === null) break;
    }
    return { rows, block };
  }

  const ve = { address: () => devnet.addresses.VeLockNFT, abi: DEVNET_ABIS.VeLockNFT };
  const veBalanceOf = (who: Address, blockNumber: bigint) =>
    devnet.clients.publicClient.readContract({
      address: ve.address(),
      abi: ve.abi,
      functionName: "veBalanceOf",
      args: [who],
      blockNumber,
    });
  const veOfToken = (tokenId: bigint, blockNumber: bigint) =>
    devnet.clients.publicClient.readContract({
      address: ve.address(),
      abi: ve.abi,
      functionName: "veOfToken",
      args: [tokenId],
      blockNumber,
    });

  /** getLockInfo of a lock at a block (amount, end, autoMax, listed), read once per (lock, block). */
  const infos = new Map<string, Promise<readonly [bigint, bigint, boolean, boolean]>>();
  const lockInfoAt = (tokenId: bigint, blockNumber: bigint) => {
    const key = `${tokenId}@${blockNumber}`;
    let info = infos.get(key);
    if (!info) {
      info = devnet.clients.publicClient.readContract({
        address: ve.address(),
        abi: VeLockNFTAbi,
        functionName: "getLockInfo",
        args: [tokenId],
        blockNumber,
      });
      infos.set(key, info);
    }
    return info;
  };

  /**
   * Each event's lock state (lockEnd, autoMax, lockAmountWei, listed) is what getLockInfo reports for its lock at the
   * event's block — for an AutoMax lock an end of that block's time + 365 days, also after a listing or a transfer,
   * which leave the stored end as it was (protocol.md §8). The devnet mines one transaction per block, so the state
   * at the block is the state right after the block's last event of a lock: only that one is compared.
   */
  async function expectEventStatesMatchChain(events: EventJson[], what: string) {
    const seen = new Set<string>();
    for (const e of events) {
      const key = `${e.tokenId}@${e.blockNumber}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const [amount, lockEnd, autoMax, listed] = await lockInfoAt(BigInt(e.tokenId), BigInt(e.blockNumber));
      expect(
        { lockEnd: e.lockEnd, autoMax: e.autoMax, lockAmountWei: e.lockAmountWei, listed: e.listed },
        `${what}: ${e.kind} of ${e.tokenId} at ${e.blockNumber}`,
      ).toEqual({ lockEnd: String(lockEnd), autoMax, lockAmountWei: String(amount), listed });
    }
  }

  /**
   * The lifecycle logs up to `block` as the index must list them: token ids and accounts each concerns, kind,
   * newest first (the chain's logs, not the index's rows).
   */
  async function chainHistory(block: bigint) {
    const client = devnet.clients.publicClient;
    const logs = await client.getLogs({ address: ve.address(), fromBlock: 0n, toBlock: block });
    const info = (tokenId: bigint, blockNumber: bigint) =>
      client.readContract({
        address: ve.address(),
        abi: VeLockNFTAbi,
        functionName: "getLockInfo",
        args: [tokenId],
        blockNumber,
      });
    const out: { id: string; kind: string; tokens: bigint[]; accounts: string[]; block: bigint; logIndex: number }[] =
      [];
    for (const l of parseEventLogs({ abi: VeLockNFTAbi, logs })) {
      const base = { id: `${l.transactionHash}-${l.logIndex}`, block: l.blockNumber, logIndex: l.logIndex };
      const a = l.args as Record<string, unknown>;
      const user = () => [getAddress(a.user as string)];
      switch (l.eventName) {
        case "LockCreated":
          out.push({ ...base, kind: "create", tokens: [a.tokenId as bigint], accounts: user() });
          break;
        case "LockAmountIncreased":
          out.push({ ...base, kind: "topup", tokens: [a.tokenId as bigint], accounts: user() });
          break;
        case "LockExtended":
          out.push({ ...base, kind: "extend", tokens: [a.tokenId as bigint], accounts: user() });
          break;
        case "LockUnlocked":
          out.push({ ...base, kind: "unlock", tokens: [a.tokenId as bigint], accounts: user() });
          break;
        case "AutoMaxSet":
          out.push({ ...base, kind: "automax", tokens: [a.tokenId as bigint], accounts: user() });
          break;
        case "LockMerged":
          out.push({
            ...base,
            kind: "merge",
            tokens: [a.fromTokenId as bigint, a.intoTokenId as bigint],
            accounts: user(),
          });
          break;
        case "Transfer":
          if (a.from === zeroAddress || a.to === zeroAddress) break;
          out.push({
            ...base,
            kind: "transfer",
            tokens: [a.tokenId as bigint],
            accounts: [getAddress(a.from as string), getAddress(a.to as string)],
          });
          break;
        case "MetadataUpdate": {
          const id = a._tokenId as bigint;
          const [now, before] = [(await info(id, l.blockNumber))[3], (await info(id, l.blockNumber - 1n))[3]];
          if (now === before) break;
          const owner = await client.readContract({
            address: ve.address(),
            abi: VeLockNFTAbi,
            functionName: "ownerOf",
            args: [id],
            blockNumber: l.blockNumber,
          });
          out.push({ ...base, kind: now ? "list" : "unlist", tokens: [id], accounts: [getAddress(owner)] });
          break;
        }
      }
    }
    return out.sort((x, y) => (x.block === y.block ? y.logIndex - x.logIndex : x.block > y.block ? -1 : 1));
  }

  /**
   * Every route at one block (the head when `at` is undefined) equals the chain at the block the answers name.
   * Returns that block.
   */
  async function expectRoutesMatchChain(at?: bigint): Promise<bigint> {
    const q = at === undefined ? "" : `?block=${at}`;
    const { status, body: stats } = await get(`/stats${q}`, "/stats");
    expect(status, JSON.stringify(stats)).toBe(200);
    const B = BigInt(stats.blockNumber);
    if (at !== undefined) expect(B).toBe(at);
    const pin = `?block=${B}`;
    const chain = await readChainLocks(devnet, B);
    expect(stats.blockTimestamp, "the block's own timestamp").toBe(String(chain.timestamp));

    const live = chain.locks.filter((l) => l.owner !== null);
    const owners = [...new Set(live.map((l) => l.owner as Address))];
    const balances = new Map(await Promise.all(owners.map(async (o) => [o, await veBalanceOf(o, B)] as const)));
    const sum = (xs: bigint[]) => xs.reduce((x, y) => x + y, 0n);
    expect(stats).toMatchObject({
      totalLockedWei: String(chain.totalLocked),
      totalVeWei: String(sum([...balances.values()])),
      holders: owners.length,
      veHolders: [...balances.values()].filter((v) => v > 0n).length,
      liveLocks: live.length,
      autoMaxLocks: live.filter((l) => l.autoMax).length,
    });
    const schedule = stats.unlockSchedule as { amountWei: string }[];
    expect(
      sum([
        ...schedule.map((w) => BigInt(w.amountWei)),
        BigInt(stats.expiredLockedWei as string),
        BigInt(stats.autoMaxLockedWei as string),
      ]),
    ).toBe(chain.totalLocked);

    // The board: every holder with veBalanceOf > 0, by ve then address; its locked sums plus the holders whose
    // locks all expired make totalLockedClaim.
    const board = await all<RowJson>(`/leaderboards/ve${pin}`, "/leaderboards/ve", "rows");
    expect(board.block).toBe(String(B));
    const lockedOf = (o: Address) => sum(live.filter((l) => l.owner === o).map((l) => l.amount));
    const expected = owners
      .filter((o) => balances.get(o)! > 0n)
      .sort((x, y) => {
        const [a, b] = [balances.get(x)!, balances.get(y)!];
        return a === b ? (x.toLowerCase() < y.toLowerCase() ? -1 : 1) : a > b ? -1 : 1;
      })
      .map((o, i) => ({
        rank: i + 1,
        address: o,
        veWei: String(balances.get(o)),
        lockedWei: String(lockedOf(o)),
        locks: live.filter((l) => l.owner === o).length,
      }));
    expect(board.rows, `board at ${B}`).toEqual(expected);
    const unranked = owners.filter((o) => balances.get(o) === 0n);
    expect(sum(board.rows.map((r) => BigInt(r.lockedWei))) + sum(unranked.map(lockedOf))).toBe(chain.totalLocked);
    for (const o of [...owners, DEVNET_ACCOUNTS.idle.address]) {
      const { body } = await get(`/leaderboards/ve/${o}${pin}`, "/leaderboards/ve/{address}");
      const i = expected.findIndex((r) => r.address === o);
      expect(body.row, `rank of ${o}`).toEqual(i < 0 ? null : expected[i]);
      expect(body.above).toEqual(i <= 0 ? null : expected[i - 1]);
    }

    // Every token ever minted: getLockInfo, ownerOf and its ve at B; one beyond is 404.
    for (const l of chain.locks) {
      const { status: s, body } = await get(`/locks/${l.tokenId}${pin}`, "/locks/{tokenId}");
      expect(s).toBe(200);
      const lock = body.lock as LockJson;
      expect(lock, `lock ${l.tokenId} at ${B}`).toMatchObject({
        tokenId: String(l.tokenId),
        owner: l.owner,
        amountWei: String(l.amount),
        lockEnd: String(chain.effectiveEnds.get(l.tokenId)),
        autoMax: l.autoMax,
        listed: chain.listed.has(l.tokenId),
        burned: l.owner === null,
        veWei: String(await veOfToken(l.tokenId, B)),
      });
    }
    expect((await get(`/locks/${chain.nextTokenId}${pin}`, "/locks/{tokenId}")).status).toBe(404);

    // Each account's live locks, as the chain's lock list of that owner.
    for (const o of [...owners, DEVNET_ACCOUNTS.idle.address]) {
      const { body } = await get(`/accounts/${o}/locks${pin}`, "/accounts/{address}/locks");
      const mine = (body.locks as LockJson[]).map((x) => [x.tokenId, x.amountWei, x.lockEnd, x.autoMax, x.veWei]);
      const truth = await Promise.all(
        live
          .filter((l) => l.owner === o)
          .map(async (l) => [
            String(l.tokenId),
            String(l.amount),
            String(chain.effectiveEnds.get(l.tokenId)),
            l.autoMax,
            String(await veOfToken(l.tokenId, B)),
          ]),
      );
      expect(mine, `locks of ${o} at ${B}`).toEqual(truth);
      expect(sum((body.locks as LockJson[]).map((x) => BigInt(x.veWei)))).toBe(balances.get(o as Address) ?? 0n);
    }

    // Histories: the chain's lifecycle logs up to B, newest first, per token and per account.
    const history = await chainHistory(B);
    const ids = (es: EventJson[]) => es.map((e) => `${e.txHash}-${e.logIndex}:${e.kind}`);
    for (const l of chain.locks) {
      const { rows } = await all<EventJson>(`/locks/${l.tokenId}/events${pin}`, "/locks/{tokenId}/events", "events", 3);
      const truth = history.filter((h) => h.tokens.includes(l.tokenId));
      expect(ids(rows), `history of ${l.tokenId} at ${B}`).toEqual(truth.map((h) => `${h.id}:${h.kind}`));
      expect(rows.at(-1)?.kind, "a lock's oldest event is its creation").toBe("create");
      await expectEventStatesMatchChain(rows, `history of ${l.tokenId} at ${B}`);
    }
    for (const who of [
      ...ACTORS.map((a) => DEVNET_ACCOUNTS[a].address),
      devnet.addresses.Furnace,
      DEVNET_ACCOUNTS.idle.address,
    ]) {
      const { rows } = await all<EventJson>(`/accounts/${who}/events${pin}`, "/accounts/{address}/events", "events", 4);
      const truth = history.filter((h) => h.accounts.includes(getAddress(who)));
      expect(ids(rows), `history of ${who} at ${B}`).toEqual(truth.map((h) => `${h.id}:${h.kind}`));
    }
    return B;
  }

  it("after the seed (merges, unlocks, a sell-back, listings, AutoMax switches): every route equals the chain", async () => {
    const kinds = new Set((await chainHistory(await headBlock(devnet))).map((h) => h.kind));
    for (const k of ["create", "topup", "extend", "merge", "unlock", "automax", "transfer", "list", "unlist"]) {
      expect(kinds, k).toContain(k);
    }
    await expectRoutesMatchChain();
  });

  it("time travel: at past blocks every route equals the chain at that block", async () => {
    const head = await headBlock(devnet);
    const start = BigInt(devnet.deployment.manifest.contracts.VeLockNFT?.startBlock ?? 0);
    const history = await chainHistory(head);
    // The block of every third lifecycle event (some right after a merge, a listing, an unlock …), a block without
    // events, and the start block.
    const blocks = new Set<bigint>([start, ...history.filter((_, i) => i % 3 === 0).map((h) => h.block)]);
    const withEvents = new Set(history.map((h) => h.block));
    for (let b = head - 1n; b > start; b--) {
      if (!withEvents.has(b)) {
        blocks.add(b);
        break;
      }
    }
    for (const b of [...blocks].sort((x, y) => (x < y ? -1 : 1))) await expectRoutesMatchChain(b);
  });

  it("stays equal to the chain under random lock activity (property)", async () => {
    const applied: number[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(lockOpArb, { minLength: 6, maxLength: 12 }), async (ops) => {
        applied.push(await applyLockOps(devnet, ops));
        await chain.catchUp();
        await expectRoutesMatchChain();
      }),
      { numRuns: 3, endOnFailure: true },
    );
    expect(applied.reduce((a, b) => a + b, 0)).toBeGreaterThan(8);
  });

  it("an AutoMax lock's events that leave its end alone (list, unlist, transfer) carry getLockInfo's end at their block", async () => {
    const carol = DEVNET_ACCOUNTS.carol;
    const { market, deployer } = DEVNET_ACCOUNTS;
    const { testClient } = devnet.clients;
    const later = async (days: number) => {
      await testClient.increaseTime({ seconds: days * 86_400 });
      await testClient.mine({ blocks: 1 });
    };
    const receipt = await send(devnet, carol.privateKey, {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [3_000n * E18, 0n, 365n * 86_400n, true, 1n],
    });
    const [created] = parseEventLogs({ abi: VeLockNFTAbi, eventName: "LockCreated", logs: receipt.logs });
    const id = created!.args.tokenId;
    const storedEnd = created!.args.lockEnd;
    const veTx = (who: typeof market, functionName: string, args: readonly unknown[]) =>
      send(devnet, who.privateKey, { address: ve.address(), abi: ve.abi, functionName, args });
    // Days between the events: each block's time + 365 days is past the end stored at the creation.
    await later(9);
    await veTx(market, "setListed", [id, true]);
    await later(5);
    await veTx(market, "setListed", [id, false]);
    await later(3);
    await veTx(market, "setListed", [id, true]);
    await later(2);
    // As the published market sells: delist, then the transfer (a listed lock does not move).
    await veTx(market, "setListed", [id, false]);
    await veTx(market, "transferFrom", [carol.address, devnet.addresses.Furnace, id]);
    await later(4);
    await send(devnet, deployer.privateKey, {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "settleSellBack",
      args: [id],
    });
    await chain.catchUp();

    const { body } = await get(`/locks/${id}/events?limit=100`, "/locks/{tokenId}/events");
    const events = body.events as EventJson[];
    expect(events.map((e) => e.kind)).toEqual(["unlock", "transfer", "unlist", "list", "unlist", "list", "create"]);
    await expectEventStatesMatchChain(events, `history of ${id}`);
    for (const e of events.filter((x) => ["list", "unlist", "transfer"].includes(x.kind))) {
      expect(e.autoMax).toBe(true);
      expect(BigInt(e.lockEnd), `${e.kind}: not the end stored at the creation`).toBeGreaterThan(storedEnd);
    }
    expect(events[0]).toMatchObject({ kind: "unlock", lockEnd: "0", autoMax: false });

    // The activity feed's fields and GraphQL's lockEvents: the same ends.
    const endOf = new Map(events.map((e) => [`${e.blockNumber}-${e.logIndex}`, e.lockEnd]));
    const lockKinds = "create,topup,extend,merge,unlock,automax,transfer,list,unlist";
    const feed = await get(`/activity?account=${carol.address}&kind=${lockKinds}&limit=100`, "/activity");
    const items = (feed.body.events as ActivityJson[]).filter((a) => a.fields.tokenId === String(id));
    expect(items.map((a) => a.kind)).toEqual(["transfer", "unlist", "list", "unlist", "list", "create"]);
    for (const a of items) {
      const [, lockEnd] = await lockInfoAt(id, BigInt(a.blockNumber));
      expect(a.fields.lockEnd, `activity ${a.kind} at ${a.blockNumber}`).toBe(String(lockEnd));
      expect(a.fields.lockEnd).toBe(endOf.get(`${a.blockNumber}-${a.logIndex}`));
    }
    const gql = await app.request("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: `{ lockEvents(where: { tokenId: "${id}" }, limit: 100) { items { kind lockEnd blockNumber logIndex } } }`,
      }),
    });
    const { data } = (await gql.json()) as {
      data: { lockEvents: { items: { kind: string; lockEnd: string; blockNumber: string; logIndex: number }[] } };
    };
    expect(
      data.lockEvents.items.map((e) => [e.kind, e.lockEnd]),
      "GraphQL lockEvents",
    ).toEqual(events.map((e) => [e.kind, e.lockEnd]));
  });

  it("a fresh lock in the last block is in the head's answers", async () => {
    const fresh = DEVNET_ACCOUNTS.fresh;
    await send(devnet, fresh.privateKey, {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [4_321n * E18, 0n, 30n * 86_400n, false, 1n],
    });
    const head = await headBlock(devnet);
    await chain.ponder.waitForBlock(head);
    const B = await expectRoutesMatchChain();
    expect(B).toBe(head);
    const { body } = await get(`/accounts/${fresh.address}/events?limit=1`, "/accounts/{address}/events");
    expect((body.events as EventJson[])[0]).toMatchObject({ kind: "create", blockNumber: String(head) });
  });

  it("cursors hold their block while new blocks arrive: no row twice, none missed", async () => {
    const alice = DEVNET_ACCOUNTS.alice;
    const firstBoard = await get("/leaderboards/ve?limit=1", "/leaderboards/ve");
    const firstEvents = await get(`/accounts/${alice.address}/events?limit=2`, "/accounts/{address}/events");
    const B = firstBoard.body.blockNumber;
    expect(firstEvents.body.blockNumber).toBe(B);
    // New blocks: a new lock for alice, a top-up, and time passing (every ve changes).
    await send(devnet, alice.privateKey, {
      address: devnet.addresses.Furnace,
      abi: DEVNET_ABIS.Furnace,
      functionName: "enterWithClaim",
      args: [2_000n * E18, 0n, 60n * 86_400n, false, 1n],
    });
    await devnet.clients.testClient.increaseTime({ seconds: 3 * 86_400 });
    await devnet.clients.testClient.mine({ blocks: 3 });
    await chain.catchUp();
    expect(BigInt((await get("/stats", "/stats")).body.blockNumber)).toBeGreaterThan(BigInt(B));

    for (const [first, route, documented, key] of [
      [firstBoard, "/leaderboards/ve?limit=1", "/leaderboards/ve", "rows"],
      [firstEvents, `/accounts/${alice.address}/events?limit=2`, "/accounts/{address}/events", "events"],
    ] as const) {
      const rows = [...(first.body[key] as unknown[])];
      let cursor = first.body.nextCursor as string | null;
      while (cursor !== null) {
        const { body } = await get(`${route}&cursor=${cursor}`, documented);
        expect(body.blockNumber).toBe(B);
        rows.push(...(body[key] as unknown[]));
        cursor = body.nextCursor as string | null;
      }
      const whole = await get(`${route.replace(/limit=\d+/, "limit=1000")}&block=${B}`, documented);
      expect(rows, route).toEqual(whole.body[key]);
    }
  });

  it("MCP tools (history, rank, stats, …) answer exactly what the routes answer", async () => {
    const who = DEVNET_ACCOUNTS.alice.address;
    const call = async (name: string, args: Record<string, unknown>) => {
      const res = await app.request("/api/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
      expect(res.status).toBe(200);
      const out = (await res.json()) as { result: { structuredContent?: unknown; isError?: boolean } };
      expect(out.result.isError).toBe(false);
      return out.result.structuredContent as Json;
    };
    const B = (await get("/stats", "/stats")).body.blockNumber;
    const cases: [string, Record<string, unknown>, string][] = [
      ["get_lock_stats", { block: B }, `/stats?block=${B}`],
      ["get_ve_rank", { address: who, block: B }, `/leaderboards/ve/${who}?block=${B}`],
      ["get_ve_leaderboard", { block: B, limit: 3 }, `/leaderboards/ve?block=${B}&limit=3`],
      ["get_account_history", { address: who, block: B, limit: 5 }, `/accounts/${who}/events?block=${B}&limit=5`],
      ["get_account_locks", { address: who, block: B }, `/accounts/${who}/locks?block=${B}`],
      ["get_lock", { tokenId: "1", block: B }, `/locks/1?block=${B}`],
      ["get_lock_history", { tokenId: "1", block: B }, `/locks/1/events?block=${B}`],
    ];
    for (const [name, args, route] of cases) {
      const rest = await app.request(`${BASE}${route}`);
      expect(await call(name, args), name).toEqual(await rest.json());
    }
  });

  it("follows a reorg: answers come from the canonical chain", async () => {
    const { testClient } = devnet.clients;
    const [alice, carol] = [DEVNET_ACCOUNTS.alice, DEVNET_ACCOUNTS.carol];
    const create = (who: typeof alice, amount: bigint) =>
      send(devnet, who.privateKey, {
        address: devnet.addresses.Furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "enterWithClaim",
        args: [amount * E18, 0n, 7n * 86_400n, false, 1n],
      });
    const forkPoint = await headBlock(devnet);
    const snapshot = await testClient.snapshot();
    await create(alice, 1_111n);
    await create(alice, 2_222n);
    await chain.catchUp();
    const onOldBranch = (await get("/stats", "/stats")).body;
    expect(BigInt(onOldBranch.blockNumber)).toBe(forkPoint + 2n);

    await testClient.revert({ id: snapshot });
    await create(carol, 3_333n);
    await testClient.mine({ blocks: 4 });
    const newHead = await headBlock(devnet);
    await chain.ponder.waitForBlock(newHead);
    const B = await expectRoutesMatchChain();
    expect(B).toBeGreaterThanOrEqual(newHead);
    // A block replaced by the fork answers as the new chain has it.
    await expectRoutesMatchChain(forkPoint + 1n);
  });

  it("the synthetic index of the benchmarks and unit tests has the live index's tables and columns", async () => {
    const columns = `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
      WHERE table_schema = $1 AND table_name IN ('lock', 'lock_event', '_ponder_checkpoint')
      ORDER BY table_name, column_name`;
    const live = await idx.query(columns, [chain.ponder.schema]);
    const client = new PGlite();
    await createSyntheticTables((text) => client.query(text), "synthetic");
    const synthetic = (await client.query(columns, ["synthetic"])).rows;
    expect(synthetic).toEqual(live);
    expect(live.length).toBeGreaterThan(20);
  });
});
