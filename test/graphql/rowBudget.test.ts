/**
 * The row budget on the schema the service serves (Ponder's builder; no database needed): what a request may
 * ask for, counted before it runs, through aliases, fragments and variables.
 */
import { parse } from "graphql";
import { describe, expect, it } from "vitest";
import { GRAPHQL_LIMITS } from "../../api/graphql/limits";
import { ponderGraphql } from "../../api/graphql/ponderSchema";
import { checkRowBudget } from "../../api/graphql/rowBudget";

const schema = ponderGraphql().schema;
const limits = { maxListLimit: 1_000, maxRows: 2_000, maxOffset: 10_000 };
const check = (query: string, variables?: Record<string, unknown>, operationName?: string) => {
  const error = checkRowBudget({ schema, document: parse(query), variables, operationName, limits });
  return error && [error.extensions.code, error.message];
};

describe("row budget", () => {
  it("the service's limits are the documented ones", () => {
    expect(GRAPHQL_LIMITS).toMatchObject(limits);
  });

  it("keeps: lists within their limits and within the sum; singular lookups, _meta and introspection", () => {
    expect(check("{ a: locks(limit: 1000) { totalCount } b: lockEvents(limit: 1000) { items { id } } }")).toBeNull();
    expect(check('{ lock(tokenId: "1") { tokenId } _meta { status } __schema { types { name } } }')).toBeNull();
    // 40 default pages of 50 = 2,000.
    const forty = Array.from({ length: 40 }, (_, i) => `l${i}: locks { totalCount }`).join(" ");
    expect(check(`{ ${forty} }`)).toBeNull();
  });

  it("refuses: a limit or offset out of range, literal, variable or a variable's default", () => {
    expect(check("{ locks(limit: 1001) { totalCount } }")).toEqual([
      "BAD_PAGE",
      "locks: limit must be between 0 and 1000; got 1001.",
    ]);
    expect(check("query Q($n: Int) { x: lockEvents(limit: $n) { totalCount } }", { n: 2_000 })?.[1]).toBe(
      "x: limit must be between 0 and 1000; got 2000.",
    );
    expect(check("query Q($n: Int = 5000) { locks(limit: $n) { totalCount } }")?.[0]).toBe("BAD_PAGE");
    expect(check("query Q($n: Int = 5000) { locks(limit: $n) { totalCount } }", { n: 10 })).toBeNull();
    expect(check("{ locks(offset: 10001) { totalCount } }")?.[0]).toBe("BAD_PAGE");
    expect(check("{ locks(limit: -1) { totalCount } }")?.[0]).toBe("BAD_PAGE");
  });

  it("refuses: the sum over 2,000, counting defaults, fragments (inline and spread, once per spread) and the chosen operation", () => {
    const fortyOne = Array.from({ length: 41 }, (_, i) => `l${i}: locks { totalCount }`).join(" ");
    expect(check(`{ ${fortyOne} }`)?.[0]).toBe("MAX_ROWS");
    const spreads =
      "{ ...F ...F x: locks(limit: 1) { totalCount } } fragment F on Query { locks(limit: 1000) { totalCount } }";
    expect(check(spreads)?.[0]).toBe("MAX_ROWS");
    const inline =
      "{ ... on Query { a: locks(limit: 1000) { totalCount } b: locks(limit: 1000) { totalCount } } c: locks(limit: 1) { totalCount } }";
    expect(check(inline)?.[0]).toBe("MAX_ROWS");
    const two =
      "query Small { locks(limit: 1) { totalCount } } query Big { a: locks(limit: 1000) { totalCount } b: locks(limit: 1000) { totalCount } c: locks { totalCount } }";
    expect(check(two, undefined, "Small")).toBeNull();
    expect(check(two, undefined, "Big")?.[0]).toBe("MAX_ROWS");
  });

  it("leaves what cannot run to execution: no such operation, a variable of the wrong type", () => {
    expect(check("{ locks { totalCount } }", undefined, "Nope")).toBeNull();
    expect(check("query Q($n: Int) { locks(limit: $n) { totalCount } }", { n: "many" })).toBeNull();
  });
});
