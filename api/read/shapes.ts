/**
 * What the index API answers, in one place: the JSON of a lock, an event and a board row, their schemas (the
 * OpenAPI document and the MCP tools' output schemas) and the envelope every answer shares. Wei amounts, token
 * ids, block numbers and times are decimal strings; addresses EIP-55.
 */
import { type Address, getAddress } from "viem";
import { LOCK_EVENT_KINDS } from "../../indexer/rules";
import { effectiveLockEnd, lockVe } from "../math";
import type { JsonSchema } from "../route/jsonSchema";
import { addressString, boolean, constant, integer, object, uintString } from "../route/jsonSchema";
import { checksummedAddress } from "./checksum";
import type { ActivityRow, LockEventState, LockState } from "./contract";

const checksummed = (a: Address | null) => (a === null ? null : checksummedAddress(a));
const nullable = (schema: JsonSchema, description: string): JsonSchema => ({
  anyOf: [schema, { type: "null" }],
  description,
});

/** The fields every success carries: the block every figure in it is of. */
export const ENVELOPE_SCHEMA = {
  ok: constant(true),
  chainId: integer("The chain the index follows."),
  blockNumber: uintString("The block every figure of the answer is of."),
  blockTimestamp: uintString("That block's timestamp (unix seconds): the `t` of every ve figure."),
  indexLagSeconds: integer(
    "How far the index is behind the wall clock: now minus the timestamp of the index's head block (not of " +
      "`blockNumber`), in whole seconds, never negative. Computed when the answer is sent, also for an answer " +
      "pinned to a past block.",
    { minimum: 0 },
  ),
  stale: boolean(
    "`indexLagSeconds` is above the server's INDEX_STALE_SECONDS (default 180; on a leaderboard's answer and its rank " +
      "lookups INDEX_BOARD_STALE_SECONDS, default 900, the reference's 15 minutes): label what you show.",
  ),
} as const;

export type Envelope = {
  ok: true;
  chainId: number;
  blockNumber: string;
  blockTimestamp: string;
  indexLagSeconds: number;
  stale: boolean;
};

/**
 * How far the index is behind the wall clock when an answer is sent: now minus its head block's timestamp, in whole
 * seconds, never negative (a node's clock may run ahead of ours), and whether that is above `staleSeconds`.
 */
export function freshness(headTime: bigint, staleSeconds: number, nowMs = Date.now()) {
  const lag = BigInt(Math.floor(nowMs / 1000)) - headTime;
  const indexLagSeconds = lag > 0n ? Number(lag) : 0;
  return { indexLagSeconds, stale: indexLagSeconds > staleSeconds };
}

/** The envelope of every example answer in the OpenAPI document: one block on Base. */
export const EXAMPLE_ENVELOPE = {
  ok: true,
  chainId: 8453,
  blockNumber: "38118524",
  blockTimestamp: "1764061200",
  indexLagSeconds: 3,
  stale: false,
} as const;

export const LOCK_SCHEMA = object({
  tokenId: uintString("The lock's token id."),
  owner: nullable(addressString("Owner (EIP-55)."), "The owner (ownerOf); null once burned."),
  amountWei: uintString("Locked amount (getLockInfo's amount; 0 once burned)."),
  lockEnd: uintString(
    "Unix time the lock ends, as getLockInfo reports it at the block: an AutoMax lock ends the block's time + 365 days.",
  ),
  autoMax: boolean("Kept at the maximum length (counts its whole amount as ve)."),
  listed: boolean("Listed on the protocol's market (frozen: no top-up, extension, merge or unlock)."),
  burned: boolean("Merged away or unlocked: the token no longer exists."),
  veWei: uintString(
    "The lock's ve at the block: AutoMax → amount; else floor(amount × (lockEnd − t) / 365 d), 0 once expired.",
  ),
  createdBlock: uintString("The block the lock was created in."),
});

/** The example lock of the OpenAPI document (`lockJson`'s shape). */
export const EXAMPLE_LOCK = {
  tokenId: "42",
  owner: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  amountWei: "10000000000000000000000",
  lockEnd: "1795000000",
  autoMax: false,
  listed: false,
  burned: false,
  veWei: "9810502283105022831050",
  createdBlock: "37990112",
} as const;

export function lockJson(lock: LockState, t: bigint) {
  return {
    tokenId: lock.tokenId.toString(),
    owner: checksummed(lock.owner),
    amountWei: lock.amount.toString(),
    lockEnd: effectiveLockEnd(lock, t).toString(),
    autoMax: lock.autoMax,
    listed: lock.listed,
    burned: lock.burned,
    veWei: (lock.burned ? 0n : lockVe(lock, t)).toString(),
    createdBlock: lock.createdBlock.toString(),
  };
}

export const EVENT_SCHEMA = object({
  kind: {
    type: "string",
    enum: [...LOCK_EVENT_KINDS],
    description:
      "create, topup, extend, merge (into tokenId, from fromTokenId), unlock, automax, transfer (a sell-back to " +
      "recipient), list, unlist (the market's listing, from MetadataUpdate).",
  },
  tokenId: uintString("The lock the event changed (for a merge: the lock merged into)."),
  account: addressString("Who acted: the owner (for a transfer: the seller)."),
  amountWei: nullable(uintString("wei"), "create: amount; topup: added; merge: moved; unlock: returned; else null."),
  lockEnd: uintString(
    "The lock's end right after the event, as getLockInfo reports it at the event's block: an AutoMax lock ends " +
      "that block's time + 365 days; any other its stored end (0 once burned).",
  ),
  autoMax: boolean("The lock's AutoMax flag right after the event."),
  fromTokenId: nullable(uintString("id"), "merge: the lock merged away; else null."),
  recipient: nullable(addressString("address"), "transfer: who received the lock (the Furnace); else null."),
  owner: nullable(addressString("address"), "The lock's owner right after the event; null once burned."),
  lockAmountWei: uintString("The lock's amount right after the event."),
  listed: boolean("The lock's listing right after the event."),
  blockNumber: uintString("The event's block."),
  blockTimestamp: uintString("That block's timestamp."),
  txHash: { type: "string", pattern: "^0x[0-9a-f]{64}$", description: "The transaction." },
  logIndex: integer("The log's index in its block.", { minimum: 0 }),
});

/**
 * A lock event as REST and GraphQL answer it. The row holds the stored end; an AutoMax lock's end is never a stored
 * figure but the event's block time + 365 days (protocol.md §8), also after an event that did not rewrite it (a
 * listing, a transfer).
 */
export function eventJson(e: LockEventState) {
  return {
    kind: e.kind,
    tokenId: e.tokenId.toString(),
    account: checksummedAddress(e.account),
    amountWei: e.amount === null ? null : e.amount.toString(),
    lockEnd: effectiveLockEnd({ amount: e.lockAmount, lockEnd: e.lockEnd, autoMax: e.autoMax }, e.blockTime).toString(),
    autoMax: e.autoMax,
    fromTokenId: e.fromTokenId === null ? null : e.fromTokenId.toString(),
    recipient: checksummed(e.recipient),
    owner: checksummed(e.owner),
    lockAmountWei: e.lockAmount.toString(),
    listed: e.listed,
    blockNumber: e.blockNumber.toString(),
    blockTimestamp: e.blockTime.toString(),
    txHash: e.txHash,
    logIndex: e.logIndex,
  };
}

export const NEXT_CURSOR_SCHEMA = nullable(
  { type: "string", pattern: "^[A-Za-z0-9_-]+$" },
  "Pass as `cursor` for the next page (answered at this same block); null on the last page.",
);

export const BOARD_ROW_SCHEMA = object({
  rank: integer("1 for the most ve.", { minimum: 1 }),
  address: addressString("The holder (EIP-55)."),
  veWei: uintString("veBalanceOf(address) at the block: the sum of its locks' ve."),
  lockedWei: uintString("The sum of its live locks' amounts (expired ones included)."),
  locks: integer("Its live locks.", { minimum: 1 }),
});

/** The activity feed's kinds: the lock history's, then the protocol's (api/index/activity.ts). */
export const ACTIVITY_KINDS = [
  "create",
  "topup",
  "extend",
  "merge",
  "unlock",
  "automax",
  "transfer",
  "list",
  "unlist",
  "furnace-enter",
  "royalty-claim",
  "takeover",
  "reign-finalized",
] as const;

const HEX40 = /^0x[0-9a-f]{40}$/;
const show = (v: string | number | boolean | null) => (typeof v === "string" && HEX40.test(v) ? getAddress(v) : v);

/** An activity item as REST and GraphQL answer it (GraphQL gives `fields` as JSON text). */
export function activityJson(r: ActivityRow) {
  const accounts = [r.account, ...(r.other !== null && r.other !== r.account ? [r.other] : [])].map((a) =>
    getAddress(a),
  );
  const fields: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(r.data)) fields[k] = show(v);
  return {
    id: `${r.txHash}-${r.logIndex}`,
    kind: r.kind,
    accounts,
    fields,
    blockNumber: r.blockNumber.toString(),
    blockTimestamp: r.blockTime.toString(),
    txHash: r.txHash,
    logIndex: r.logIndex,
  };
}
