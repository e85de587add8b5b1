/**
 * The activity feed and its permalinks (issue 31, item 3) against the chain: a real Ponder index of the seeded devnet,
 * the app over it, and the feed compared with eth_getLogs — the protocol's four board events exactly as emitted,
 * the lock lifecycle events by kind — newest first, at the head and at a past block, filtered by kind and account.
 */
import { type Address, getAddress, parseEventLogs } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FurnaceAbi, MineCoreAbi, ShareholderRoyaltiesAbi, VeLockNFTAbi } from "../../abis";
import { buildOpenApiDocument } from "../../api/openapi/document";
import { BOARD_PLAYERS } from "../../devnet/seed";
import { type IndexChain, startIndexChain } from "../support/indexChain";
import { openApiValidator } from "../support/openApiValidator";

const BASE = "/api/index/v1";
type Item = {
  id: string;
  kind: string;
  accounts: string[];
  fields: Record<string, unknown>;
  blockNumber: string;
  txHash: string;
  logIndex: number;
};
type Json = Record<string, unknown> & { blockNumber: string };

/** The feed's kind of each event this test derives from the logs (lock kinds whose log is their own event). */
const KIND: Record<string, string> = {
  Takeover: "takeover",
  ReignFinalized: "reign-finalized",
  FurnaceEnter: "furnace-enter",
  ShareholderClaim: "royalty-claim",
  LockCreated: "create",
  LockAmountIncreased: "topup",
  LockExtended: "extend",
  LockMerged: "merge",
  LockUnlocked: "unlock",
  AutoMaxSet: "automax",
};

describe("activity feed against the chain", () => {
  let chain: IndexChain;
  let validate: ReturnType<typeof openApiValidator>;

  beforeAll(async () => {
    chain = await startIndexChain();
    validate = openApiValidator(await buildOpenApiDocument());
  }, 240_000);
  afterAll(() => chain?.stop());

  async function get(route: string, documented: string) {
    const res = await chain.app.request(`${BASE}${route}`);
    const body = (await res.json()) as Json;
    if (res.status === 200) {
      expect(validate.check(validate.media(`${BASE}${documented}`, 200).schema, body), route).toBeNull();
    }
    return { status: res.status, body };
  }

  async function feed(query: Record<string, string>) {
    const items: Item[] = [];
    let cursor: string | null = null;
    let block: string | null = null;
    for (let i = 0; i < 500; i++) {
      const q = new URLSearchParams({ ...query, limit: "7" });
      if (cursor !== null) {
        q.delete("block");
        q.set("cursor", cursor);
      }
      const { status, body } = await get(`/activity?${q}`, "/activity");
      expect(status, JSON.stringify(body)).toBe(200);
      block ??= body.blockNumber;
      expect(body.blockNumber).toBe(block);
      items.push(...(body.events as Item[]));
      cursor = body.nextCursor as string | null;
      if (cursor === null) return { items, block: BigInt(block) };
    }
    throw new Error("too many pages");
  }

  /** The chain's events of the four board sources and VeLockNFT's own-kind events up to `toBlock`, newest first. */
  async function chainEvents(toBlock: bigint) {
    const at = chain.devnet.addresses;
    const logs = await chain.devnet.clients.publicClient.getLogs({
      address: [at.MineCore, at.Furnace, at.ShareholderRoyalties, at.VeLockNFT],
      fromBlock: 0n,
      toBlock,
    });
    const decoded = parseEventLogs({
      abi: [...MineCoreAbi, ...FurnaceAbi, ...ShareholderRoyaltiesAbi, ...VeLockNFTAbi],
      logs,
    });
    return decoded
      .filter((l) => KIND[l.eventName] !== undefined)
      .map((l) => ({
        id: `${l.transactionHash}-${l.logIndex}`,
        kind: KIND[l.eventName] as string,
        args: l.args as Record<string, unknown>,
        block: l.blockNumber,
        logIndex: l.logIndex,
      }))
      .sort((a, b) => (a.block === b.block ? b.logIndex - a.logIndex : a.block > b.block ? -1 : 1));
  }

  const shown = (v: unknown) =>
    typeof v === "bigint" ? v.toString() : typeof v === "string" && /^0x[0-9a-fA-F]{40}$/.test(v) ? getAddress(v) : v;

  it("newest first, one block per feed; the board events equal the chain's logs, field by field", async () => {
    const { items, block } = await feed({});
    const keys = items.map((i) => [BigInt(i.blockNumber), i.logIndex] as const);
    for (let i = 1; i < keys.length; i++) {
      const [b0, l0] = keys[i - 1]!;
      const [b1, l1] = keys[i]!;
      expect(b0 > b1 || (b0 === b1 && l0 > l1), `order at ${i}`).toBe(true);
    }
    const truth = await chainEvents(block);
    const boardKinds = new Set(["takeover", "reign-finalized", "furnace-enter", "royalty-claim"]);
    const boards = truth.filter((t) => boardKinds.has(t.kind));
    expect(
      items.filter((i) => boardKinds.has(i.kind)).map((i) => ({ id: i.id, kind: i.kind, fields: i.fields })),
    ).toEqual(
      boards.map((t) => ({
        id: t.id,
        kind: t.kind,
        fields: Object.fromEntries(Object.entries(t.args).map(([k, v]) => [k, shown(v)])),
      })),
    );
    expect(boards.length).toBeGreaterThan(30);
  });

  it("kind filters (one or several) and the lock kinds equal the chain's events of those kinds", async () => {
    const { items, block } = await feed({ kind: "create,topup,extend,merge,unlock,automax" });
    const truth = (await chainEvents(block)).filter(
      (t) => !["takeover", "reign-finalized", "furnace-enter", "royalty-claim"].includes(t.kind),
    );
    expect(items.map((i) => [i.id, i.kind])).toEqual(truth.map((t) => [t.id, t.kind]));
    const takeovers = await feed({ kind: "takeover" });
    expect(takeovers.items.length).toBe(8);
    expect(new Set(takeovers.items.map((i) => i.kind))).toEqual(new Set(["takeover"]));
  });

  it("account keeps what concerns the account: user, king, newKing or previousKing", async () => {
    const erin = BOARD_PLAYERS.erin.address;
    const { items, block } = await feed({ account: erin });
    const concerns = (args: Record<string, unknown>) =>
      ["user", "king", "newKing", "previousKing"].some(
        (k) => typeof args[k] === "string" && (args[k] as Address).toLowerCase() === erin.toLowerCase(),
      );
    const truth = (await chainEvents(block)).filter((t) => concerns(t.args));
    expect(items.map((i) => i.id)).toEqual(truth.map((t) => t.id));
    for (const i of items) expect(i.accounts).toContain(erin);
  });

  it("at a past block the feed is the head's feed cut at that block", async () => {
    const head = await feed({});
    const past = chain.devnet.seed.boardPhases.week.toBlock;
    const then = await feed({ block: String(past) });
    expect(then.block).toBe(past);
    expect(then.items).toEqual(head.items.filter((i) => BigInt(i.blockNumber) <= past));
  });

  it("permalinks: each item by its id; unknown 404, malformed 400; a bad kind 400", async () => {
    const { items } = await feed({ kind: "takeover,furnace-enter,create" });
    for (const item of items.slice(0, 12)) {
      const { status, body } = await get(`/activity/${item.id}`, "/activity/{id}");
      expect(status).toBe(200);
      expect(body.event).toEqual(item);
    }
    const unknown = await chain.app.request(`${BASE}/activity/0x${"ab".repeat(32)}-0`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ ok: false, error: "NOT_FOUND" });
    for (const bad of [
      "/activity/0x12-0",
      "/activity/nothing",
      "/activity?kind=mint",
      "/activity?kind=",
      "/activity?account=0x1",
    ]) {
      const res = await chain.app.request(`${BASE}${bad}`);
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, error: "BAD_PARAMS" });
    }
    const media = validate.media(`${BASE}/activity/{id}`, 200);
    expect(validate.check(media.schema, media.example)).toBeNull();
    const list = validate.media(`${BASE}/activity`, 200);
    expect(validate.check(list.schema, list.example)).toBeNull();
  });
});
