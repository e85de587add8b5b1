/**
 * The cache of GraphQL documents, bounded by bytes: the document's text is the key a client chooses, so the cache's
 * size, not its number of entries, is what must be bounded. A cached document holds its parsed form, its validation
 * result and graphql-jit's compiled query (weakly keyed on the parsed document, api/graphql/jit.ts), so evicting the
 * document lets all three go. Least recently used goes first.
 *
 * A document's cost is estimated from its text, measured once executed (bench/graphql-document-bytes.ts, Node 24,
 * with V8's compilation cache off: api/graphql/jitMemory.ts): a typical page document (one list, 15 fields, 266
 * characters) retained 42 kB; one at the limits (30 aliased lists, ~900 tokens) 690 kB in 2,573 characters, and
 * 688 kB in 2,181 without spare spaces (315 B a character, the densest). BASE + PER_CHAR × length is above all
 * three (99, 891 and 757 kB), so 45 MB (50 less a tenth for failed parses) holds at least ~60 documents at the
 * limits and ~460 typical ones.
 *
 * A document enters on its second sighting (a doorkeeper, as TinyLFU's: the first only leaves a fingerprint of its
 * text). A flood of one-off documents, each new, is then compiled and let go, never cached: it neither keeps memory
 * after it (a flood from 400 addresses otherwise left the cache full of its ~0.8 MB documents, +80 MB kept) nor
 * pushes out the documents front ends repeat. A document asked for again is compiled once more and kept.
 */
import { createHash } from "node:crypto";
import { BoundedMap } from "../cache/boundedMap";
import { CacheStats } from "../observability/cacheStats";

/** Bytes a cached document is charged at least (its parse, validation and compiled query's fixed part). */
export const DOCUMENT_BASE_BYTES = 16 * 1024;
/** Bytes charged per character of its text (fields, arguments and aliases each compile to code). */
export const DOCUMENT_BYTES_PER_CHAR = 340;

/** The estimated bytes one cached document retains, from its text. */
export function documentCost(source: string): number {
  return DOCUMENT_BASE_BYTES + DOCUMENT_BYTES_PER_CHAR * source.length;
}

/** First sightings the document cache's doorkeeper remembers (a fingerprint each, ~100 bytes). */
export const DOORKEEPER_ENTRIES = 10_000;

/** A least-recently-used map whose entries are charged `cost(key)` bytes, holding at most `maxBytes` of them. */
export class ByteBoundedCache<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;
  /** Entries dropped to make room, since start. */
  evictions = 0;
  /** Lookups by `get` that found their key, and those that did not. */
  readonly stats = new CacheStats();

  /** Fingerprints of keys set once and not kept (the doorkeeper); undefined: every key is kept when set. */
  readonly #seen: BoundedMap<string, true> | undefined;
  /** Keys set for the first time and so not kept, since start. */
  declined = 0;

  readonly #onDecline: (() => void) | undefined;

  /**
   * `doorkeeper.entries`: how many first sightings to remember (a key is then kept only when set a second time);
   * `onDecline` is told each first sighting not kept.
   */
  constructor(
    readonly maxBytes: number,
    readonly cost: (key: string) => number = documentCost,
    doorkeeper?: { entries: number; onDecline?: () => void },
  ) {
    this.#seen = doorkeeper && doorkeeper.entries > 0 ? new BoundedMap(doorkeeper.entries, "recency") : undefined;
    this.#onDecline = doorkeeper?.onDecline;
  }

  /** The value, marked most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /**
   * Sets `key` (with a doorkeeper: only if its first sighting is remembered; else remembers it), then drops the least
   * recently used entries until the total fits; one larger than it all is not kept.
   */
  set(key: string, value: V): void {
    if (this.#seen !== undefined && !this.#entries.has(key)) {
      const mark = createHash("sha256").update(key).digest("base64url");
      if (!this.#seen.has(mark)) {
        this.#seen.set(mark, true);
        this.declined++;
        this.#onDecline?.();
        return;
      }
      this.#seen.delete(mark);
    }
    const bytes = this.cost(key);
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    while (this.#bytes > this.maxBytes) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, { bytes: number }];
      this.#entries.delete(oldest);
      this.#bytes -= entry.bytes;
      this.evictions++;
    }
  }

  delete(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    return true;
  }

  /** The estimated bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }
}
