/**
 * The chain's own finalized block, as its node says (`eth_getBlockByNumber("finalized")`), for what the index answers
 * may promise caches. Ponder calls a block final 30 blocks under the head on Base (a minute); the chain finalizes it
 * when L1 does (about 15-20 minutes). An answer sent `immutable` for a day must be of a block no reorg can replace, so
 * an answer is immutable only at a block both have finalized (api/index/answer.ts); between the two it is cached like
 * the head's (2 s) and revalidated by its ETag.
 *
 * Read every few seconds through the RPC back-off. A failed read keeps the last block known: the finalized block only
 * moves up, so an old figure promises less, never more. Until a first read succeeds (or when the node has no
 * `finalized` block) nothing is immutable.
 */
import type { RpcClient } from "../chain/rpc";
import { PeriodicCheck } from "./periodicCheck";

/** How often the node is asked: one small call. */
export const CHAIN_FINALITY_MS = 5_000;

const HEX_QUANTITY = /^0x(0|[1-9a-fA-F][0-9a-fA-F]*)$/;

export class ChainFinality {
  readonly #rpc: RpcClient;
  #block: bigint | null = null;
  readonly #reads = new PeriodicCheck(() => this.#read());

  constructor(rpc: RpcClient) {
    this.#rpc = rpc;
  }

  /** The newest block the node has called finalized; null before the first answer that had one. */
  get block(): bigint | null {
    return this.#block;
  }

  /** One read (joined by a second caller while it runs); a failure changes nothing. */
  check(): Promise<void> {
    return this.#reads.check();
  }

  /** Reads now, then every `ms` until the returned function is called; the timer never holds the process. */
  start(ms: number = CHAIN_FINALITY_MS): () => void {
    void this.check();
    return this.#reads.start(ms);
  }

  async #read(): Promise<void> {
    const block = (await this.#rpc.request({ method: "eth_getBlockByNumber", params: ["finalized", false] })) as {
      number?: unknown;
    } | null;
    const hex = block?.number;
    if (typeof hex !== "string" || !HEX_QUANTITY.test(hex)) return;
    const number = BigInt(hex);
    // A node of a pool that is behind answers an older block: keep the newest (finality never goes back).
    if (this.#block === null || number > this.#block) this.#block = number;
  }
}

/**
 * The newest block an answer may call final: Ponder's finalized checkpoint, and where the node is watched also the
 * chain's finalized block (none known yet: no block).
 */
export function finalUpTo(ponderFinalized: bigint, chain: ChainFinality | null): bigint {
  if (chain === null) return ponderFinalized;
  const onChain = chain.block;
  if (onChain === null) return -1n;
  return onChain < ponderFinalized ? onChain : ponderFinalized;
}
