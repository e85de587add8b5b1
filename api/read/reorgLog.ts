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
   * The reorgs that replaced `block` as a client was sent it (from ≤ block ≤ to), as one: the lowest first replaced
   * block, or null when none did. It cannot tell a block sent before the reorg from the same number sent after it on
   * the new branch: in doubt, the block is taken as replaced. A block below `from` held no row of ours on the replaced
   * branch, so what a client was sent up to it holds: not replaced (its catch-up replays the new branch's blocks after it).
   */
  covering(block: bigint): { from: bigint } | null {
    let from: bigint | null = null;
    for (const r of this.#heard) {
      if (r.from <= block && block <= r.to && (from === null || r.from < from)) from = r.from;
    }
    return from === null ? null : { from };
  }
}
