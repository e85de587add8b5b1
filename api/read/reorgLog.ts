/**
 * The reorgs this process heard (api/read/runtime.ts forgetOnReorg: Ponder's revert over NOTIFY, or the head going
 * back), kept so a stream resumed with `Last-Event-ID` can be told of one that happened while it was away: an event's
 * id is a block number, which the new branch repeats, so a resumed client's last block may be an orphan's.
 */

/** One reorg heard: blocks `lo`…`to` may have been replaced (`to` the head before it), the first with rows of ours `from`. */
export type HeardReorg = { lo: bigint; from: bigint; to: bigint };

export class ReorgLog {
  readonly #heard: HeardReorg[] = [];

  /** At most `max` reorgs are kept, the newest. */
  constructor(readonly max = 64) {}

  heard(reorg: HeardReorg): void {
    if (reorg.lo > reorg.to) return;
    this.#heard.push(reorg);
    if (this.#heard.length > this.max) this.#heard.shift();
  }

  /**
   * The reorgs that may have replaced `block` as a client was sent it (lo ≤ block ≤ to), as one: the lowest block that
   * may differ (`lo`) and the lowest first replaced block with rows of ours (`from`), or null when none may have. A
   * block between `lo` and `from` held no row of ours on the replaced branch, but the new branch may hold some there
   * (a transaction included again a block earlier): a resumed stream is replayed from `lo`. It cannot tell a block sent
   * before the reorg from the same number sent after it on the new branch: in doubt, the block is taken as replaced.
   */
  covering(block: bigint): { lo: bigint; from: bigint } | null {
    let found: { lo: bigint; from: bigint } | null = null;
    for (const r of this.#heard) {
      if (r.lo <= block && block <= r.to) {
        found =
          found === null ? { lo: r.lo, from: r.from } : { lo: min(found.lo, r.lo), from: min(found.from, r.from) };
      }
    }
    return found;
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/**
 * The lowest block a reorg told with head `block` may have replaced: the one after the finalized block its revert
 * named, or, where only the head going back showed it (no revert heard), the new head.
 */
export function replacedFrom(block: bigint, reverted: { finalized: bigint } | undefined): bigint {
  return reverted ? reverted.finalized + 1n : block;
}
