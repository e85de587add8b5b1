/**
 * The seals of a board page's cursors (api/read/cursor.ts). A board's ranking is computed once per block apart from
 * any page's statement (a memo: api/read/blockMemo.ts), so its seal is read by a statement of its own
 * (api/read/atBlock.ts `seal`: a range scan of the blocks a reorg could still replace), once per ranking and kept
 * beside it (a WeakMap: gone with it). A reorg heard forgets the rankings above the finalized block
 * (api/read/runtime.ts forgetOnReorg); the ranking computed again for the block reads its own seal. A ranking at or
 * below the finalized block its pin saw needs none: no statement.
 *
 * What is left: a ranking computed on the old branch whose seal is read after the reorg (the same moment, the
 * reorg unheard or not yet heard) carries the new branch's seal; a later page served from the same ranking is still
 * the same list, one served from a ranking computed again on the new branch is not caught.
 */
import type { CancelSignal } from "../chain/rpc";
import type { Seal } from "./contract";
import { type Cursor, checkSeal } from "./cursor";
import { guarded, type IndexRuntime } from "./runtime";

const kept = new WeakMap<object, Promise<Seal | null>>();

/**
 * The seal of `ranking` (a block's board: its block and time), for its pages' next cursors; `finalized` the finalized
 * block the request's pin saw (a lower one is safe: a statement that finds the block final answers null).
 */
export function rankingSeal(
  rt: IndexRuntime,
  ranking: { block: bigint; time: bigint },
  finalized: bigint,
): Promise<Seal | null> {
  const read = rt.index.seal?.bind(rt.index);
  if (ranking.block <= finalized || read === undefined) return Promise.resolve(null);
  let seal = kept.get(ranking);
  if (seal === undefined) {
    seal = guarded(rt, () => read({ block: ranking.block, time: ranking.time }, { from: null })).then(
      (answer) => answer.seal ?? null,
    );
    kept.set(ranking, seal);
    // A failed read is read again by the next page, not kept.
    seal.catch(() => kept.delete(ranking));
  }
  return seal;
}

/**
 * A later page's cursor judged (cursor.ts checkSeal): its range's digest read again at its block, now; a cursor of a
 * final block (no seal) costs nothing.
 */
export async function judgeBoardCursor(
  rt: IndexRuntime,
  cursor: Cursor,
  time: bigint,
  param: "cursor" | "after",
  signal?: CancelSignal,
): Promise<void> {
  const seal = cursor.seal;
  const read = rt.index.seal?.bind(rt.index);
  if (seal === null) return;
  // An index that cannot read a seal never handed one out: a cursor with one is of another index.
  const now = read && (await guarded(rt, () => read({ block: cursor.block, time }, { from: seal.from }, signal)));
  checkSeal(cursor, now?.seal, param);
}
