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

/** A ranking's seal as read: `inRange` false when its block was not committed yet (a ranking made ahead). */
type Read = { seal: Seal | null; inRange: boolean };
const kept = new WeakMap<object, Promise<Read>>();

/**
 * The seal of `ranking` (a block's board: its block and time), for its pages' next cursors; `finalized` the finalized
 * block the request's pin saw (a lower one is safe: a statement that finds the block final answers null).
 */
export async function rankingSeal(
  rt: IndexRuntime,
  ranking: { block: bigint; time: bigint },
  finalized: bigint,
): Promise<Seal | null> {
  const read = rt.index.seal?.bind(rt.index);
  if (ranking.block <= finalized || read === undefined) return null;
  for (let attempt = 0; ; attempt++) {
    let got = kept.get(ranking);
    if (got === undefined) {
      got = guarded(rt, () => read({ block: ranking.block, time: ranking.time }, { from: null })).then((answer) => ({
        seal: answer.seal ?? null,
        inRange: answer.inRange,
      }));
      kept.set(ranking, got);
      // A failed read is read again by the next page, not kept.
      got.catch(() => kept.delete(ranking));
    }
    const { seal, inRange } = await got;
    // Read ahead of its block's commit (computeAhead: the statement answers no seal out of range), the seal is read
    // again once a page is asked of the committed block; kept as null, that page's cursors would go unchecked.
    if (inRange || attempt > 0) return seal;
    if (kept.get(ranking) === got) kept.delete(ranking);
  }
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
