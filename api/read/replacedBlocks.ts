/**
 * The block ranges recent reorgs replaced, each for a while (`holdMs`). The answers replicas share through Redis are
 * keyed by block number and time (api/read/sharedAnswers.ts), which a reorg's new branch repeats — on Base a height
 * keeps its timestamp —, so an answer shared for a replaced block before the reorg would be taken for the new branch's.
 * While a range is held, its blocks' answers are computed by the process itself, neither read from Redis nor written
 * to it; by the end of the hold every answer shared before the reorg has expired. Each replica hears the same reorg
 * (the index's NOTIFY) and holds the same range. At most `maxRanges` are held (the newest): a flood of reorgs is not
 * a flood of memory.
 */
export class ReplacedBlocks {
  readonly #ranges: { from: bigint; to: bigint; until: number }[] = [];

  constructor(
    readonly holdMs: number,
    readonly maxRanges = 64,
    readonly now: () => number = Date.now,
  ) {}

  /** Blocks `from` to `to` (inclusive) were replaced just now. */
  add(from: bigint, to: bigint): void {
    this.#prune();
    this.#ranges.push({ from, to: to < from ? from : to, until: this.now() + this.holdMs });
    if (this.#ranges.length > this.maxRanges) this.#ranges.shift();
  }

  /** Whether a held range holds `block`. */
  covers(block: bigint): boolean {
    if (this.#ranges.length === 0) return false;
    this.#prune();
    return this.#ranges.some((r) => r.from <= block && block <= r.to);
  }

  #prune(): void {
    const now = this.now();
    while (this.#ranges.length > 0 && this.#ranges[0]!.until <= now) this.#ranges.shift();
  }
}
