/**
 * The timestamp of a block an answer is pinned to (`?block=N`, or a cursor's block). Ve is a function of it, so it
 * must be the block's own: the index's head carries its timestamp (Ponder's checkpoint), a block in which the index
 * holds an event carries it on the event rows, and any other block is asked of the node (eth_getBlockByNumber).
 * Timestamps of finalized blocks never change and are kept (bounded, least recently used out). Heads the index
 * reported are remembered too (a cursor's block is usually an earlier head, often without events of its own), until
 * the index's head goes back below one of them — the sign of a reorg — when every unfinalized one is forgotten.
 */
import { BoundedMap } from "../cache/boundedMap";
import { type RpcClient, RpcError } from "../chain/rpc";
import { StateReadFailedError } from "../http/errors";
import type { IndexHead } from "./contract";

export class BlockClock {
  /** Finalized blocks' timestamps, least recently used out. */
  readonly #final: BoundedMap<bigint, bigint>;
  /** Heads the index reported, oldest out. */
  readonly #heads: BoundedMap<bigint, bigint>;
  #highestHead = -1n;
  /** The newest head the index reported (null before the first read). */
  #lastHead: IndexHead | null = null;
  /** The build the last head naming one named. */
  #build: string | undefined;
  constructor(
    readonly capacity = 50_000,
    readonly headCapacity = 4_096,
  ) {
    this.#final = new BoundedMap(capacity, "recency");
    this.#heads = new BoundedMap(headCapacity);
  }

  /**
   * Told when a head names another build than the last one did (a redeploy's views switch): the answers kept by
   * block number are the old build's rows. Block times are the chain's, and stay.
   */
  onBuildChanged: (() => void) | null = null;

  /** Remembers a head the index reported (its block and timestamp: Ponder's checkpoint). */
  sawHead(head: IndexHead): void {
    if (head.build !== undefined) {
      if (this.#build !== undefined && head.build !== this.#build) this.onBuildChanged?.();
      this.#build = head.build;
    }
    if (head.block < this.#highestHead) {
      this.#heads.clear(); // the head went back: a reorg replaced blocks we remember
    }
    this.#highestHead = head.block;
    this.#lastHead = head;
    if (!this.#heads.has(head.block)) {
      this.#heads.set(head.block, head.time);
    }
  }

  /** The newest head the index reported to this process, or null before the first read. */
  get lastHead(): IndexHead | null {
    return this.#lastHead;
  }

  /** What the index itself knows of `block`'s time, else the cache, else null (ask the node). */
  known(block: bigint, head: IndexHead, eventTime: bigint | null): bigint | null {
    this.sawHead(head);
    if (block === head.block) return head.time;
    if (eventTime !== null) return eventTime;
    const seen = this.#heads.get(block);
    if (seen !== undefined) return seen;
    return this.#final.get(block) ?? null;
  }

  /** What this process already knows of `block`'s time (a head it saw, a finalized block it read), else null. */
  cached(block: bigint): bigint | null {
    return this.#heads.get(block) ?? this.#final.peek(block) ?? null;
  }

  /** The block's timestamp from the node; kept when the block is final in the index's eyes. */
  async fromNode(block: bigint, head: IndexHead, rpc: RpcClient | null): Promise<bigint> {
    if (rpc === null) throw new StateReadFailedError("No RPC endpoint is configured.", { upstream: "unconfigured" });
    let raw: unknown;
    try {
      raw = await rpc.request({ method: "eth_getBlockByNumber", params: [`0x${block.toString(16)}`, false] });
    } catch (error) {
      throw new StateReadFailedError(
        "Reading the block's timestamp failed upstream.",
        // As the state and quote routes say it: how the call failed (timeout, unreachable, http, rpc, …).
        { upstream: error instanceof RpcError ? error.kind : "unreachable" },
        { cause: error },
      );
    }
    const stamp = (raw as { timestamp?: unknown } | null)?.timestamp;
    if (typeof stamp !== "string" || !/^0x(0|[1-9a-f][0-9a-f]{0,15})$/.test(stamp)) {
      throw new StateReadFailedError("The node has no such block.", { upstream: "invalid" });
    }
    const time = BigInt(stamp);
    if (block <= head.finalized) {
      this.#final.set(block, time);
    }
    return time;
  }
}
