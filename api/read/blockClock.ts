/**
 * The timestamp of a block an answer is pinned to (`?block=N`, or a cursor's block). Ve is a function of it, so it
 * must be the block's own: the index's head carries its timestamp (Ponder's checkpoint), a block in which the index
 * holds an event carries it on the event rows, and any other block is asked of the node (eth_getBlockByNumber).
 * Timestamps of finalized blocks never change and are kept (bounded, least recently used out). Heads the index
 * reported are remembered too (a cursor's block is usually an earlier head, often without events of its own), by
 * number only, which a reorg's new branch repeats with another time (a devnet's re-mined blocks; not Base, where a
 * height fixes its time): so they are forgotten from the first block a reorg may have replaced on every reorg the
 * process hears (`forgetFrom`: api/read/runtime.ts forgetOnReorg, the index's revert or its head going back, also when
 * the new head is at or past the old one), all of them when a read finds the index's head below the highest one seen
 * (a reorg nothing told), and a head reported again with another time replaces the one kept. A read that began before
 * a reorg was heard (`generation`) may report the replaced branch's head: its time is not kept.
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
  /** Moved on by each forgetting: a read begun before it may report a replaced head. */
  #generation = 0;
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

  /** What a read takes before it asks the index, and passes with the head it found (sawHead, known). */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Remembers a head the index reported (its block and timestamp: Ponder's checkpoint), read by a read that began at
   * `generation` (none: told, not read — a notification, or a test).
   */
  sawHead(head: IndexHead, generation?: number): void {
    if (head.build !== undefined) {
      if (this.#build !== undefined && head.build !== this.#build) this.onBuildChanged?.();
      this.#build = head.build;
    }
    // A reorg heard since the read began: the head it found may be the replaced branch's.
    if (generation !== undefined && generation !== this.#generation) return;
    if (head.block < this.#highestHead) {
      // The head went back: a reorg replaced blocks we remember, from a fork nothing told.
      this.#heads.clear();
      this.#generation++;
    }
    this.#highestHead = head.block;
    this.#lastHead = head;
    // The same number on another branch: its own time (the old one's would stay for good otherwise).
    if (this.#heads.peek(head.block) !== head.time) this.#heads.set(head.block, head.time);
  }

  /**
   * Forgets the heads' times from `block` up: a reorg may have replaced those blocks, whether the new head is below
   * the old one or not (api/read/runtime.ts forgetOnReorg). Finalized blocks' times stay (a reorg's first replaced block
   * is above Ponder's finalized one). Returns how many were forgotten.
   */
  forgetFrom(block: bigint): number {
    this.#generation++;
    let n = 0;
    for (const [at] of [...this.#heads]) {
      if (at < block) continue;
      this.#heads.delete(at);
      n++;
    }
    return n;
  }

  /** The newest head the index reported to this process, or null before the first read. */
  get lastHead(): IndexHead | null {
    return this.#lastHead;
  }

  /**
   * What the index itself knows of `block`'s time, else the cache, else null (ask the node). `generation`: as sawHead's,
   * taken before the read of `head` and `eventTime`.
   */
  known(block: bigint, head: IndexHead, eventTime: bigint | null, generation?: number): bigint | null {
    this.sawHead(head, generation);
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
