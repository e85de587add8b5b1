/**
 * The schema /graphql serves is Ponder's, with the conventions Ponder users know: pins what a client relies on
 * (field names, arguments, page shape, _meta) and that every column of the served tables is a field, so an
 * upgrade of ponder that moves or changes its builder fails here, while a column added to ponder.schema.ts
 * simply appears.
 */
import { getTableColumns } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { GRAPHQL_TABLES, ponderGraphql } from "../../api/graphql/ponderSchema";

const schema = ponderGraphql().schema;
type Fields = Record<string, { args: readonly { name: string }[]; type: { toString(): string } }>;
const fieldsOf = (name: string) => (schema.getType(name) as unknown as { getFields(): Fields }).getFields();
const argsOf = (type: string, field: string) => fieldsOf(type)[field]!.args.map((a) => a.name);

describe("Ponder's schema of the lock tables", () => {
  it("queries: a singular lookup by primary key, a plural page per table, and _meta; nothing else, no mutations", () => {
    expect(Object.keys(fieldsOf("Query")).sort()).toEqual(["_meta", "lock", "lockEvent", "lockEvents", "locks"]);
    expect(argsOf("Query", "lock")).toEqual(["tokenId"]);
    expect(argsOf("Query", "lockEvent")).toEqual(["id"]);
    const pageArgs = ["where", "orderBy", "orderDirection", "before", "after", "limit", "offset"];
    expect(argsOf("Query", "locks")).toEqual(pageArgs);
    expect(argsOf("Query", "lockEvents")).toEqual(pageArgs);
    expect(schema.getMutationType()).toBeUndefined();
    expect(schema.getSubscriptionType()).toBeUndefined();
  });

  it("pages: items, pageInfo (cursors) and totalCount", () => {
    expect(fieldsOf("Query").locks!.type.toString()).toBe("lockPage!");
    expect(Object.keys(fieldsOf("lockPage"))).toEqual(["items", "pageInfo", "totalCount"]);
    expect(Object.keys(fieldsOf("PageInfo"))).toEqual(["hasNextPage", "hasPreviousPage", "startCursor", "endCursor"]);
    expect(Object.keys(fieldsOf("Meta"))).toEqual(["status"]);
  });

  it("every column of each served table is a field; filters by Ponder's suffixes", () => {
    for (const [name, table] of Object.entries(GRAPHQL_TABLES)) {
      expect(Object.keys(fieldsOf(name)).sort(), name).toEqual(Object.keys(getTableColumns(table)).sort());
    }
    const filter = Object.keys(
      (schema.getType("lockFilter") as unknown as { getFields(): Record<string, unknown> }).getFields(),
    );
    expect(filter).toEqual(
      expect.arrayContaining(["AND", "OR", "owner", "owner_in", "tokenId_gt", "tokenId_lte", "amount_gte", "burned"]),
    );
    // Hex columns have no case-insensitive filters (Ponder stores them lower-case and matches any case).
    expect(filter).not.toContain("owner_contains_nocase");
  });
});
