/**
 * The GraphQL schema over the lock index: SDL and resolvers (graphql-yoga's createSchema). Fields and their values
 * are the REST index API's (api/read/shapes.ts: lockJson, eventJson), lists are keyset pages with opaque cursors
 * that carry their block (api/read/cursor.ts), and every read goes through the read model (api/read/atBlock.ts)
 * at the request's one block (api/graphql/scope.ts). Only the filters the read model serves from an index are
 * offered: a lock by id, an owner's live locks, a lock's or an account's events, newest first.
 */
import { GraphQLScalarType, Kind, type ValueNode } from "graphql";
import { createSchema } from "graphql-yoga";
import type { Address } from "viem";
import { LOCK_EVENT_KINDS } from "../../indexer/rules";
import { parseAddress } from "../http/params";
import type { EventsOf } from "../read/contract";
import { eventJson, freshness, lockJson } from "../read/shapes";
import { graphqlError } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";
import type { BlockArg } from "./plan";
import type { RequestScope } from "./scope";

export type GraphqlContext = { scope: RequestScope };

const typeDefs = /* GraphQL */ `
"""
An unsigned integer as a decimal string: wei amounts, token ids, block numbers, unix seconds. As input, a canonical
decimal string (or a JSON integer up to 2^53 - 1).
"""
scalar BigInt

"""
Which block a field is answered at. A BigInt (\`block: "123"\`, or \`{ number: "123" }\`): exactly that block. As
The Graph: \`{ number_gte: "123" }\`, that block or later — the index's head, once it has reached 123; if it has
not, the request waits up to \`waitMs\` (\`{ number_gte: "123", waitMs: 2000 }\`, default 0, at most 10000) and then
fails with INDEX_BEHIND (\`extensions.head\`, \`extensions.retryAfterSec\`). More than 5 blocks beyond the chain's
head is BAD_USER_INPUT.
"""
scalar Block

enum OrderDirection { asc desc }
enum LockOrderBy { tokenId }
"Events are ordered by block, then log index."
enum LockEventOrderBy { blockNumber }
enum LockEventKind { ${LOCK_EVENT_KINDS.join(" ")} }

"A vote-escrow lock at the request's block, as getLockInfo / ownerOf report it there (REST: GET /api/index/v1/locks/{tokenId})."
type Lock {
  tokenId: BigInt!
  "EIP-55; null once burned (merged away or unlocked)."
  owner: String
  amountWei: BigInt!
  "As getLockInfo reports it at the block: an AutoMax lock ends the block's time + 365 days."
  lockEnd: BigInt!
  autoMax: Boolean!
  listed: Boolean!
  burned: Boolean!
  "AutoMax: the amount; else floor(amount x (lockEnd - t) / 365 d), 0 once expired; t the block's timestamp."
  veWei: BigInt!
  createdBlock: BigInt!
}

"One lifecycle event and the lock's state right after it (REST: GET /api/index/v1/locks/{tokenId}/events)."
type LockEvent {
  kind: LockEventKind!
  "The lock the event changed (for a merge: the lock merged into)."
  tokenId: BigInt!
  "Who acted (EIP-55): the owner; for a transfer the seller."
  account: String!
  "create: amount; topup: added; merge: moved; unlock: returned; else null."
  amountWei: BigInt
  lockEnd: BigInt!
  autoMax: Boolean!
  "merge: the lock merged away."
  fromTokenId: BigInt
  "transfer: who received the lock."
  recipient: String
  owner: String
  lockAmountWei: BigInt!
  listed: Boolean!
  blockNumber: BigInt!
  blockTimestamp: BigInt!
  txHash: String!
  logIndex: Int!
}

type PageInfo {
  hasNextPage: Boolean!
  "Pass as \`after\` for the next page: it is answered at this page's block. Null for an empty page."
  endCursor: String
}

type LockPage { items: [Lock!]! pageInfo: PageInfo! }
type LockEventPage { items: [LockEvent!]! pageInfo: PageInfo! }

"An owner's live locks (the index serves no scan of every lock)."
input LockFilter { owner: String! }

"Exactly one of tokenId (the lock's history, merges into it included) or account (what it did or received)."
input LockEventFilter { tokenId: BigInt account: String }

"The block every field of this request is answered at."
type Meta {
  block: BigInt!
  blockTimestamp: BigInt!
  chainId: Int!
  "The index's head when the request was answered."
  head: BigInt!
  "Now minus the timestamp of the index's head block, whole seconds, never negative; computed when answered."
  indexLagSeconds: Int!
  "indexLagSeconds is above the server's INDEX_STALE_SECONDS (default 180)."
  stale: Boolean!
}

"""
Every field of one request is answered at one block: the one its fields name (a \`block\` argument, or the block
an \`after\` cursor carries; they must agree), else the index's head, read once. \`_meta.block\` names it.
"""
type Query {
  "The lock, or null when it was not minted by the block."
  lock(tokenId: BigInt!, block: Block): Lock
  locks(
    where: LockFilter!
    orderBy: LockOrderBy = tokenId
    orderDirection: OrderDirection = asc
    limit: Int = ${GRAPHQL_LIMITS.defaultLimit}
    after: String
    block: Block
  ): LockPage!
  "Newest first only (the read model's order)."
  lockEvents(
    where: LockEventFilter!
    orderBy: LockEventOrderBy = blockNumber
    orderDirection: OrderDirection = desc
    limit: Int = ${GRAPHQL_LIMITS.defaultLimit}
    after: String
    block: Block
  ): LockEventPage!
  _meta(block: Block): Meta!
}
`;

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * A BigInt argument's value as the resolvers get it: its canonical decimal string (not a JS bigint: graphql-jit
 * writes a document's literal arguments into the code it compiles, as JSON).
 */
export type Decimal = string;

function toBig(value: unknown): Decimal {
  if (typeof value === "string" && DECIMAL.test(value) && BigInt(value) <= MAX_UINT256) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
  throw graphqlError(
    "BAD_USER_INPUT",
    "A BigInt is a non-negative integer in canonical decimal form, up to 2^256 - 1.",
  );
}

const MAX_WAIT_MS = 10_000;

function toBlock(value: unknown): BlockArg {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return toBig(value);
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  const bad = (message: string) => graphqlError("BAD_USER_INPUT", message, { param: "block" });
  if (keys.some((k) => !["number", "number_gte", "waitMs"].includes(k))) {
    throw bad("block takes { number } or { number_gte, waitMs }.");
  }
  if ((o.number === undefined) === (o.number_gte === undefined)) {
    throw bad("block takes exactly one of number or number_gte.");
  }
  if (o.number !== undefined) {
    if (o.waitMs !== undefined) throw bad("waitMs is only taken with number_gte.");
    return toBig(o.number);
  }
  const waitMs = o.waitMs ?? 0;
  if (typeof waitMs !== "number" || !Number.isInteger(waitMs) || waitMs < 0 || waitMs > MAX_WAIT_MS) {
    throw bad(`waitMs must be an integer from 0 to ${MAX_WAIT_MS}.`);
  }
  return { number_gte: toBig(o.number_gte), waitMs };
}

/** A literal as plain JSON (objects, strings, integers), for toBlock. */
function literal(ast: ValueNode): unknown {
  if (ast.kind === Kind.OBJECT) return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
  if (ast.kind === Kind.INT) return Number(ast.value);
  if (ast.kind === Kind.STRING) return ast.value;
  throw graphqlError("BAD_USER_INPUT", "block is a BigInt or { number } or { number_gte, waitMs }.", {
    param: "block",
  });
}

const BlockScalar = new GraphQLScalarType({
  name: "Block",
  serialize: (value) => value,
  parseValue: toBlock,
  parseLiteral: (ast) => toBlock(literal(ast)),
});

const BigIntScalar = new GraphQLScalarType({
  name: "BigInt",
  serialize: (value) => (typeof value === "bigint" ? value.toString() : String(value)),
  parseValue: toBig,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT)
      return toBig(ast.kind === Kind.INT ? Number(ast.value) : ast.value);
    throw graphqlError("BAD_USER_INPUT", "A BigInt is a decimal string.");
  },
});

type PageArgs = { orderDirection: "asc" | "desc"; limit: number; after?: string | null };

const address = (param: string, raw: string): Address => parseAddress(param, raw);

/**
 * A page of a list: the first `limit` of `rows` (which hold one more when a next page exists) as `json`, and its
 * pageInfo, whose endCursor is the cursor of its last item (null for an empty page).
 */
function pageOf<R, J>(rows: readonly R[], limit: number, json: (row: R) => J, cursorOf: (last: R) => string) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return {
    items: items.map((row) => json(row)),
    pageInfo: { hasNextPage: rows.length > limit, endCursor: last === undefined ? null : cursorOf(last) },
  };
}

export function buildSchema() {
  return createSchema<GraphqlContext>({
    typeDefs,
    resolvers: {
      BigInt: BigIntScalar,
      Block: BlockScalar,
      Query: {
        lock: async (_: unknown, args: { tokenId: Decimal }, { scope }: GraphqlContext) => {
          const state = await scope.read((at, signal) => scope.rt.index.lock(BigInt(args.tokenId), at, signal));
          return state === null ? null : lockJson(state, (await scope.at()).time);
        },

        locks: async (_: unknown, args: PageArgs & { where: { owner: string } }, { scope }: GraphqlContext) => {
          const owner = await scope.bounded(async () => address("where.owner", args.where.owner));
          const descending = args.orderDirection === "desc";
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "locks") : undefined;
          if (cursor && cursor.after.descending !== descending) {
            throw graphqlError("BAD_USER_INPUT", "after is a cursor of the other orderDirection.", { param: "after" });
          }
          const all = await scope.read((at, signal) => scope.rt.index.locksOf(owner, at, signal));
          const { block, time } = await scope.at();
          const ordered = descending ? [...all].reverse() : all;
          const rest = cursor
            ? ordered.filter((l) => (descending ? l.tokenId < cursor.after.tokenId : l.tokenId > cursor.after.tokenId))
            : ordered;
          return pageOf(
            rest,
            args.limit,
            (l) => lockJson(l, time),
            (l) => scope.rt.cursors.encode({ kind: "locks", block, after: { tokenId: l.tokenId, descending } }),
          );
        },

        lockEvents: async (
          _: unknown,
          args: PageArgs & { where: { tokenId?: Decimal | null; account?: string | null } },
          { scope }: GraphqlContext,
        ) => {
          const { tokenId, account } = args.where;
          if ((tokenId == null) === (account == null)) {
            throw graphqlError("BAD_USER_INPUT", "where takes exactly one of tokenId or account.", { param: "where" });
          }
          if (args.orderDirection !== "desc") {
            throw graphqlError("BAD_USER_INPUT", "lockEvents are served newest first only (orderDirection: desc).", {
              param: "orderDirection",
            });
          }
          const of: EventsOf =
            tokenId != null
              ? { tokenId: BigInt(tokenId) }
              : { account: await scope.bounded(async () => address("where.account", account!)) };
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "events") : undefined;
          const rows = await scope.read((at, signal) =>
            scope.rt.index.events(of, at, { limit: args.limit + 1, after: cursor?.after ?? null }, signal),
          );
          const { block } = await scope.at();
          return pageOf(rows, args.limit, eventJson, (e) =>
            scope.rt.cursors.encode({ kind: "events", block, after: { block: e.blockNumber, logIndex: e.logIndex } }),
          );
        },

        _meta: async (_: unknown, __: unknown, { scope }: GraphqlContext) => {
          const at = await scope.meta();
          return {
            block: at.block,
            blockTimestamp: at.time,
            chainId: scope.rt.chainId,
            head: at.head.block,
            ...freshness(at.head.time, scope.rt.staleSeconds),
          };
        },
      },
    },
  });
}
