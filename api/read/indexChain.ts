/**
 * Whether the index is of the chain this API serves. Every statement of the read model reads Ponder's checkpoint row,
 * which names the chain the index was built for, and refuses itself when that is another chain (api/read/atBlock.ts,
 * IndexChainMismatchError): an API with NETWORK=base over a devnet's index would otherwise label the devnet's locks as
 * Base's. This is the runtime's memory of the last verdict, for what answers without a statement of its own: a head
 * as its commit was notified (GraphQL's `_meta`), an answer kept from an earlier read, `/ready`, the gauge.
 *
 * Only statements decide: a read of this chain's head clears the verdict, one of another chain's sets it. An answer
 * taken from memory decides nothing, so the verdict does not flap between a kept answer and a refused read.
 */
import type { CancelSignal } from "../chain/rpc";
import { CancelSource } from "../http/cancellation";
import type { ReadyState } from "../http/probes";
import type { IndexChainMismatchError } from "./contract";
import { READ_PROBE_MS } from "./readHealth";

export class IndexChain {
  #verdict: "unknown" | "this" | IndexChainMismatchError = "unknown";
  readonly #onChange: ((other: IndexChainMismatchError | null) => void) | undefined;

  /** `onChange`: told each change between this chain's index and another's (the first statement's verdict too). */
  constructor(onChange?: (other: IndexChainMismatchError | null) => void) {
    this.#onChange = onChange;
  }

  /** What the last statement found when it was another chain's index; null otherwise (none yet, or this chain's). */
  get other(): IndexChainMismatchError | null {
    return typeof this.#verdict === "string" ? null : this.#verdict;
  }

  /** Whether the last statement read found the index of this chain: only then is an answer made without one. */
  get confirmed(): boolean {
    return this.#verdict === "this";
  }

  /** A statement read the head of an index of this chain. */
  sawThis(): void {
    if (this.#verdict === "this") return;
    const was = this.#verdict;
    this.#verdict = "this";
    if (was !== "unknown") this.#onChange?.(null);
  }

  /** A statement found the index of another chain. */
  sawOther(error: IndexChainMismatchError): void {
    const was = this.#verdict;
    this.#verdict = error;
    if (typeof was === "string") this.#onChange?.(error);
  }
}

/**
 * /ready over `base`: 503 "index of another chain" while the index's statements find it another chain's. The verdict
 * is read again first (`probe`: one statement of the head, bounded by READ_PROBE_MS and cancelled after it), so a
 * replica no request reaches is ready again as soon as its views are this chain's index.
 */
export function chainReadiness(o: {
  chain: IndexChain;
  /** The head read as a statement whose verdict the chain check hears (runtime.ts ofChain). */
  probe: (signal: CancelSignal) => Promise<unknown>;
  base: () => Promise<ReadyState>;
  probeMs?: number;
}): () => Promise<ReadyState> {
  const probeMs = o.probeMs ?? READ_PROBE_MS;
  return async () => {
    if (o.chain.other !== null) {
      const signal = new CancelSource();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          signal.abort(new Error(`index read over ${probeMs} ms`));
          resolve();
        }, probeMs);
      });
      // A failed or late probe leaves the verdict as it was.
      await Promise.race([o.probe(signal).catch(() => {}), late]);
      clearTimeout(timer);
    }
    if (o.chain.other !== null) return { ready: false, reason: "index of another chain" };
    return o.base();
  };
}
