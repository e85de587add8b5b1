/**
 * Whether the index's rows are of the chain's canonical branch. Ponder rolls a reorg back down to its finalized
 * checkpoint; on a chain it has no finality value for (Base) that is 30 blocks deep, and a reorg below it is one
 * `ponder start` cannot handle: it logs "Encountered unrecoverable reorg" on every poll, stays alive, and its tables
 * stay on the orphaned branch. Nothing in the index says so, so the node is asked: every few seconds, the receipt of
 * the newest event at or below the index's finalized block — a block Ponder never rolls back, so a mismatch there is
 * not a reorg it is still handling. A receipt missing from a node that has that block, or one in another block, means
 * the index is on a replaced branch: every index answer is refused (api/read/runtime.ts guarded) until a check finds
 * the rows canonical again (the views switched to a schema re-indexed from the chain, docs/operations.md).
 *
 * A failed check (the node down or backed off, the index unreadable) leaves the verdict as it was: an outage is
 * neither an alarm nor its end.
 */
import type { RpcClient } from "../chain/rpc";
import type { AtBlock, FinalEvent } from "./contract";
import { PeriodicCheck } from "./periodicCheck";

/** How often the index is checked: one small statement and one RPC round trip. */
export const BRANCH_CHECK_MS = 5_000;

/**
 * How many checks in a row must find the index off the chain before it is refused: one node of a provider's pool
 * answering without the receipt (pruned, mid-restart) must not take every index answer down; a real orphan stays.
 */
export const BRANCH_CHECK_CONFIRMATIONS = 2;

/** What a check that found the index on a replaced branch saw. */
export type Orphaned = {
  /** The index's event the chain does not have where the index says. */
  event: FinalEvent;
  /** The index's head and finalized block (Ponder's checkpoints) when it was checked. */
  indexHead: bigint;
  finalized: bigint;
  /** The block the node has the event's transaction in (null: in none), and the node's head. */
  receiptBlock: bigint | null;
  chainHead: bigint;
};

export type BranchCheckOptions = {
  /** The index's newest event at or below its finalized block (LockIndex.finalEvent). */
  read: () => Promise<AtBlock<FinalEvent | null>>;
  /** The node (wrapped by the RPC back-off: a check during an outage fails at once, without a call). */
  rpc: RpcClient;
  /** Told each verdict that changed: the orphaned event, or null once the index is canonical again. */
  onChange?: (orphaned: Orphaned | null) => void;
};

type Receipt = { blockNumber: string } | null;

export class BranchCheck {
  readonly #o: BranchCheckOptions;
  #orphaned: Orphaned | null = null;
  /** Conclusive checks in a row that found the index off the chain (BRANCH_CHECK_CONFIRMATIONS refuse it). */
  #strikes = 0;
  readonly #checks = new PeriodicCheck(() => this.#checkOnce());

  constructor(options: BranchCheckOptions) {
    this.#o = options;
  }

  /** What the last conclusive check found the index on a replaced branch with; null while it is canonical. */
  get orphaned(): Orphaned | null {
    return this.#orphaned;
  }

  /** One check (joined by a second caller while it runs); a failure changes nothing. */
  check(): Promise<void> {
    return this.#checks.check();
  }

  /** Checks every `ms` until the returned function is called; the timer never holds the process. */
  start(ms: number = BRANCH_CHECK_MS): () => void {
    return this.#checks.start(ms);
  }

  async #checkOnce(): Promise<void> {
    const { head, value: event } = await this.#o.read();
    const orphaned = event === null ? null : await this.#ask(event, head.block, head.finalized);
    if (orphaned === undefined) return;
    this.#strikes = orphaned === null ? 0 : this.#strikes + 1;
    if (orphaned !== null && this.#orphaned === null && this.#strikes < BRANCH_CHECK_CONFIRMATIONS) return;
    const changed = (orphaned === null) !== (this.#orphaned === null);
    this.#orphaned = orphaned;
    if (changed) this.#o.onChange?.(orphaned);
  }

  /** The event against the node: Orphaned when the chain does not hold it there, null when it does, undefined: unsure. */
  async #ask(event: FinalEvent, indexHead: bigint, finalized: bigint): Promise<Orphaned | null | undefined> {
    const [receipt, chainHeadHex] = (await this.#o.rpc.batch([
      { method: "eth_getTransactionReceipt", params: [event.txHash] },
      { method: "eth_blockNumber", params: [] },
    ])) as [Receipt, string];
    const chainHead = BigInt(chainHeadHex);
    const receiptBlock = receipt === null ? null : BigInt(receipt.blockNumber);
    if (receiptBlock === event.block) return null;
    // A node behind the index (another node of a pool) has no receipt yet: no verdict until it has the block.
    if (receiptBlock === null && chainHead < event.block) return undefined;
    return { event, indexHead, finalized, receiptBlock, chainHead };
  }
}
