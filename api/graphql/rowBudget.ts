/**
 * How many rows a GraphQL operation may return, known before it runs: every list field (Ponder's plural
 * queries: those with a `limit` argument) returns at most `limit` rows (Ponder's default 50), nested lists
 * multiply, and a singular lookup at the root is one row. The sum is bounded, and each `limit` and `offset`
 * on its own, so no request reads or sends more than GraphqlLimits allows whatever its aliases and fragments.
 * Values come from the request's variables too, which is why this runs at execution, not validation.
 */

import { graphqlError } from "./graphqlErrors";
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLNamedType,
  type GraphQLSchema,
  getArgumentValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from "./graphqlJs";
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

/** The first bound the operation breaks, as a GraphQL error; null when it keeps them all (or cannot run anyway). */
export function checkRowBudget(input: RowBudgetInput): GraphQLError | null {
  const { schema, document, limits } = input;
  const operation = getOperationAST(document, input.operationName ?? undefined);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return null; // execution reports it
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], input.variables ?? {});
  if (coerced.errors) return null; // execution reports them
  const variables = coerced.coerced;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  let rows = 0;
  const walk = (
    set: SelectionSetNode,
    type: GraphQLNamedType | undefined | null,
    perParent: number,
    atRoot: boolean,
  ): GraphQLError | null => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        walk(selection.selectionSet, on, perParent, atRoot);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (fragment) walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), perParent, atRoot);
        continue;
      }
      const field = fieldOf(type, selection);
      if (!field) continue; // introspection (no rows), or unknown (validation already refused it)
      let each = 1;
      if (field.args.some((a) => a.name === "limit")) {
        let args: Record<string, unknown>;
        try {
          args = getArgumentValues(field, selection, variables);
        } catch {
          continue; // execution reports it
        }
        const limit = typeof args.limit === "number" ? args.limit : PONDER_DEFAULT_LIMIT;
        const offset = typeof args.offset === "number" ? args.offset : 0;
        const where = `${selection.alias?.value ?? selection.name.value}`;
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
        const error = walk(selection.selectionSet, getNamedType(field.type), perParent * Math.max(each, 1), false);
        if (error) return error;
      }
    }
    return null;
  };
  return walk(operation.selectionSet, root, 1, true);
}

function fieldOf(type: GraphQLNamedType | undefined | null, node: FieldNode) {
  if (!type || !(isObjectType(type) || isInterfaceType(type))) return undefined;
  if (node.name.value.startsWith("__")) return undefined;
  return type.getFields()[node.name.value];
}

const pageError = (message: string): GraphQLError => graphqlError("BAD_PAGE", message, { refused: true });
