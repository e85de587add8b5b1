/**
 * What graphql-jit's compilations leave behind once their document is gone, so that the bounded document cache
 * (api/graphql/documentCache.ts) bounds what new documents cost. Two things kept every compiled document's parts:
 *
 * V8's compilation cache: graphql-jit compiles each document's code with `new Function`, and V8 keeps the source
 * and bytecode of what it evaluated, keyed by the source, until memory runs short — 260 kB per document at the
 * limits, dropped only by a heap snapshot or memory pressure (bench/graphql-document-bytes.ts). The cache only
 * helps code evaluated twice from the same text; nothing here does that on a hot path (modules load once). It is
 * turned off for this process (V8 reads the flag at each lookup).
 *
 * graphql-jit memoizes helpers of its compiler with lodash.memoize, whose cache is a Map that never forgets: keyed on
 * objects each compilation makes (a field's origin paths, a document's field nodes), it kept 23 kB per document at
 * the limits reachable for good. lodash documents replacing `memoize.Cache`; a memo created from here on keys
 * objects weakly (an entry goes with its key) and primitives (a schema's field names: bounded) strongly. It must run
 * before graphql-jit loads, which creates its memos then: api/graphql/yoga.ts imports this module first.
 */
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--no-compilation-cache");

class WeakWhereObjects {
  readonly #weak = new WeakMap<object, unknown>();
  readonly #strong = new Map<unknown, unknown>();

  #of(key: unknown): Map<unknown, unknown> | WeakMap<object, unknown> {
    return (typeof key === "object" && key !== null) || typeof key === "function" ? this.#weak : this.#strong;
  }
  has(key: unknown): boolean {
    return (this.#of(key) as Map<unknown, unknown>).has(key);
  }
  get(key: unknown): unknown {
    return (this.#of(key) as Map<unknown, unknown>).get(key);
  }
  set(key: unknown, value: unknown): this {
    (this.#of(key) as Map<unknown, unknown>).set(key, value);
    return this;
  }
  delete(key: unknown): boolean {
    return (this.#of(key) as Map<unknown, unknown>).delete(key);
  }
  clear(): void {
    this.#strong.clear();
  }
}

// graphql-jit's own copy of lodash.memoize, as graphql-jit resolves it (not a dependency of ours).
const fromJit = createRequire(createRequire(import.meta.url).resolve("graphql-jit"));
(fromJit("lodash.memoize") as { Cache: unknown }).Cache = WeakWhereObjects;
