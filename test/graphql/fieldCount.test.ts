// The expanded field count (api/graphql/fieldCount.ts): what the FIELD_LIMIT_EXCEEDED rule judges, counted as
// graphql-js collects fields (a fragment once per selection set), in one pass whatever the document claims.
import { getIntrospectionQuery, Kind, type OperationDefinitionNode, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { asksIntrospection, expandedFields } from "../../api/graphql/fieldCount";

const count = (query: string, cap = 1e9) => {
  const document = parse(query);
  const fragments = new Map(
    document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])),
  );
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
  return expandedFields(operation.selectionSet, fragments, cap);
};

describe("expandedFields", () => {
  it("counts every field, fragments expanded where they are spread", () => {
    expect(count("{ _meta { block head } }")).toBe(3);
    expect(count("{ a: _meta { ...M } b: _meta { ...M } } fragment M on Meta { block head }")).toBe(6);
    expect(count("{ _meta { ... on Meta { block } head } }")).toBe(3);
    // The standard introspection query fits well under the limit.
    expect(count(getIntrospectionQuery())).toBe(217);
  });

  it("takes a fragment once per selection set, as graphql-js collects fields", () => {
    expect(count("{ _meta { ...M ...M ... on Meta { ...M } } } fragment M on Meta { block head }")).toBe(3);
    // A chain of fragments each spreading the next twice in one set: 1 field, not 2^30.
    let chain = "fragment F30 on Meta { block }\n";
    for (let i = 29; i >= 1; i--) chain += `fragment F${i} on Meta { ...F${i + 1} ... on Meta { ...F${i + 1} } }\n`;
    expect(count(`{ _meta { ...F1 } }\n${chain}`)).toBe(2);
  });

  it("a fragment spread under fields at every level multiplies, and the count stops at the cap at once", () => {
    const nested = (k: number) => {
      let fragments = `fragment F${k} on __Type { name }\n`;
      for (let i = k - 1; i >= 1; i--)
        fragments += `fragment F${i} on __Type { name fields { name type { ...F${i + 1} ofType { ...F${i + 1} ofType { ofType { ...F${i + 1} } } } } } }\n`;
      return `{ __schema { types { ...F1 } } }\n${fragments}`;
    };
    expect(count(nested(5))).toBe(363);
    expect(count(nested(8))).toBe(9840);
    const started = performance.now();
    expect(count(nested(40), 1000)).toBe(1001);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it("a fragment that spreads itself counts nothing the second time (graphql-js refuses the document anyway)", () => {
    expect(count("{ _meta { ...A } } fragment A on Meta { block ...B } fragment B on Meta { head ...A }")).toBe(3);
  });
});

describe("asksIntrospection", () => {
  it("finds __schema or __type anywhere, fragments included; __typename is not introspection", () => {
    expect(asksIntrospection(parse("{ __schema { types { name } } }"))).toBe(true);
    expect(
      asksIntrospection(parse('{ _meta { block } ...Q } fragment Q on Query { __type(name: "Lock") { name } }')),
    ).toBe(true);
    expect(asksIntrospection(parse("{ _meta { block __typename } }"))).toBe(false);
  });
});
