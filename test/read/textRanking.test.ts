/**
 * A ranking computed whole, kept as the statement's text (api/read/textRanking.ts): its rows, keyset positions and rank
 * lookups equal those of the same rows as an array (api/read/veBoard.ts rankingOf), on rankings with ties, wide values
 * and odd counts; the empty answers; and what a kept board of it is counted at. (The statement's own text at every
 * block of a synthetic index: test/read/atBlock.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { HolderVe } from "../../api/read/contract";
import { textRanking } from "../../api/read/textRanking";
import { BOARD_ROW_BYTES, beforeInBoard, rankingOf, VeBoards } from "../../api/read/veBoard";
import { lcg } from "../support/lcg";
import { rowsOf } from "../support/rankingRows";

/** `n` holders in board order, with ties in ve (address breaks them) and values from 1 wei to past 2^128. */
function holders(n: number, seed: number): HolderVe[] {
  const rand = lcg(seed);
  const rows: HolderVe[] = Array.from({ length: n }, (_, i) => ({
    address: `0x${(i * 2_654_435_761 + seed).toString(16).padStart(40, "0").slice(-40)}` as HolderVe["address"],
    ve: rand() < 0.2 ? 10n ** 18n : BigInt(Math.floor(rand() * 1e9)) * 10n ** BigInt(Math.floor(rand() * 32)) + 1n,
    locked: BigInt(Math.floor(rand() * 1e12)) * 10n ** 18n,
    locks: 1 + Math.floor(rand() * 300),
  }));
  return rows.sort((a, b) => (beforeInBoard(a, b) ? -1 : beforeInBoard(b, a) ? 1 : 0));
}

/** The statement's text for `rows`: `owner ve locked locks` groups, space-separated. */
const textOf = (rows: readonly HolderVe[]) => rows.map((r) => `${r.address} ${r.ve} ${r.locked} ${r.locks}`).join(" ");

describe("a ranking kept as the statement's text", () => {
  for (const n of [1, 2, 3, 97, 2_000]) {
    it(`${n} holders: rows, keyset positions and rank lookups as the array's`, () => {
      const rows = holders(n, n);
      const text = textRanking(textOf(rows));
      const array = rankingOf(rows);
      expect(text.length).toBe(n);
      expect(rowsOf(text)).toEqual(rows);
      for (const [i, r] of rows.entries()) {
        expect(text.indexOf(r.address)).toBe(i);
        for (const key of [r, { ve: r.ve + 1n, address: r.address }, { ve: r.ve, address: "0x" }, { ...r, ve: 0n }]) {
          expect(text.after(key)).toBe(array.after(key));
        }
      }
      // Upper-case hex digits are the same owner; an unknown owner, a prefix or a value are none.
      const first = rows[0]!.address;
      expect(text.indexOf(`0x${first.slice(2).toUpperCase()}`)).toBe(0);
      expect(text.indexOf(`0x${"f".repeat(40)}`)).toBeUndefined();
      expect(text.indexOf(first.slice(0, 41))).toBeUndefined();
      expect(text.indexOf(String(rows[0]!.ve))).toBeUndefined();
      expect(text.get(n)).toBeUndefined();
      expect(text.get(-1)).toBeUndefined();
      expect(text.bytes).toBeGreaterThanOrEqual(textOf(rows).length);
    });
  }

  it("no holders (no text, or empty): no rows", () => {
    for (const empty of [null, undefined, ""]) {
      const ranking = textRanking(empty);
      expect(ranking.length).toBe(0);
      expect(ranking.get(0)).toBeUndefined();
      expect(ranking.after({ ve: 1n, address: "0x00" })).toBe(0);
      expect(ranking.indexOf(`0x${"0".repeat(40)}`)).toBeUndefined();
    }
  });

  it("a kept board is counted at its text's bytes, not at the row estimate", async () => {
    const rows = holders(2_000, 5);
    const head = { block: 10n, time: 20n, finalized: 9n };
    const answer = (value: ReturnType<typeof textRanking>) => ({ head, block: 10n, time: 20n, inRange: true, value });
    const asText = new VeBoards({ load: async () => answer(textRanking(textOf(rows))) });
    const asArray = new VeBoards({ load: async () => answer(rankingOf(rows)) });
    await asText.get({ block: 10n, time: 20n });
    await asArray.get({ block: 10n, time: 20n });
    expect(asArray.bytes).toBe(1024 + rows.length * BOARD_ROW_BYTES);
    expect(asText.bytes).toBe(1024 + textRanking(textOf(rows)).bytes!);
    expect(asText.bytes).toBeLessThan(asArray.bytes / 3);
  });
});
