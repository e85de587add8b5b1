/**
 * What a request of the index API spends of its client's `index` budget (api/http/rateLimit.ts), by the work it
 * makes: a read answered from what is already computed costs 1; rows cost more by the hundreds; a block's ranking or
 * stats that this process must compute (a past block not in memory) costs what about ten cached reads do. Declared
 * once here and documented from here (docs/operations.md "Computations and their budget").
 */
export const REQUEST_COST = {
  /** Any request of a limited prefix (charged before routing). */
  read: 1,
  /** Rows of a page beyond the first 250 cost one more per 250 (`limit=1000`: 1 + 3 = 4). */
  rowsPerUnit: 250,
  /**
   * A past block's ranking (ve or duration board) or stats not in this process's memory (api/read/blockMemo.ts):
   * charged when the route knows it computes, on top of `read`, so the request costs 10 in all; once per ranking a
   * request computes (a profile: up to 8). GraphQL's fields charge it to the `graphql` budget.
   */
  computedBlock: 9,
} as const;

/** The cost of an index request with `limit` rows asked for (before routing: what the URL says). */
export function pageCost(limit: string | undefined): number {
  if (limit === undefined || !/^[0-9]{1,7}$/.test(limit)) return REQUEST_COST.read;
  // Above the routes' maximum (1,000) the request is a 400; it costs what the largest page does.
  const rows = Math.min(Number(limit), 1_000);
  return REQUEST_COST.read + Math.max(0, Math.ceil(rows / REQUEST_COST.rowsPerUnit) - 1);
}
