/**
 * The GraphQL schema Ponder serves for its tables, built by Ponder's own builder, so this API answers the
 * queries Ponder users already write: `lock(tokenId:)`, `locks(where:, orderBy:, orderDirection:, limit:,
 * after:, before:, offset:) { items pageInfo totalCount }`, `lockEvent(id:)`, `lockEvents(…)` and `_meta`.
 *
 * Why the builder and not Ponder's `graphql()` middleware: the middleware only runs inside `ponder start` /
 * `ponder serve` (it reads the process-global database Ponder sets up and throws without it), serves GraphiQL
 * instead of GET queries, turns every status into 200, has no time or row limit, and writes
 * generated/schema.graphql on start. The builder is what the middleware itself serves, minus those: this
 * service puts its own transport, limits and database around it (api/graphql/endpoint.ts). Ponder's package
 * exports only the middleware, so the builder is loaded from its file in the pinned ponder (0.16.10, exact
 * in package.json); test/graphql/ponderSchema.test.ts pins its SDL, so an upgrade that moves or changes it
 * fails there first.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { GraphQLSchema } from "graphql";
import type { ReadonlyDrizzle } from "ponder";
import { lock, lockEvent } from "../../ponder.schema";

/** The tables served: the lock and its history. Other tables of the index stay out until chosen. */
export const GRAPHQL_TABLES = { lock, lockEvent };
export type GraphqlTables = typeof GRAPHQL_TABLES;

/**
 * A drizzle database over Ponder's tables, as Ponder's resolvers use it: built with GRAPHQL_TABLES (or a
 * superset) as its relational schema and `casing: "snake_case"` — Ponder's `db` from "ponder:api", or
 * drizzle over a connection whose search_path is the index's views schema (api/graphql/source.ts).
 */
export type IndexDrizzle = ReadonlyDrizzle<GraphqlTables>;

/** Ponder's query builder as its resolvers call it: `raw` for drizzle, `wrap` around a labelled query. */
export type PonderQb = {
  raw: IndexDrizzle;
  wrap<T>(...args: [(db: IndexDrizzle) => T] | [{ label: string }, (db: IndexDrizzle) => T]): T;
};

type PonderGraphqlModule = {
  buildGraphQLSchema(options: { schema: Record<string, unknown> }): GraphQLSchema;
  buildDataLoaderCache(qb: PonderQb): unknown;
};

/**
 * A file of the installed ponder package, found where Node resolves `ponder` from here (the package's exports
 * map would refuse the path, and Ponder's own module runner has no import.meta.resolve).
 */
function ponderFile(relative: string): string {
  for (const dir of createRequire(import.meta.url).resolve.paths("ponder") ?? []) {
    const file = path.join(dir, "ponder", relative);
    if (existsSync(file)) return pathToFileURL(file).href;
  }
  throw new Error(`ponder's ${relative} was not found`);
}

/** Ponder's schema builder, loaded once, when this module is: a ponder without it stops the process at start-up. */
const ponder = (await import(ponderFile("dist/esm/graphql/index.js"))) as PonderGraphqlModule;

/** A qb over one database (a connection in a snapshot, or Ponder's db): no retries, no logging of its own. */
export function qbOver(db: IndexDrizzle): PonderQb {
  return {
    raw: db,
    wrap: (...args: [unknown, unknown?]) => {
      const read = (args.length === 1 ? args[0] : args[1]) as (db: IndexDrizzle) => unknown;
      return read(db);
    },
  } as PonderQb;
}

export type PonderGraphql = {
  schema: GraphQLSchema;
  /** What Ponder's resolvers read from the GraphQL context: the qb and a per-request DataLoader cache. */
  contextFor(db: IndexDrizzle): { qb: PonderQb; getDataLoader: unknown };
};

export function ponderGraphql(): PonderGraphql {
  return {
    schema: ponder.buildGraphQLSchema({ schema: GRAPHQL_TABLES }),
    contextFor(db) {
      const qb = qbOver(db);
      return { qb, getDataLoader: ponder.buildDataLoaderCache(qb) };
    },
  };
}
