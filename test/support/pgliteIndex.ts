/**
 * A synthetic index in an in-memory PGlite, read by the API's read model (api/read/atBlock.ts) the way the API
 * process reads Postgres: each statement as text with $n placeholders (prepared), whole-index statements alike.
 */
import { PGlite } from "@electric-sql/pglite";
import { drizzle } from "drizzle-orm/pglite";
import { createLockIndex } from "../../api/read/atBlock";
import { type SyntheticIndex, writeSyntheticIndex } from "./syntheticIndex";

type Rows = Promise<{ rows: Record<string, unknown>[] }>;

/** Writes `index` to a new PGlite under `schema`; the reader, and the client for tests that also query it. */
export async function pgliteLockIndex(index: SyntheticIndex, schema: string) {
  const client = new PGlite();
  await writeSyntheticIndex((text, params) => client.query(text, params), schema, index);
  const reader = createLockIndex({
    db: drizzle(client),
    schema,
    prepared: ({ text, values }) => client.query(text, values) as Rows,
    wholeIndex: ({ text, values }) => client.query(text, values) as Rows,
  });
  return { client, reader };
}
