/**
 * The GraphQL schema over the lock index: SDL and resolvers (graphql-yoga's createSchema). Fields and their values
 * are the REST index API's (api/read/shapes.ts: lockJson, eventJson), lists are keyset pages with opaque cursors
 * that carry their block (api/read/cursor.ts), and every read goes through the read model (api/read/atBlock.ts)
 * at the request's one block (api/graphql/scope.ts). Only the filters the read model serves from an index are
 * offered: a lock by id, an owner's live locks, a lock's or an account's events, newest first.
 */
import { GraphQLScalarType, Kind } from "graphql";
import { createSchema } from "graphql-yoga";
import type { Address } from "viem";
import { LOCK_EVENT_KINDS } from "../../indexer/rules";
import { parseAddress } from "../http/params";
import { type AtBlock, BOARD_UNIT, DURATION_BOARDS, type EventsOf, type Seal } from "../read/contract";
import { checkSeal, sealAsk } from "../read/cursor";
import { boardSeal, judgeBoardCursor } from "../read/cursorSeal";
import { blockAnswer, blockAnswers, guarded } from "../read/runtime";
import { activityJson, eventJson, freshness, lockJson } from "../read/shapes";
import { type Decimal, parseBlockLiteral, toBig, toBlock } from "./blockArg";
import { rankingAt } from "./boards";
import { graphqlError } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";
import { boardOf, PAGED } from "./plan";
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
head is BAD_USER_INPUT. A variable inside the object (\`{ number: $n }\`) is declared BigInt or Int (\`waitMs\`: Int).
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
  "As getLockInfo reports it at the event's block: an AutoMax lock ends that block's time + 365 days."
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
  "Pass as \`after\` for the next page: it is answered at this page's block. Null for an empty page, and on leaderboard's last page (as REST's nextCursor)."
  endCursor: String
}

type LockPage { items: [Lock!]! pageInfo: PageInfo! }
type LockEventPage { items: [LockEvent!]! pageInfo: PageInfo! }

"An owner's live locks (the index serves no scan of every lock)."
input LockFilter { owner: String! }

"Exactly one of tokenId (the lock's history, merges into it included) or account (what it did or received)."
input LockEventFilter { tokenId: BigInt account: String }

"One row of an official board (REST: GET /api/index/v1/leaderboards/{board}, or /leaderboards/ve)."
type BoardRow {
  rank: Int!
  "EIP-55."
  address: String!
  "A decimal string in unit: the account's figure on the board; on the ve board its veBalanceOf at the block (REST's veWei)."
  value: BigInt!
  "wei, seconds or count."
  unit: String!
  "The ve board: the sum of the holder's live locks' amounts, expired ones included (REST's lockedWei); null on a duration board."
  lockedWei: BigInt
  "The ve board: the holder's live locks (REST's locks); null on a duration board."
  locks: Int
}
type BoardPage {
  board: String!
  "The window; null on the ve board, which has none."
  window: String
  "blockTimestamp - the window: events at or after it count; null for lifetime and on the ve board."
  windowStart: BigInt
  "How many accounts are ranked (the ve board: REST's holders)."
  accounts: Int!
  items: [BoardRow!]!
  pageInfo: PageInfo!
}
"""
An account's row and the row ranked one above it, with the board's window and how many are ranked (REST: GET
/api/index/v1/leaderboards/{board}/{address}, or /leaderboards/ve/{address}).
"""
type BoardRank {
  board: String!
  "The window; null on the ve board, which has none."
  window: String
  "blockTimestamp - the window: events at or after it count; null for lifetime and on the ve board."
  windowStart: BigInt
  "How many accounts are ranked (the ve board: REST's holders)."
  accounts: Int!
  row: BoardRow
  above: BoardRow
}

"One indexed event (REST: GET /api/index/v1/activity)."
type ActivityItem {
  "{txHash}-{logIndex}: the permalink."
  id: String!
  kind: String!
  "The accounts it concerns (EIP-55), who acted first."
  accounts: [String!]!
  "The event's own fields, as a JSON object (uint256 as decimal strings)."
  fields: String!
  blockNumber: BigInt!
  blockTimestamp: BigInt!
  txHash: String!
  logIndex: Int!
}
type ActivityPage { items: [ActivityItem!]! pageInfo: PageInfo! }

type ProfileBoard { board: String! value: BigInt! rank: Int unit: String! }
"An account's profile (REST: GET /api/index/v1/accounts/{address})."
type Profile {
  address: String!
  "The seven duration boards (lifetime) and ve."
  boards: [ProfileBoard!]!
  firstActivityBlock: BigInt
  lastActivityBlock: BigInt
}

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
  """
  An official board: ve (every holder with ve > 0, by ve; no window) or a duration board — king-claim-mined,
  longest-reign, takeovers, takeover-eth, royalties, furnace-claim, furnace-eth — in a window of 24h, 7d (when none is
  given), 30d or lifetime. A cursor pages the same list as REST's (GET /leaderboards/ve, /leaderboards/{board}?window=).
  """
  leaderboard(board: String!, window: String, limit: Int = ${GRAPHQL_LIMITS.defaultLimit}, after: String, block: Block): BoardPage!
  "An account's rank on an official board (ve: no window; a duration board: 7d when none is given)."
  rank(board: String!, address: String!, window: String, block: Block): BoardRank!
  "Every indexed event, newest first; kinds and account filter as the REST feed's."
  activity(kinds: [String!], account: String, limit: Int = ${GRAPHQL_LIMITS.defaultLimit}, after: String, block: Block): ActivityPage!
  profile(address: String!, block: Block): Profile!
  _meta(block: Block): Meta!
}
`;

const BlockScalar = new GraphQLScalarType({
  name: "Block",
  serialize: (value) => value,
  parseValue: toBlock,
  // A variable inside its literal (`{ number: $n }`): api/graphql/blockArg.ts.
  parseLiteral: parseBlockLiteral,
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

/** A read's answer, its seal told to `keep` (the field's resolver signs its cursors with it). */
function sealOf<T>(answer: AtBlock<T>, keep: (seal: Seal | null | undefined) => void): AtBlock<T> {
  keep(answer.seal);
  return answer;
}

/**
 * A page of a list: the first `limit` of `rows` (which hold one more when a next page exists) as `json`, and its
 * pageInfo, whose endCursor is the cursor of its last item (null for an empty page, and on `leaderboard`'s last page:
 * `cursorOf` answers null).
 */
function pageOf<R, J>(rows: readonly R[], limit: number, json: (row: R) => J, cursorOf: (last: R) => string | null) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  // The cursor is signed (an HMAC) only when a document asks for it, once however many times it is asked.
  let endCursor: string | null | undefined = last === undefined ? null : undefined;
  return {
    items: items.map((row) => json(row)),
    pageInfo: {
      hasNextPage: rows.length > limit,
      get endCursor() {
        if (endCursor === undefined) endCursor = cursorOf(last!);
        return endCursor;
      },
    },
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
          const list = PAGED.locks.list(args);
          // Of this direction: the plan refused the other's before execution (plan.ts).
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "locks", list) : undefined;
          let seal: Seal | null | undefined;
          const all = await scope.read(async (at, signal) =>
            sealOf(await scope.rt.index.locksOf(owner, at, signal, sealAsk(cursor)), (s) => (seal = s)),
          );
          if (cursor) checkSeal(cursor, seal, "after");
          const { block, time } = await scope.at();
          const next = cursor ? cursor.seal : (seal ?? null);
          const ordered = descending ? [...all].reverse() : all;
          const rest = cursor
            ? ordered.filter((l) => (descending ? l.tokenId < cursor.after.tokenId : l.tokenId > cursor.after.tokenId))
            : ordered;
          return pageOf(
            rest,
            args.limit,
            (l) => lockJson(l, time),
            (l) =>
              scope.rt.cursors.encode({
                kind: "locks",
                list,
                block,
                seal: next,
                after: { tokenId: l.tokenId, descending },
              }),
          );
        },

        lockEvents: async (
          _: unknown,
          args: PageArgs & { where: { tokenId?: Decimal | null; account?: string | null } },
          { scope }: GraphqlContext,
        ) => {
          // One of tokenId or account, newest first: the plan refused anything else before execution (plan.ts).
          const { tokenId, account } = args.where;
          const of: EventsOf =
            tokenId != null
              ? { tokenId: BigInt(tokenId) }
              : { account: await scope.bounded(async () => address("where.account", account!)) };
          const list = PAGED.lockEvents.list(args);
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "events", list) : undefined;
          let seal: Seal | null | undefined;
          const page = { limit: args.limit + 1, after: cursor?.after ?? null, seal: sealAsk(cursor) };
          const rows = await scope.read(async (at, signal) =>
            sealOf(await scope.rt.index.events(of, at, page, signal), (s) => (seal = s)),
          );
          if (cursor) checkSeal(cursor, seal, "after");
          const { block } = await scope.at();
          const next = cursor ? cursor.seal : (seal ?? null);
          return pageOf(rows, args.limit, eventJson, (e) =>
            scope.rt.cursors.encode({
              kind: "events",
              list,
              block,
              seal: next,
              after: { block: e.blockNumber, logIndex: e.logIndex },
            }),
          );
        },

        leaderboard: async (
          _: unknown,
          args: { board: string; window?: string | null; limit: number; after?: string | null },
          { scope }: GraphqlContext,
        ) => {
          const of = boardOf(args);
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "board", of.list) : undefined;
          const ranking = await rankingAt(scope, of);
          const at = await scope.at();
          if (cursor) await scope.bounded(() => judgeBoardCursor(scope.rt, cursor, at.time, "after", scope.signal));
          const start = cursor === undefined ? 0 : ranking.after(cursor.after);
          const end = Math.min(start + args.limit + 1, ranking.accounts);
          const rest = Array.from({ length: Math.max(end - start, 0) }, (_, i) => start + i);
          // As REST's page (api/index/boards.ts, leaderboard.ts): the last page has no next cursor (endCursor null).
          const hasNextPage = rest.length > args.limit;
          const seal = cursor
            ? cursor.seal
            : hasNextPage
              ? boardSeal(scope.rt, ranking.computed, at.head.finalized)
              : null;
          // The last row's key read now (the cursor itself is signed only if asked: pageOf).
          const after = hasNextPage ? ranking.key(rest[args.limit - 1]!) : null;
          const page = pageOf(rest, args.limit, ranking.row, () =>
            after === null
              ? null
              : scope.rt.cursors.encode({ kind: "board", list: of.list, block: ranking.block, seal, after }),
          );
          return {
            board: of.board,
            window: of.window,
            windowStart: ranking.windowStart,
            accounts: ranking.accounts,
            ...page,
          };
        },

        rank: async (
          _: unknown,
          args: { board: string; address: string; window?: string | null },
          { scope }: GraphqlContext,
        ) => {
          const of = boardOf(args);
          const who = await scope.bounded(async () => address("address", args.address));
          const ranking = await rankingAt(scope, of);
          const i = ranking.position.get(who.toLowerCase());
          return {
            board: of.board,
            window: of.window,
            windowStart: ranking.windowStart,
            accounts: ranking.accounts,
            row: i === undefined ? null : ranking.row(i),
            above: i === undefined || i === 0 ? null : ranking.row(i - 1),
          };
        },

        activity: async (
          _: unknown,
          args: { kinds?: string[] | null; account?: string | null; limit: number; after?: string | null },
          { scope }: GraphqlContext,
        ) => {
          // Named and known, or none given: the plan refused anything else before execution (plan.ts).
          const kinds = args.kinds ?? null;
          const account =
            args.account == null ? null : await scope.bounded(async () => address("account", args.account!));
          const list = PAGED.activity.list({ kinds, account });
          const cursor = args.after ? scope.rt.cursors.decode(args.after, "events", list) : undefined;
          let seal: Seal | null | undefined;
          const page = { limit: args.limit + 1, after: cursor?.after ?? null, seal: sealAsk(cursor) };
          const rows = await scope.read(async (at, signal) =>
            sealOf(await scope.rt.protocol.activity({ kinds, account }, at, page, signal), (s) => (seal = s)),
          );
          if (cursor) checkSeal(cursor, seal, "after");
          const { block } = await scope.at();
          const next = cursor ? cursor.seal : (seal ?? null);
          return pageOf(
            rows,
            args.limit,
            (r) => {
              const json = activityJson(r);
              return { ...json, fields: JSON.stringify(json.fields) };
            },
            (e) =>
              scope.rt.cursors.encode({
                kind: "events",
                list,
                block,
                seal: next,
                after: { block: e.blockNumber, logIndex: e.logIndex },
              }),
          );
        },

        profile: async (_: unknown, args: { address: string }, { scope }: GraphqlContext) => {
          const who = await scope.bounded(async () => address("address", args.address));
          const lower = who.toLowerCase();
          const lifetime = DURATION_BOARDS.map((b) => scope.rt.durationBoards.memo(b, "lifetime"));
          const [rankings, ve] = await scope.computing([...lifetime, scope.rt.boards], async (at) => [
            await blockAnswers(scope.rt, lifetime, at),
            await blockAnswer(scope.rt, scope.rt.boards, at),
          ]);
          const boards = DURATION_BOARDS.map((b, j) => {
            const ranked = rankings[j]!;
            const i = ranked.position.get(lower);
            return {
              board: b,
              value: i === undefined ? 0n : ranked.rows.get(i)!.value,
              rank: i === undefined ? null : i + 1,
              unit: BOARD_UNIT[b],
            };
          });
          const at = await scope.at();
          const where = { block: at.block, time: at.time };
          const v = ve.position.get(lower);
          boards.push({
            board: "ve" as never,
            value: v === undefined ? 0n : ve.rows.get(v)!.ve,
            rank: v === undefined ? null : v + 1,
            unit: "wei",
          });
          const span = await scope.bounded(() => guarded(scope.rt, () => scope.rt.protocol.activitySpan(who, where)));
          return {
            address: who,
            boards,
            firstActivityBlock: span.value?.first ?? null,
            lastActivityBlock: span.value?.last ?? null,
          };
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
