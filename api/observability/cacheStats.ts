/**
 * Hits and misses of one cache, as plain numbers: incrementing a field costs a cached supply answer nothing
 * measurable, and /api/metrics reads them at scrape time (api/observability/cacheMetrics.ts). They are counted
 * by whatever knows what one request's lookup was: the cache itself, or the route that asks its cache twice
 * for one request (the supply routes' Node-level hot path, then their routed path).
 */
export class CacheStats {
  hits = 0;
  misses = 0;
}

/**
 * What the metrics read of one cache: its counts and, where it has one, how many entries it holds now, and for a
 * cache shared through Redis whether this process skips Redis now (its breaker open).
 */
export type CacheSource = { stats: CacheStats; entries?: () => number; breaker?: { readonly open: boolean } };
