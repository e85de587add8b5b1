/**
 * The `Block` and `BigInt` arguments' values (api/graphql/schema.ts's scalars): a BigInt as its canonical decimal
 * string, a block as one (exactly that block) or `{ number_gte, waitMs }`. A `Block` literal may hold variables as
 * its keys' values (`block: { number: $n }`, `{ number_gte: $b, waitMs: $w }`, as The Graph's clients write it):
 * declared `BigInt` or `Int` for `number` / `number_gte`, `Int` for `waitMs` (blockVariablesTyped, a validation
 * rule), their values judged as a literal's would be, before execution (api/graphql/plan.ts, blockOfLiteral).
 */
import {
  type ASTVisitor,
  getNamedType,
  Kind,
  type ObjectValueNode,
  print,
  type ValidationContext,
  type ValueNode,
  type VariableNode,
} from "graphql";
import { graphqlError } from "./errors";

/**
 * A BigInt argument's value as the resolvers get it: its canonical decimal string (not a JS bigint: graphql-jit
 * writes a document's literal arguments into the code it compiles, as JSON).
 */
export type Decimal = string;

/**
 * A Block argument's value: an exact block as a canonical decimal string, or `{ number_gte, waitMs }` for "this block
 * or later" — plain JSON, for graphql-jit.
 */
export type BlockArg = string | { number_gte: string; waitMs: number };

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const MAX_UINT256 = 2n ** 256n - 1n;
const MAX_WAIT_MS = 10_000;

export function toBig(value: unknown): Decimal {
  if (typeof value === "string" && DECIMAL.test(value) && BigInt(value) <= MAX_UINT256) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return String(value);
  throw graphqlError(
    "BAD_USER_INPUT",
    "A BigInt is a non-negative integer in canonical decimal form, up to 2^256 - 1.",
  );
}

const bad = (message: string) => graphqlError("BAD_USER_INPUT", message, { param: "block" });

export function toBlock(value: unknown): BlockArg {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return toBig(value);
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
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

/** What a variable inside a Block literal stands for, by the key it is the value of. */
type VariableValue = (node: VariableNode, key: string) => unknown;

/** A literal as plain JSON (objects, strings, integers; a variable as `variable` says), for toBlock. */
function literal(ast: ValueNode, variable: VariableValue, key = ""): unknown {
  if (ast.kind === Kind.OBJECT)
    return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value, variable, f.name.value)]));
  if (ast.kind === Kind.INT) return Number(ast.value);
  if (ast.kind === Kind.STRING) return ast.value;
  if (ast.kind === Kind.VARIABLE && key !== "") return variable(ast, key);
  throw bad("block is a BigInt or { number } or { number_gte, waitMs }; a variable for it all is declared Block.");
}

/**
 * The Block scalar's parseLiteral. Validation calls it with no variables, and graphql-jit when it compiles the document
 * with none ({}): a variable stands for a value of its key's type ("0" / 0), so the literal's shape is judged then; a
 * field's resolver never reads its `block` argument (the request's block is the plan's: api/graphql/scope.ts). With
 * the request's variables (graphql-js's executor, the plan) a variable given is its value; the plan judges a null or
 * absent one first (blockOfLiteral). Declared with one parameter: graphql-jit complains of a parseLiteral with two.
 */
export function parseBlockLiteral(ast: ValueNode, ...[variables]: [Record<string, unknown> | null | undefined]) {
  return toBlock(literal(ast, (node, key) => variables?.[node.name.value] ?? (key === "waitMs" ? 0 : "0")));
}

/** A root field's `block` literal that holds variables, judged with the request's coerced variables. */
export function blockOfLiteral(ast: ObjectValueNode, variables: Record<string, unknown>): BlockArg {
  return toBlock(
    literal(ast, (node, key) => {
      const value = variables[node.name.value];
      if (value === null || value === undefined) throw bad(`block's ${key} is $${node.name.value}, which is null.`);
      return value;
    }),
  );
}

/** The types a variable inside a Block literal may be declared, by its key (nullable or not). */
const DECLARABLE: Readonly<Record<string, readonly string[]>> = {
  number: ["BigInt", "Int"],
  number_gte: ["BigInt", "Int"],
  waitMs: ["Int"],
};

/**
 * A validation rule: a variable inside a Block literal is declared with its key's type (BigInt or Int for `number` and
 * `number_gte` — The Graph's clients declare `Int` — Int for `waitMs`), as graphql-js checks a variable's position
 * everywhere else (its own rule sees no type inside a scalar's literal). Its values are then the types' own (a BigInt
 * a canonical decimal string, an Int a 32-bit integer), judged as a literal's would be.
 */
export function blockVariablesTyped(context: ValidationContext): ASTVisitor {
  const inside = new Map<VariableNode, string>();
  return {
    Argument(node) {
      const type = context.getArgument()?.type;
      if (type === undefined || getNamedType(type).name !== "Block" || node.value.kind !== Kind.OBJECT) return;
      for (const f of node.value.fields) if (f.value.kind === Kind.VARIABLE) inside.set(f.value, f.name.value);
    },
    Document: {
      leave(document) {
        if (inside.size === 0) return;
        for (const op of document.definitions) {
          if (op.kind !== Kind.OPERATION_DEFINITION) continue;
          const declared = new Map(op.variableDefinitions?.map((d) => [d.variable.name.value, print(d.type)]));
          for (const usage of context.getRecursiveVariableUsages(op)) {
            const key = inside.get(usage.node);
            const type = declared.get(usage.node.name.value);
            // An unknown key is refused with the literal; an undeclared variable by graphql-js's own rule.
            if (key === undefined || type === undefined || DECLARABLE[key] === undefined) continue;
            if (DECLARABLE[key].includes(type.replace(/!$/, ""))) continue;
            context.reportError(
              bad(
                `Variable "$${usage.node.name.value}" of type "${type}" is block's ${key}: ` +
                  `declare it ${DECLARABLE[key].join(" or ")}.`,
              ),
            );
          }
        }
      },
    },
  };
}
