/**
 * The fields a document asks for once its fragments are expanded where they are spread: what graphql-jit compiles
 * (it inlines a fragment at each of its spreads, so the code it writes, and the time it takes to write it, grow with
 * this count) and what an executor visits. Neither the token limit nor the depth limit bounds it: a fragment spread
 * three times in the next one is 3^k paths in a document of k short fragments, and the depth rule leaves
 * introspection out (the standard introspection query is deeper than any page). The count is made in one pass, each
 * fragment counted once (memoised), so a document that claims millions of fields is refused in microseconds.
 */
import {
  type ASTVisitor,
  BREAK,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  visit,
} from "graphql";

/**
 * The expanded field count of each operation of the document, saturating at `cap` + 1. A fragment that spreads itself
 * (directly or not) counts 0 the second time: graphql-js's NoFragmentCycles rule refuses such a document anyway.
 */
export function expandedFields(
  selections: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  cap: number,
): number {
  const memo = new Map<string, number>();
  const open = new Set<string>();
  // `spread`: the fragments already expanded into the fields being collected (a selection set and the inline fragments
  // and spreads in it, as graphql-js's collectFields takes each name once there); each field's own set starts afresh.
  const count = (set: SelectionSetNode, spread: Set<string>): number => {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += 1 + (s.selectionSet ? count(s.selectionSet, new Set()) : 0);
      else if (s.kind === Kind.INLINE_FRAGMENT) n += count(s.selectionSet, spread);
      else {
        const name = s.name.value;
        if (spread.has(name)) continue;
        spread.add(name);
        let size = memo.get(name);
        if (size === undefined) {
          const fragment = fragments.get(name);
          if (fragment === undefined || open.has(name)) size = 0;
          else {
            open.add(name);
            // Counted on its own: at most what it adds at any spread (a spread there may have been taken before).
            size = count(fragment.selectionSet, new Set([name]));
            open.delete(name);
            memo.set(name, size);
          }
        }
        n += size;
      }
      if (n > cap) return cap + 1;
    }
    return n;
  };
  return count(selections, new Set());
}

/**
 * Whether the document reads the schema (a `__schema` or `__type` field anywhere, fragments included). Such a document
 * is executed by graphql-js, not compiled (api/graphql/yoga.ts): its answer is the schema's, small, while graphql-jit
 * took ~1 s to compile an 813-byte one of nested `__Type` fragments.
 */
export function asksIntrospection(document: DocumentNode): boolean {
  let found = introspective.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Field(node) {
        if (node.name.value === "__schema" || node.name.value === "__type") {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    });
    introspective.set(document, found);
  }
  return found;
}

const introspective = new WeakMap<DocumentNode, boolean>();

/** A validation rule: an operation asking for more than `max` expanded fields is reported through `onReject`. */
export function maxExpandedFieldsRule(
  max: number,
  onReject: (context: ValidationContext, error: GraphQLError) => void,
) {
  return (context: ValidationContext): ASTVisitor => {
    let fragments: Map<string, FragmentDefinitionNode> | undefined;
    return {
      OperationDefinition(node) {
        fragments ??= new Map(
          context
            .getDocument()
            .definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
            .map((d) => [d.name.value, d]),
        );
        const n = expandedFields(node.selectionSet, fragments, max);
        if (n > max)
          onReject(
            context,
            new GraphQLError(`The document asks for more than ${max} fields once its fragments are expanded.`, {
              nodes: node,
            }),
          );
      },
    };
  };
}
