/**
 * How many rows a GraphQL operation may return, known before it runs: every list field (Ponder's plural
 * queries: those with a `limit` argument) returns at most `limit` rows (Ponder's default 50), nested lists
 * multiply, and a singular lookup at the root is one row. The sum is bounded, and each `limit` and `offset`
 * on its own, so no request reads or sends more than GraphqlLimits allows whatever its aliases and fragments.
 * Values come from the request's variables too, which is why this runs at execution, not validation.
 *
 * It reads the document and the schema by their shape only, never through graphql-js's functions: the schema
 * comes from Ponder's builder, whose copy of graphql-js is the CommonJS one under Node and the ES one under
 * Ponder's module runner (`npm start`), and graphql-js refuses objects of the other copy (instanceof checks).
 * The AST is plain data, and Kind plain strings.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";
import { graphqlError } from "./graphqlErrors";
import type { GraphqlLimits } from "./limits";

/** Ponder's `limit` when none is given (DEFAULT_LIMIT in ponder/dist/esm/graphql/index.js). */
export const PONDER_DEFAULT_LIMIT = 50;

export type RowBudgetInput = {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  limits: Pick<GraphqlLimits, "maxListLimit" | "maxRows" | "maxOffset">;
};

/** A named type as far as this walk needs it: an object type has fields, each with args and a type. */
type Shape = { getFields?: () => Record<string, { args: readonly { name: string }[]; type: unknown }> };

/** The operation executed: the named one, or the only one. */
function operationOf(document: DocumentNode, name?: string | null): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (name) return operations.find((o) => o.name?.value === name);
  return operations.length === 1 ? operations[0] : undefined;
}

/** A list, non-null, …: the type underneath. */
function namedShape(type: unknown): Shape | undefined {
  let t = type as { ofType?: unknown } | undefined;
  while (t?.ofType) t = t.ofType as { ofType?: unknown };
  return t as Shape | undefined;
}

/** The first bound the operation breaks, as a GraphQL error; null when it keeps them all (or cannot run anyway). */
export function checkRowBudget(input: RowBudgetInput): GraphQLError | null {
  const { schema, document, limits } = input;
  const operation = operationOf(document, input.operationName);
  const root = operation && (schema.getRootType(operation.operation) as Shape | null | undefined);
  if (!operation || !root) return null; // execution reports it
  const given = input.variables ?? {};
  const defaults = new Map(
    (operation.variableDefinitions ?? []).map((v) => [v.variable.name.value, v.defaultValue] as const),
  );
  /** An integer argument's value (a literal, or a variable given or defaulted); undefined when not an integer. */
  const intOf = (node: ValueNode | undefined): number | undefined => {
    if (node?.kind === Kind.INT) return Number(node.value);
    if (node?.kind !== Kind.VARIABLE) return undefined;
    const name = node.name.value;
    if (name in given) return typeof given[name] === "number" ? (given[name] as number) : undefined;
    return intOf(defaults.get(name));
  };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const typeNamed = (name: string) => schema.getType(name) as Shape | undefined;

  let rows = 0;
  const walk = (
    set: SelectionSetNode,
    type: Shape | undefined,
    perParent: number,
    atRoot: boolean,
  ): GraphQLError | null => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? typeNamed(selection.typeCondition.name.value) : type;
        const error = walk(selection.selectionSet, on, perParent, atRoot);
        if (error) return error;
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        // Validation has already refused unknown fragments and cycles.
        const fragment = fragments.get(selection.name.value);
        const error =
          fragment && walk(fragment.selectionSet, typeNamed(fragment.typeCondition.name.value), perParent, atRoot);
        if (error) return error;
        continue;
      }
      const field = fieldOf(type, selection);
      if (!field) continue; // introspection (no rows), or unknown (validation already refused it)
      let each = 1;
      if (field.args.some((a) => a.name === "limit")) {
        const argument = (name: string) => selection.arguments?.find((a) => a.name.value === name)?.value;
        const limit = intOf(argument("limit")) ?? PONDER_DEFAULT_LIMIT;
        const offset = intOf(argument("offset")) ?? 0;
        const where = selection.alias?.value ?? selection.name.value;
        if (limit < 0 || limit > limits.maxListLimit)
          return pageError(`${where}: limit must be between 0 and ${limits.maxListLimit}; got ${limit}.`);
        if (offset < 0 || offset > limits.maxOffset)
          return pageError(
            `${where}: offset must be between 0 and ${limits.maxOffset}; got ${offset}. Page with the after cursor instead.`,
          );
        each = limit;
        rows += perParent * limit;
      } else if (atRoot && selection.selectionSet) {
        rows += perParent; // a singular lookup (lock(tokenId:), lockEvent(id:)) or _meta
      }
      if (rows > limits.maxRows) {
        return graphqlError(
          "MAX_ROWS",
          `The lists of this request ask for more than ${limits.maxRows} rows together (the sum of their limits, ${PONDER_DEFAULT_LIMIT} when none is given); ask for fewer or page with the after cursor.`,
          { refused: true },
        );
      }
      if (selection.selectionSet) {
        const error = walk(selection.selectionSet, namedShape(field.type), perParent * Math.max(each, 1), false);
        if (error) return error;
      }
    }
    return null;
  };
  return walk(operation.selectionSet, root, 1, true);
}

function fieldOf(type: Shape | undefined, node: FieldNode) {
  if (node.name.value.startsWith("__") || typeof type?.getFields !== "function") return undefined;
  return type.getFields()[node.name.value];
}

const pageError = (message: string): GraphQLError => graphqlError("BAD_PAGE", message, { refused: true });
