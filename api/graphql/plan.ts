/**
 * What a request asks of the index, judged before any resolver runs: the one block it is answered at and the rows it
 * may read. Every root field that names a block — its `block` argument, or the block its `after` cursor carries —
 * must name the same one, at or above every `number_gte` (else BAD_USER_INPUT); with none named, the request is
 * answered at the index's head, read once. The rows are the sum of the lists' `limit`s, one per `lock` and `rank`, 8
 * per `profile` (a row per board), at most GRAPHQL_LIMITS.rows. A root field that `@skip` / `@include` leaves out is
 * not run, so it names and costs nothing. The arguments a resolver would refuse are refused here too (a board, a
 * window, an address, activity's kinds, a cursor of another list or of `locks`' other direction): a client's mistake
 * is a request error, 400 to a graphql-response+json client, never a field's.
 */
import {
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLError,
  GraphQLIncludeDirective,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  type InlineFragmentNode,
  Kind,
  type SelectionSetNode,
} from "graphql";
import { BadParamsError } from "../http/errors";
import { PARAM_PATTERNS, parseAddress } from "../http/params";
import type { BoardWindow, DurationBoard } from "../read/contract";
import { type Cursor, type CursorCodec, cursorList } from "../read/cursor";
import { ACTIVITY_KINDS } from "../read/shapes";
import { type BlockArg, blockOfLiteral } from "./blockArg";
import { graphqlError } from "./errors";
import { GRAPHQL_LIMITS } from "./limits";

export type { BlockArg } from "./blockArg";

/** The block a request names (and which argument named it), and the rows it asks for. */
export type Plan = {
  block: { value: bigint; param: "block" | "cursor" } | null;
  /** The highest `block: { number_gte }` of the request's fields, with the longest `waitMs` among them. */
  minBlock: { value: bigint; waitMs: number } | null;
  rows: number;
};

/** The variables do not fit their declared types (graphql-js's errors, each naming the variable): BAD_USER_INPUT. */
export class VariablesRefused extends Error {
  override name = "VariablesRefused";
  constructor(readonly errors: readonly GraphQLError[]) {
    super(errors.map((e) => e.message).join("; "));
  }
}

/** A duration board's window when `leaderboard` / `rank` name none (REST's `?window=` default). */
export const DEFAULT_WINDOW = "7d";

type Paged<K extends Cursor["kind"], A> = { kind: K; list: (args: A) => string };
const paged = <K extends Cursor["kind"], A>(kind: K, list: (args: A) => string): Paged<K, A> => ({ kind, list });

/**
 * Each paged root field: its cursors' kind, and the list its arguments pick (api/read/cursor.ts cursorList) — the
 * plan judges an `after` by it, and the field's resolver (api/graphql/schema.ts) signs and judges its cursors by it.
 */
export const PAGED = {
  locks: paged("locks", (a: { where: { owner: string } }) => cursorList.locks(a.where.owner)),
  lockEvents: paged("events", (a: { where: { tokenId?: string | null; account?: string | null } }) =>
    a.where.tokenId != null ? cursorList.lock(a.where.tokenId) : cursorList.account(a.where.account ?? ""),
  ),
  leaderboard: paged("board", (a: { board: string; window?: string | null }) =>
    a.board === "ve" ? cursorList.ve : cursorList.board(a.board, a.window ?? DEFAULT_WINDOW),
  ),
  activity: paged("events", (a: { kinds?: readonly string[] | null; account?: string | null }) =>
    cursorList.activity(a.kinds ?? null, a.account ?? null),
  ),
};
const PAGED_FIELDS: Readonly<Record<string, Paged<Cursor["kind"], never> | undefined>> = PAGED;

export function planOf(
  args: Pick<ExecutionArgs, "schema" | "document" | "variableValues" | "operationName">,
  cursors: CursorCodec,
): Plan {
  const operation = getOperationAST(args.document, args.operationName);
  // No operation to run: graphql-js answers that itself.
  if (operation?.operation !== "query") return { block: null, minBlock: null, rows: 0 };
  const coerced = getVariableValues(args.schema, operation.variableDefinitions ?? [], args.variableValues ?? {});
  // Refused here, as graphql-js's request errors: graphql-jit's own carry no code and would answer INTERNAL_ERROR.
  if (coerced.errors) throw new VariablesRefused(coerced.errors);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of args.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  let block: Plan["block"] = null;
  let minBlock: Plan["minBlock"] = null;
  let rows = 0;
  const name = (value: bigint, param: "block" | "cursor") => {
    if (block !== null && block.value !== value) {
      throw graphqlError(
        "BAD_USER_INPUT",
        `Every field of one request is answered at one block: ${block.param} names block ${block.value}, ${param} ` +
          `names block ${value}.`,
        { blocks: [block.value.toString(), value.toString()] },
      );
    }
    block ??= { value, param };
  };
  for (const field of rootFields(operation.selectionSet, fragments, coerced.coerced)) {
    const def = queryFields(args.schema)[field.name.value];
    if (def === undefined) continue; // __typename, __schema, __type
    // A literal holding variables (`{ number: $n }`): its values judged first, with their own messages (the scalar
    // takes a null one on trust, and graphql-js's getArgumentValues would name none of them).
    const literal = field.arguments?.find((a) => a.name.value === "block")?.value;
    const judged = literal?.kind === Kind.OBJECT ? blockOfLiteral(literal, coerced.coerced) : undefined;
    const values = getArgumentValues(def, field, coerced.coerced);
    const at = judged ?? (values.block as BlockArg | null | undefined);
    if (typeof at === "string")
      name(BigInt(at), "block"); // api/graphql/schema.ts Decimal
    else if (at !== undefined && at !== null) {
      const gte = BigInt(at.number_gte);
      const before = minBlock as Plan["minBlock"];
      minBlock = {
        value: before === null || gte > before.value ? gte : before.value,
        waitMs: Math.max(before?.waitMs ?? 0, at.waitMs),
      };
    }
    // The arguments a resolver would refuse, refused here, before any field runs (a 400 to a graphql-response+json
    // client, as the limits are): a board and window (api/graphql/boards.ts), a history's one subject, its order.
    if (field.name.value === "leaderboard" || field.name.value === "rank") {
      boardOf(values as { board: string; window?: string | null });
    }
    judgeAddresses(field.name.value, values);
    if (field.name.value === "activity") judgeKinds(values.kinds as readonly string[] | null | undefined);
    if (field.name.value === "lockEvents") {
      const where = values.where as { tokenId?: string | null; account?: string | null };
      if ((where.tokenId == null) === (where.account == null)) {
        throw graphqlError("BAD_USER_INPUT", "where takes exactly one of tokenId or account.", { param: "where" });
      }
      // The read model serves events newest first only.
      if (values.orderDirection !== "desc") {
        throw graphqlError("BAD_USER_INPUT", "lockEvents are served newest first only (orderDirection: desc).", {
          param: "orderDirection",
        });
      }
    }
    const paged = PAGED_FIELDS[field.name.value];
    if (paged !== undefined) {
      const limit = values.limit as number;
      if (!Number.isInteger(limit) || limit < 1 || limit > GRAPHQL_LIMITS.listLimit) {
        throw graphqlError("BAD_USER_INPUT", `limit must be 1 to ${GRAPHQL_LIMITS.listLimit}; got ${limit}.`, {
          param: "limit",
        });
      }
      rows += limit;
      if (typeof values.after === "string") {
        const cursor = cursorOf(cursors, values.after, paged.kind, paged.list(values as never));
        // A `locks` cursor pages one direction: the other's would skip rows or repeat them.
        if (cursor.kind === "locks" && cursor.after.descending !== (values.orderDirection === "desc")) {
          throw graphqlError("BAD_USER_INPUT", "after is a cursor of the other orderDirection.", { param: "after" });
        }
        name(cursor.block, "cursor");
      }
    } else if (field.name.value === "lock" || field.name.value === "rank") {
      rows += 1;
    } else if (field.name.value === "profile") {
      rows += 8; // one per board
    }
  }
  // An answer at the named block would describe one older than the request accepts (REST: a `block` below `minBlock`).
  // (Set in name(), which TypeScript's narrowing does not follow.)
  const named = block as Plan["block"];
  const least = minBlock as Plan["minBlock"];
  if (named !== null && least !== null && named.value < least.value) {
    const param = named.param === "cursor" ? "after" : "block";
    throw graphqlError(
      "BAD_USER_INPUT",
      `${param} names block ${named.value}, below number_gte ${least.value}: the answer would describe an older block.`,
      { param, minBlock: least.value.toString() },
    );
  }
  if (rows > GRAPHQL_LIMITS.rows) {
    throw graphqlError(
      "ROW_LIMIT_EXCEEDED",
      `The request asks for ${rows} rows (its lists' limits, one per lock and rank, 8 per profile); at most ${GRAPHQL_LIMITS.rows}.`,
      { rows, max: GRAPHQL_LIMITS.rows },
    );
  }
  return { block, minBlock, rows };
}

function cursorOf(cursors: CursorCodec, raw: string, kind: Cursor["kind"], list: string): Cursor {
  try {
    return cursors.decode(raw, kind, list);
  } catch {
    throw graphqlError("BAD_USER_INPUT", "after is not a cursor this API handed out for this list.", {
      param: "after",
    });
  }
}

const queryFields = (schema: GraphQLSchema) => schema.getQueryType()?.getFields() ?? {};

/**
 * The root fields of the operation that execution runs, through fragments and inline fragments: a field or fragment
 * that `@skip(if: true)` or `@include(if: false)` leaves out (a literal or a variable) is left out here too, as
 * graphql-js's collectFields does, so it names no block and counts no rows.
 */
function* rootFields(
  set: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  seen = new Set<string>(),
): Generator<FieldNode> {
  for (const s of set.selections) {
    if (!included(s, variables)) continue;
    if (s.kind === Kind.FIELD) yield s;
    else if (s.kind === Kind.INLINE_FRAGMENT) yield* rootFields(s.selectionSet, fragments, variables, seen);
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const fragment = fragments.get(s.name.value);
      if (fragment) yield* rootFields(fragment.selectionSet, fragments, variables, seen);
    }
  }
}

/** graphql-js's shouldIncludeNode: `@skip(if: true)` leaves a selection out, then `@include(if: false)` does. */
function included(node: FieldNode | InlineFragmentNode | FragmentSpreadNode, variables: Record<string, unknown>) {
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}

/** A board and window the arguments name, judged: the ve board (no window) or a duration board and its window. */
export type BoardOf =
  | { board: "ve"; window: null; list: string }
  | { board: DurationBoard; window: BoardWindow; list: string };

const BOARD_RE = new RegExp(PARAM_PATTERNS.board);
const WINDOW_RE = new RegExp(PARAM_PATTERNS.window);

/**
 * The board the arguments name. As REST: an unknown board is refused (REST: 404 naming the boards), a bad window too;
 * the ve board takes no window (REST's `?window=` on /leaderboards/ve is an unknown parameter), so one given is
 * refused rather than ignored.
 */
export function boardOf(args: { board: string; window?: string | null }): BoardOf {
  const list = PAGED.leaderboard.list(args);
  if (args.board === "ve") {
    if (args.window != null) {
      throw graphqlError("BAD_USER_INPUT", "The ve board has no window: omit window.", { param: "window" });
    }
    return { board: "ve", window: null, list };
  }
  if (!BOARD_RE.test(args.board)) {
    throw graphqlError("BAD_USER_INPUT", `No leaderboard ${args.board.slice(0, 40)}.`, { param: "board" });
  }
  const window = args.window ?? DEFAULT_WINDOW;
  if (!WINDOW_RE.test(window)) {
    throw graphqlError("BAD_USER_INPUT", "window must be 24h, 7d, 30d or lifetime.", { param: "window" });
  }
  return { board: args.board as DurationBoard, window: window as BoardWindow, list };
}

/** Each root field's address arguments: the argument's path in `values`, and the name its error gives it. */
const ADDRESSES: Readonly<Record<string, readonly (readonly [string, string | null, string])[]>> = {
  locks: [["where", "owner", "where.owner"]],
  lockEvents: [["where", "account", "where.account"]],
  rank: [["address", null, "address"]],
  profile: [["address", null, "address"]],
  activity: [["account", null, "account"]],
};

/** A field's addresses, judged as its resolver would (0x and 40 hex digits; a mixed-case one its EIP-55 checksum). */
function judgeAddresses(field: string, values: Record<string, unknown>): void {
  for (const [arg, key, param] of ADDRESSES[field] ?? []) {
    const outer = values[arg];
    const raw = key === null ? outer : (outer as Record<string, unknown> | null | undefined)?.[key];
    if (typeof raw !== "string") continue;
    try {
      parseAddress(param, raw);
    } catch (error) {
      if (error instanceof BadParamsError) throw graphqlError("BAD_USER_INPUT", error.message, { param });
      throw error;
    }
  }
}

/** activity's kinds, as REST's `kind=`: none at all is not "every kind" (nor an empty feed), an unknown one refused. */
function judgeKinds(kinds: readonly string[] | null | undefined): void {
  if (kinds == null) return;
  if (kinds.length === 0)
    throw graphqlError("BAD_USER_INPUT", "kinds names no kind: omit it for every kind.", { param: "kinds" });
  const unknown = kinds.find((k) => !(ACTIVITY_KINDS as readonly string[]).includes(k));
  if (unknown !== undefined)
    throw graphqlError("BAD_USER_INPUT", `kind ${unknown.slice(0, 40)} is not an activity kind.`, { param: "kinds" });
}
