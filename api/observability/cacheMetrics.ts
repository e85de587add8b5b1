import type { CacheSource } from "./cacheStats";
import { renderFamily, type Sample } from "./exposition";

/**
 * The app's caches by name, read at scrape time: one family each for hits, misses and entries, told apart by
 * the `cache` label. Names are fixed by the code (a bounded label set); what a hit is, each cache says where
 * it registers.
 */
export class CacheMetrics {
  readonly #caches = new Map<string, CacheSource>();

  /** Registers `source` as `name`, replacing an earlier one of that name (an app built again on the same metrics). */
  register(name: string, source: CacheSource): void {
    this.#caches.set(name, source);
  }

  render(): string {
    const samples = (read: (source: CacheSource) => number | undefined): Sample[] =>
      [...this.#caches].flatMap(([cache, source]) => {
        const value = read(source);
        return value === undefined ? [] : [{ labels: { cache }, value }];
      });
    return [
      renderFamily(
        "api_cache_hits_total",
        "Lookups answered from the cache, by cache.",
        "counter",
        samples((s) => s.stats.hits),
      ),
      renderFamily(
        "api_cache_misses_total",
        "Lookups the cache could not answer (the value was read upstream, or the read was joined), by cache.",
        "counter",
        samples((s) => s.stats.misses),
      ),
      renderFamily(
        "api_cache_entries",
        "Entries the cache holds now, by cache.",
        "gauge",
        samples((s) => s.entries?.()),
      ),
      renderFamily(
        "api_cache_redis_breaker_open",
        "1 while this process skips Redis for the cache (Redis failed a load: a cool-down, then a probe), else 0.",
        "gauge",
        samples((s) => (s.breaker === undefined ? undefined : Number(s.breaker.open))),
      ),
    ].join("\n");
  }
}
