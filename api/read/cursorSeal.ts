/**
 * The seals of a board page's cursors (api/read/cursor.ts). A board's ranking is computed once per block apart from
 * any page's statement (a memo: api/read/blockMemo.ts), so its seal must describe the rows the ranking was made of,
 * not whatever the index holds when a page asks: a seal read by a statement of its own after the ranking could be
 * another branch's (a reorg between the two, not yet heard by this process), and a cursor carrying it would pass the
 * check on that branch and page a list its first page was not of.
 *
 * So the seal is read with the rows (contract.ts RankingSealing). Every statement a ranking's rows come from — the ve
 * board's changes since its anchor (veLockDelta) or its whole ranking (holders), a duration board's changes or whole
 * ranking (boardDelta, board) — reads the block's seal in the same statement, one snapshot (a few dozen blocks' events
 * more, no statement more); Redis shares it with the rows (sharedAnswers.ts). An anchor is a finalized block's: no
 * seal covers it. A ranking made of those rows without a statement of its own (the board made ahead and taken,
 * patched: veBoard.ts) is sealed by the statement of its block's changes.
 *
 * One kind of ranking has no statement at its block: the ve board of a block whose changes were carried from an
 * earlier block's statement (quietBlocks.ts: none written since, or the lock events the notification carried). Its
 * basis (contract.ts SealBasis) is that statement's block and seal and the lock events carried since, and its cursors
 * carry that basis (contract.ts CarriedSeal: the carried lock events as a digest), read by no statement: the first
 * page, often the first reader of a new head, waits for none (issue 33, 6). A later page checks it in its own
 * snapshot with the one statement every later page pays: the digest of the seal's range up to the basis block (equal:
 * the same events there) and the lock events after it up to the cursor's block (equal to those carried). Both equal,
 * the index still holds the lock events the ranking was made of — the list the cursor pages; otherwise the ranking
 * was of a branch that snapshot no longer has, and the page is refused `reason: "reorg"`.
 *
 * A ranking at or below the finalized block its pin saw needs none: no statement.
 */
import type { CancelSignal } from "../chain/rpc";
import { basisLinesDigest, linesDigest } from "./basisLines";
import type { BoardSeal, CarriedSeal, RankingSealing, SealBasis } from "./contract";
import { type BoardCursor, checkSeal, reorgRefusal } from "./cursor";
import { guarded, type IndexRuntime } from "./runtime";

/** A ranking as its cursors are sealed: its block and time, and where its rows came from (undefined: not yet known). */
export type SealedRanking = { block: bigint; time: bigint; sealing: RankingSealing | undefined };

/**
 * The seal of `ranking` (a block's board), for its pages' next cursors; `finalized` the finalized block the request's
 * pin saw (a lower one is safe: a later page's statement that finds the block final checks the same).
 */
export function boardSeal(rt: IndexRuntime, ranking: SealedRanking, finalized: bigint): BoardSeal | null {
  if (ranking.block <= finalized) return null;
  const sealing = ranking.sealing;
  // Only a board made ahead is unsealed, until its block takes it; no page is served from it before (blockMemo.ts).
  if (sealing === undefined) throw new Error(`the ranking of block ${ranking.block} is not sealed yet`);
  if ("seal" in sealing) return sealing.seal;
  // An index that cannot read a seal hands none out: its next page could not check a carried basis, and would refuse.
  if (rt.index.seal === undefined) return null;
  return carriedSeal(sealing.basis);
}

/** A basis's seal as its cursors carry it, made once per basis (a ranking's; gone with it). */
const carried = new WeakMap<SealBasis, CarriedSeal>();
function carriedSeal(basis: SealBasis): CarriedSeal {
  let seal = carried.get(basis);
  if (seal === undefined) {
    seal = { basis: basis.block, seal: basis.seal, lines: basisLinesDigest(basis) };
    carried.set(basis, seal);
  }
  return seal;
}

/**
 * A later page's cursor judged (cursor.ts checkSeal): its range's digest read again at its block, now — or, for a
 * ranking's carried basis, what the snapshot holds of it (above); a cursor of a final block (no seal) costs nothing.
 */
export async function judgeBoardCursor(
  rt: IndexRuntime,
  cursor: BoardCursor,
  time: bigint,
  param: "cursor" | "after",
  signal?: CancelSignal,
): Promise<void> {
  const seal = cursor.seal;
  const read = rt.index.seal?.bind(rt.index);
  if (seal === null) return;
  const at = { block: cursor.block, time };
  if ("basis" in seal) {
    // An index that cannot read a seal never handed one out: a cursor with one is of another index.
    const now = read && (await guarded(rt, () => read(at, { from: seal.seal?.from ?? null }, signal, seal.basis)));
    const found = now?.value;
    const same =
      now?.inRange === true &&
      found != null &&
      linesDigest(found.lines) === seal.lines &&
      (seal.seal === null || (now.seal?.from === seal.seal.from && found.digest === seal.seal.digest));
    if (!same) throw reorgRefusal(cursor.block, param);
    return;
  }
  const now = read && (await guarded(rt, () => read(at, { from: seal.from }, signal)));
  checkSeal({ block: cursor.block, seal }, now?.seal, param);
}
