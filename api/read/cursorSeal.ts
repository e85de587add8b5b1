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
 * basis (contract.ts SealBasis) is that statement's block and seal and the lock events carried since. Its seal is read
 * by one statement, which finds in its own snapshot both the block's seal and what it holds of the basis: the digest of
 * the seal's range up to the basis block (equal: the same events there) and the lock events after it (equal to those
 * carried). Both equal, the snapshot's lock events up to the block are those the ranking was made of, and its seal
 * describes it. Otherwise the ranking is of a branch that snapshot no longer has: its cursors carry a seal no
 * statement reads (REPLACED_DIGEST), so the next page is refused `reason: "reorg"`, as a reorg heard after the first
 * page would make it. Kept beside the ranking (a WeakMap: gone with it), read once per ranking.
 *
 * A ranking at or below the finalized block its pin saw needs none: no statement.
 */
import type { CancelSignal } from "../chain/rpc";
import type { RankingSealing, Seal, SealBasis } from "./contract";
import { type Cursor, checkSeal } from "./cursor";
import { guarded, type IndexRuntime } from "./runtime";

/** A ranking as its cursors are sealed: its block and time, and where its rows came from (undefined: not yet known). */
export type SealedRanking = { block: bigint; time: bigint; sealing: RankingSealing | undefined };

/**
 * The digest a cursor carries when its ranking's rows are found of a replaced branch: 96 bits no seal statement's
 * digest (an md5 cut to 96 bits) is expected to equal, so the cursor's next page is refused as a reorg's.
 */
export const REPLACED_DIGEST = "replaced-branch0";

/** A basis's seal as read: `inRange` false when its block was not committed yet. */
type Read = { seal: Seal | null; inRange: boolean };
const kept = new WeakMap<object, Promise<Read>>();

/**
 * The seal of `ranking` (a block's board), for its pages' next cursors; `finalized` the finalized block the request's
 * pin saw (a lower one is safe: a statement that finds the block final answers null).
 */
export async function rankingSeal(rt: IndexRuntime, ranking: SealedRanking, finalized: bigint): Promise<Seal | null> {
  if (ranking.block <= finalized) return null;
  const sealing = ranking.sealing;
  // Only a board made ahead is unsealed, until its block takes it; no page is served from it before (blockMemo.ts).
  if (sealing === undefined) throw new Error(`the ranking of block ${ranking.block} is not sealed yet`);
  if ("seal" in sealing) return sealing.seal;
  return basisSeal(rt, ranking, sealing.basis);
}

/** The seal of a ranking made ahead (a page's text made ahead, computeAhead.ts follow): read now if it takes one. */
export function warmSeal(rt: IndexRuntime, ranking: SealedRanking, finalized: bigint): void {
  if (ranking.sealing !== undefined) void rankingSeal(rt, ranking, finalized).catch(() => {});
}

/** The seal of a ranking carried from an earlier statement (see above), read once per ranking. */
async function basisSeal(rt: IndexRuntime, ranking: SealedRanking, basis: SealBasis): Promise<Seal | null> {
  const read = rt.index.seal?.bind(rt.index);
  // An index that cannot read a seal never hands one out.
  if (read === undefined) return null;
  for (let attempt = 0; ; attempt++) {
    let got = kept.get(ranking);
    if (got === undefined) {
      const at = { block: ranking.block, time: ranking.time };
      got = guarded(rt, () => read(at, { from: basis.seal?.from ?? null }, undefined, basis.block)).then((answer) => {
        const found = answer.value;
        const same =
          found !== null &&
          found.lines === basis.lines &&
          (basis.seal === null || (answer.seal?.from === basis.seal.from && found.digest === basis.seal.digest));
        if (same || !answer.inRange) return { seal: answer.seal ?? null, inRange: answer.inRange };
        // Of a branch this snapshot does not hold: a seal no statement reads, from the range's start as read (or the
        // basis's, or the block below: a cursor's range starts below its block).
        const from = answer.seal?.from ?? basis.seal?.from ?? ranking.block - 1n;
        return { seal: { from, digest: REPLACED_DIGEST }, inRange: true };
      });
      kept.set(ranking, got);
      // A failed read is read again by the next page, not kept.
      got.catch(() => kept.delete(ranking));
    }
    const { seal, inRange } = await got;
    // Read before its block's commit (the statement answers nothing out of range): read again once a page is asked
    // of the committed block; kept as null, that page's cursors would go unchecked.
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
