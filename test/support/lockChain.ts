/**
 * The chain side of the indexer tests: what VeLockNFT says about every token (the truth the index must equal),
 * and a generator of random lock activity sent to the devnet.
 */
import fc from "fast-check";
import { type Address, encodeFunctionData, getAddress, type Hex, parseEventLogs, zeroAddress } from "viem";
import { expect } from "vitest";
import { VeLockNFTAbi } from "../../abis";
import { createLockStore } from "../../api/read/store";
import { DEVNET_ABIS } from "../../devnet/deploy";
import { DEVNET_ACCOUNTS, type DevnetAccount } from "../../devnet/seed";
import type { LockRow } from "../../indexer/rules";
import { send, type TestDevnet } from "./devnet";
import type { IndexDb } from "./ponder";

const E18 = 10n ** 18n;
const DAY = 86_400n;
const MAX_DURATION = 365n * DAY;

export type ChainLock = { tokenId: bigint; owner: Address | null; amount: bigint; lockEnd: bigint; autoMax: boolean };

/**
 * Every token id ever minted (1 … nextTokenId − 1) at one block: ownerOf, getLockInfo's amount and flags, and the
 * stored end (what the events imply, so what the index holds). On the published contract getLockInfo reports an
 * AutoMax lock's end as the block's time + 365 days (protocol.md §8); that is checked here too, and the API's
 * answers are compared with getLockInfo by the state tests.
 */
export async function readChainLocks(devnet: TestDevnet, at?: bigint) {
  const client = devnet.clients.publicClient;
  const address = devnet.addresses.VeLockNFT;
  const abi = DEVNET_ABIS.VeLockNFT;
  const block =
    at === undefined ? await client.getBlock({ blockTag: "latest" }) : await client.getBlock({ blockNumber: at });
  const blockNumber = block.number;
  const [next, totalLocked] = await Promise.all([
    client.readContract({ address, abi, functionName: "nextTokenId", blockNumber }),
    client.readContract({ address, abi, functionName: "totalLockedClaim", blockNumber }),
  ]);
  const ids = Array.from({ length: Number(next) - 1 }, (_, i) => BigInt(i + 1));
  const listed = new Set<bigint>();
  const effectiveEnds = new Map<bigint, bigint>();
  const locks = await Promise.all(
    ids.map(async (tokenId): Promise<ChainLock> => {
      const [[amount, effectiveEnd, autoMax, isListed], lockEnd, owner] = await Promise.all([
        client.readContract({ address, abi, functionName: "getLockInfo", args: [tokenId], blockNumber }),
        client.readContract({ address, abi, functionName: "storedLockEnd", args: [tokenId], blockNumber }),
        // A burned token: ownerOf reverts (ERC721NonexistentToken).
        client.readContract({ address, abi, functionName: "ownerOf", args: [tokenId], blockNumber }).catch(() => null),
      ]);
      expect(effectiveEnd, `getLockInfo end of ${tokenId}`).toBe(
        autoMax && amount > 0n ? block.timestamp + MAX_DURATION : lockEnd,
      );
      if (isListed) listed.add(tokenId);
      effectiveEnds.set(tokenId, effectiveEnd);
      return { tokenId, owner: owner === null ? null : getAddress(owner), amount, lockEnd, autoMax };
    }),
  );
  return { locks, totalLocked, nextTokenId: next, listed, effectiveEnds, timestamp: block.timestamp };
}

/**
 * Every VeLockNFT log the index must have a lock_event row for: all but the mint/burn Transfers, and of the
 * MetadataUpdates only those that changed getLockInfo's listed flag (the devnet mines one transaction per block,
 * so the flag before is the flag at the previous block).
 */
export async function lifecycleEventIds(devnet: TestDevnet): Promise<string[]> {
  const client = devnet.clients.publicClient;
  const logs = await client.getLogs({ address: devnet.addresses.VeLockNFT, fromBlock: 0n, toBlock: "latest" });
  const listedAt = async (tokenId: bigint, blockNumber: bigint) =>
    (
      await client.readContract({
        address: devnet.addresses.VeLockNFT,
        abi: VeLockNFTAbi,
        functionName: "getLockInfo",
        args: [tokenId],
        blockNumber,
      })
    )[3];
  const ids: string[] = [];
  for (const l of parseEventLogs({ abi: VeLockNFTAbi, logs })) {
    if (l.eventName === "Transfer" && (l.args.from === zeroAddress || l.args.to === zeroAddress)) continue;
    if (l.eventName === "MetadataUpdate") {
      const id = l.args._tokenId;
      if ((await listedAt(id, l.blockNumber)) === (await listedAt(id, l.blockNumber - 1n))) continue;
    }
    ids.push(`${l.transactionHash}-${l.logIndex}`);
  }
  return ids.sort();
}

/**
 * The index equals the chain: one row per token id with owner/amount/lockEnd/autoMax as ownerOf/getLockInfo say
 * (burned ⇔ ownerOf reverts), the live amounts sum to totalLockedClaim, one lock_event per lifecycle log, and
 * the lock store lists exactly each owner's live locks in token-id order.
 */
export async function expectIndexMatchesChain(devnet: TestDevnet, idx: IndexDb): Promise<{ tokens: number }> {
  const chain = await readChainLocks(devnet);
  const rows = await readIndexedLocks(idx);

  expect(rows.map((r) => r.tokenId)).toEqual(chain.locks.map((l) => l.tokenId));
  const indexed = rows.map((r) => ({
    tokenId: r.tokenId,
    owner: r.owner === null ? null : getAddress(r.owner),
    amount: r.amount,
    lockEnd: r.lockEnd,
    autoMax: r.autoMax,
  }));
  expect(indexed).toEqual(chain.locks);
  for (const r of rows) expect(r.burned, `burned flag of ${r.tokenId}`).toBe(r.owner === null);
  expect(new Set(rows.filter((r) => r.listed).map((r) => r.tokenId))).toEqual(chain.listed);
  await expectNewestEventsMatchLocks(idx, rows);

  const liveSum = rows.filter((r) => !r.burned).reduce((sum, r) => sum + r.amount, 0n);
  expect(liveSum).toBe(chain.totalLocked);

  const eventIds = (await idx.query<{ id: string }>(`SELECT id FROM ${idx.table("lock_event")}`))
    .map((e) => e.id)
    .sort();
  expect(eventIds).toEqual(await lifecycleEventIds(devnet));

  const store = createLockStore({ db: idx.db });
  const owners = new Set(chain.locks.flatMap((l) => (l.owner ? [l.owner] : [])));
  for (const who of [...owners, DEVNET_ACCOUNTS.idle.address]) {
    const expected = chain.locks
      .filter((l) => l.owner === who && l.amount > 0n)
      .map(({ tokenId, amount, lockEnd, autoMax }) => ({ tokenId, amount, lockEnd, autoMax }));
    expect(await store.liveLocksOf(who), `live locks of ${who}`).toEqual(expected);
  }
  return { tokens: rows.length };
}

/**
 * What the API answers equals the chain: for each user, GET /state through `app` (the real routes over the index),
 * and its veLocks must be the user's live locks at the answer's block exactly as getLockInfo reports them there
 * (an AutoMax lock's end is that block's time + 365 days), with source "subgraph+rpc".
 */
export async function expectStateMatchesChain(
  devnet: TestDevnet,
  app: { request(path: string): Response | Promise<Response> },
  users: readonly Address[],
): Promise<void> {
  for (const user of users) {
    const res = await app.request(`/api/mcp/v1/state/${user}`);
    const body = (await res.json()) as {
      source: string;
      blockNumber: string;
      user: { veLocks: { tokenId: string; amountWei: string; lockEnd: string; autoMax: boolean }[] };
    };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.source, `source for ${user}`).toBe("subgraph+rpc");
    const chain = await readChainLocks(devnet, BigInt(body.blockNumber));
    const expected = chain.locks
      .filter((l) => l.owner === user && l.amount > 0n)
      .map((l) => ({
        tokenId: String(l.tokenId),
        amountWei: String(l.amount),
        lockEnd: String(chain.effectiveEnds.get(l.tokenId)),
        autoMax: l.autoMax,
      }));
    expect(body.user.veLocks, `state of ${user} at ${body.blockNumber}`).toEqual(expected);
  }
}

/**
 * The event table's rule (the state of a lock is its newest event row, or the merge row that burned it) gives
 * exactly the `lock` table: what api/index/ relies on to answer at any block.
 */
async function expectNewestEventsMatchLocks(idx: IndexDb, rows: IndexedLock[]): Promise<void> {
  const newest = await idx.query<Record<string, string | boolean | null>>(
    `SELECT DISTINCT ON (token_id) token_id, owner, lock_amount, lock_end, auto_max, listed, burned
       FROM ${idx.table("lock_event")} ORDER BY token_id, block_number DESC, log_index DESC`,
  );
  const mergedAway = new Set(
    (
      await idx.query<{ from_token_id: string }>(
        `SELECT from_token_id FROM ${idx.table("lock_event")} WHERE from_token_id IS NOT NULL`,
      )
    ).map((r) => BigInt(r.from_token_id)),
  );
  const byId = new Map(newest.map((r) => [BigInt(String(r.token_id)), r]));
  for (const row of rows) {
    const e = byId.get(row.tokenId);
    const fromEvents = mergedAway.has(row.tokenId)
      ? { owner: null, amount: 0n, lockEnd: 0n, autoMax: false, listed: false, burned: true }
      : {
          owner: e?.owner == null ? null : getAddress(String(e.owner)),
          amount: BigInt(String(e?.lock_amount)),
          lockEnd: BigInt(String(e?.lock_end)),
          autoMax: e?.auto_max === true,
          listed: e?.listed === true,
          burned: e?.burned === true,
        };
    const { owner, amount, lockEnd, autoMax, listed, burned } = row;
    expect(fromEvents, `lock ${row.tokenId} by its events`).toEqual({
      owner: owner === null ? null : getAddress(owner),
      amount,
      lockEnd,
      autoMax,
      listed,
      burned,
    });
  }
}

/** A row of `lock` as the indexer wrote it: the rules' own row type. */
export type IndexedLock = LockRow;

/** Every row of `lock`, by token id. */
export async function readIndexedLocks(idx: IndexDb): Promise<IndexedLock[]> {
  const rows = await idx.query<Record<string, string | boolean | null>>(
    `SELECT * FROM ${idx.table("lock")} ORDER BY token_id`,
  );
  const big = (v: unknown) => BigInt(String(v));
  return rows.map((r) => ({
    tokenId: big(r.token_id),
    owner: (r.owner as Address | null) ?? null,
    amount: big(r.amount),
    lockEnd: big(r.lock_end),
    autoMax: r.auto_max === true,
    listed: r.listed === true,
    burned: r.burned === true,
    createdBlock: big(r.created_block),
    createdTime: big(r.created_time),
    updatedBlock: big(r.updated_block),
    updatedTime: big(r.updated_time),
  }));
}

/** Both tables in full, in a stable order and as text: what "identical" means for two index runs. */
export async function dumpIndex(idx: IndexDb): Promise<{ locks: string[]; events: string[] }> {
  const text = async (table: string, order: string) =>
    (await idx.query<{ row: string }>(`SELECT t::text AS row FROM ${idx.table(table)} t ORDER BY ${order}`)).map(
      (r) => r.row,
    );
  return { locks: await text("lock", "token_id"), events: await text("lock_event", "id") };
}

// ------------------------------------------------------------------------------------------- random activity

/** Users the random activity acts for (each test file has its own devnet, so nothing else sees them). */
export const ACTORS = ["alice", "bob", "carol", "fresh"] as const;
type Actor = (typeof ACTORS)[number];

/**
 * One intended action, each through the path a user has on Base: new locks and top-ups through
 * Furnace.enterWithClaim, extensions and merges through the devnet Furnace's entries (VeLockNFT's *For functions
 * accept only the Furnace), sell-backs and listings by the market role, unlocks by the owner or a delegate.
 * `pick`/`other` choose among the actor's current locks (modulo their count) when the action runs, so every
 * generated sequence is meaningful on whatever state the chain is in; an action whose on-chain precondition does
 * not hold (no lock, expired, listed, 32 locks, …) is skipped rather than sent to revert.
 */
export type LockOp =
  | { kind: "create"; actor: Actor; amount: bigint; days: bigint; autoMax: boolean }
  | { kind: "topup"; actor: Actor; pick: number; amount: bigint }
  | { kind: "extend"; actor: Actor; pick: number; days: bigint }
  | { kind: "merge"; actor: Actor; pick: number; other: number }
  | { kind: "unlock"; actor: Actor; pick: number; delegated: boolean }
  | { kind: "list"; actor: Actor; pick: number; listed: boolean }
  | { kind: "setAutoMax"; actor: Actor; pick: number; enabled: boolean }
  | { kind: "sellBack"; actor: Actor; pick: number }
  | { kind: "settleSellBack"; pick: number }
  | { kind: "timeTravel"; days: bigint };

const actor = fc.constantFrom(...ACTORS);
const pick = fc.nat({ max: 31 });
export const lockOpArb: fc.Arbitrary<LockOp> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("create" as const),
      actor,
      amount: fc.bigInt(1_000n, 5_000n),
      days: fc.bigInt(7n, 365n),
      autoMax: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("topup" as const), actor, pick, amount: fc.bigInt(1n, 800n) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("extend" as const), actor, pick, days: fc.bigInt(1n, 200n) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("merge" as const), actor, pick, other: pick }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("unlock" as const), actor, pick, delegated: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("list" as const), actor, pick, listed: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("setAutoMax" as const), actor, pick, enabled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("sellBack" as const), actor, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("settleSellBack" as const), pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("timeTravel" as const), days: fc.bigInt(1n, 60n) }) },
);

/**
 * What the actors need (the seed leaves `fresh` without any approval): the Furnace approved, tokens, and a
 * delegation session for the deployer (their delegated unlocks). Call once per devnet.
 */
export async function prepareActors(devnet: TestDevnet): Promise<void> {
  for (const name of ACTORS) {
    const key = DEVNET_ACCOUNTS[name].privateKey;
    await send(devnet, key, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "approve",
      args: [devnet.addresses.Furnace, 2n ** 256n - 1n],
    });
    await send(devnet, key, {
      address: devnet.addresses.VeLockNFT,
      abi: DEVNET_ABIS.VeLockNFT,
      functionName: "openDelegationSession",
      args: [DEVNET_ACCOUNTS.deployer.address, 2n ** 64n],
    });
  }
  await send(devnet, DEVNET_ACCOUNTS.deployer.privateKey, {
    address: devnet.addresses.AssetToken,
    abi: DEVNET_ABIS.AssetToken,
    functionName: "mint",
    args: [DEVNET_ACCOUNTS.fresh.address, 1_000_000n * E18],
  });
  for (const name of ["alice", "bob", "carol"] as const) {
    await send(devnet, DEVNET_ACCOUNTS.deployer.privateKey, {
      address: devnet.addresses.AssetToken,
      abi: DEVNET_ABIS.AssetToken,
      functionName: "mint",
      args: [DEVNET_ACCOUNTS[name].address, 1_000_000n * E18],
    });
  }
}

/** Runs `ops` against the devnet; returns how many were sent (the rest were skipped as not applicable). */
export async function applyLockOps(devnet: TestDevnet, ops: LockOp[]): Promise<number> {
  const ve = { address: devnet.addresses.VeLockNFT, abi: DEVNET_ABIS.VeLockNFT };
  const furnace = { address: devnet.addresses.Furnace, abi: DEVNET_ABIS.Furnace };
  const { deployer, market } = DEVNET_ACCOUNTS;
  let sent = 0;

  const owned = (locks: ChainLock[], who: DevnetAccount) => locks.filter((l) => l.owner === who.address);
  const veTx = (who: DevnetAccount, functionName: string, args: readonly unknown[]) =>
    send(devnet, who.privateKey as Hex, { ...ve, functionName, args }).then(() => sent++);
  // minVeOut 1: the property is about the index, not slippage (the quote is the API's business).
  const enter = (who: DevnetAccount, amount: bigint, target: bigint, seconds: bigint, autoMax: boolean) =>
    send(devnet, who.privateKey as Hex, {
      ...furnace,
      functionName: "enterWithClaim",
      args: [amount, target, seconds, autoMax, 1n],
    }).then(() => sent++);
  const furnaceTx = (who: DevnetAccount, functionName: string, args: readonly unknown[]) =>
    send(devnet, who.privateKey as Hex, { ...furnace, functionName, args }).then(() => sent++);

  for (const op of ops) {
    const { locks, listed, timestamp: now } = await readChainLocks(devnet);
    // Margin against the next block's timestamp running ahead of `now` (anvil follows the wall clock).
    const usable = (l: ChainLock) => !listed.has(l.tokenId) && (l.autoMax || l.lockEnd > now + 60n);
    if (op.kind === "timeTravel") {
      await devnet.clients.testClient.increaseTime({ seconds: Number(op.days * DAY) });
      await devnet.clients.testClient.mine({ blocks: 1 });
      sent++;
      continue;
    }
    if (op.kind === "settleSellBack") {
      const held = locks.filter((l) => l.owner === devnet.addresses.Furnace);
      const target = held[op.pick % Math.max(held.length, 1)];
      if (!target) continue;
      await send(devnet, deployer.privateKey, {
        address: devnet.addresses.Furnace,
        abi: DEVNET_ABIS.Furnace,
        functionName: "settleSellBack",
        args: [target.tokenId],
      });
      sent++;
      continue;
    }
    const who = DEVNET_ACCOUNTS[op.actor];
    const mine = owned(locks, who);
    const target = "pick" in op ? mine[op.pick % Math.max(mine.length, 1)] : undefined;
    switch (op.kind) {
      case "create": {
        if (mine.length >= 32) break;
        const days = op.autoMax ? 365n : op.days;
        await enter(who, op.amount * E18, 0n, days * DAY, op.autoMax);
        break;
      }
      case "topup":
        // As on Base (FurnaceQuoter._resolveDestinationDuration): an AutoMax lock needs durationSeconds = 365
        // days, a plain lock at least 7 days left (InvalidDuration otherwise).
        if (!target || !usable(target)) break;
        if (!target.autoMax && target.lockEnd <= now + 7n * DAY + 60n) break;
        await enter(who, op.amount * E18, target.tokenId, target.autoMax ? MAX_DURATION : 0n, false);
        break;
      case "extend": {
        if (!target || !usable(target)) break;
        const newEnd = target.autoMax ? 0n : min(target.lockEnd + op.days * DAY, now + MAX_DURATION);
        if (!target.autoMax && newEnd <= target.lockEnd) break;
        await furnaceTx(who, "extendLock", [target.tokenId, newEnd]);
        break;
      }
      case "merge": {
        const into = mine[op.other % Math.max(mine.length, 1)];
        if (!target || !into || target.tokenId === into.tokenId) break;
        if (!usable(target) || !usable(into)) break;
        await furnaceTx(who, "mergeLocks", [target.tokenId, into.tokenId]);
        break;
      }
      case "unlock":
        if (!target || target.autoMax || target.lockEnd > now || listed.has(target.tokenId)) break;
        if (op.delegated) await veTx(deployer, "unlockExpiredForUser", [who.address, target.tokenId]);
        else await veTx(who, "unlock", [target.tokenId]);
        break;
      case "setAutoMax":
        // false on a plain lock is sent too: a silent no-op on the published contract (no event).
        if (target && usable(target)) await veTx(who, "setAutoMax", [target.tokenId, op.enabled]);
        break;
      case "list":
        // MetadataUpdate only: the index must not change.
        if (target) await veTx(market, "setListed", [target.tokenId, op.listed]);
        break;
      case "sellBack":
        // The published cap holds on the Furnace's receive path too (TooManyVeNFTs at 32 held).
        if (locks.filter((l) => l.owner === devnet.addresses.Furnace).length >= 32) break;
        if (!target) break;
        // As the published market sells: a listed lock is delisted first (it does not move while listed).
        if (listed.has(target.tokenId)) await veTx(market, "setListed", [target.tokenId, false]);
        await veTx(market, "transferFrom", [who.address, devnet.addresses.Furnace, target.tokenId]);
        break;
    }
  }
  return sent;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** The devnet's head block number (never cached). */
export const headBlock = (devnet: TestDevnet) => devnet.clients.publicClient.getBlockNumber({ cacheTime: 0 });

/**
 * Many real lock events fast: automine off, `perBlock` Furnace top-ups of the `capped` account's locks per block, sent as
 * one JSON-RPC batch of eth_sendTransaction (anvil's dev accounts are unlocked), then one evm_mine. Leaves
 * automine on. Returns the number of LockAmountIncreased events created.
 */
export async function bulkTopUps(devnet: TestDevnet, opts: { blocks: number; perBlock: number; tokenIds: bigint[] }) {
  const from = DEVNET_ACCOUNTS.capped.address;
  const rpc = async (body: unknown) => {
    const res = await fetch(devnet.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const out = (await res.json()) as { error?: unknown } | { error?: unknown }[];
    for (const item of Array.isArray(out) ? out : [out]) {
      if (item.error) throw new Error(`bulk top-ups: ${JSON.stringify(item.error)}`);
    }
  };
  let nonce = await devnet.clients.publicClient.getTransactionCount({ address: from, blockTag: "pending" });
  await rpc({ jsonrpc: "2.0", id: 1, method: "evm_setAutomine", params: [false] });
  try {
    for (let b = 0; b < opts.blocks; b++) {
      const batch = Array.from({ length: opts.perBlock }, (_, i) => {
        const tokenId = opts.tokenIds[(b * opts.perBlock + i) % opts.tokenIds.length] as bigint;
        // Top-ups through the Furnace, as on Base (the seed approved it for `capped`).
        const data = encodeFunctionData({
          abi: DEVNET_ABIS.Furnace,
          functionName: "enterWithClaim",
          // 365 days: required for an AutoMax lock (capped's first), ignored for a plain one (as on Base)
          args: [E18, tokenId, 31_536_000n, false, 1n],
        });
        const tx = { from, to: devnet.addresses.Furnace, data, gas: "0x61a80", nonce: `0x${(nonce++).toString(16)}` };
        return { jsonrpc: "2.0", id: i, method: "eth_sendTransaction", params: [tx] };
      });
      await rpc(batch);
      await rpc({ jsonrpc: "2.0", id: 1, method: "evm_mine", params: [] });
    }
  } finally {
    await rpc({ jsonrpc: "2.0", id: 1, method: "evm_setAutomine", params: [true] });
  }
  return opts.blocks * opts.perBlock;
}
