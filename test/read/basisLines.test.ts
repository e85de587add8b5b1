/**
 * A carried basis's digest made from the running MD5 it carries on (api/read/basisLines.ts) is the digest of its whole
 * text, which a later page's check computes from what the index holds (api/read/cursorSeal.ts judgeBoardCursor): along
 * a run of carried blocks, from a basis whose text was made elsewhere (no running state), and on two branches made
 * from one basis (a reorg's head carried from the same block as the replaced one).
 */
import { describe, expect, it } from "vitest";
import { basisLinesDigest, extendBasis, linesDigest } from "../../api/read/basisLines";
import type { SealBasis } from "../../api/read/contract";

/** One block's carried events as quietBlocks' notification text has them (the shape does not matter to the digest). */
const blockLines = (block: number, events: number) =>
  Array.from(
    { length: events },
    (_, k) => `${block}:${k}:0x${(block * 97 + k).toString(16).padStart(40, "0")}:${k * 1e15}`,
  ).join(",");

const statementBasis = (): SealBasis => ({ block: 100n, seal: { from: 64n, digest: "d" }, lines: "" });

describe("a carried basis's lines digest", () => {
  it("equals the digest of its whole text after each block carried", () => {
    let basis = statementBasis();
    expect(basisLinesDigest(basis)).toBe(linesDigest(""));
    for (let block = 101; block <= 140; block++) {
      const lines = block % 3 === 0 ? "" : blockLines(block, 40);
      const next = extendBasis(basis, lines);
      if (lines === "") expect(next).toBe(basis);
      else expect(next.lines).toBe(basis.lines === "" ? lines : `${basis.lines};${lines}`);
      basis = next;
      expect(basisLinesDigest(basis)).toBe(linesDigest(basis.lines));
      // Asked again (the digest is taken from a copy: the running state goes on unfinished).
      expect(basisLinesDigest(basis)).toBe(linesDigest(basis.lines));
    }
    expect(basis.lines.length).toBeGreaterThan(50_000);
    expect(basis.block).toBe(100n);
    expect(basis.seal).toEqual({ from: 64n, digest: "d" });
  });

  it("goes on from a basis whose text was made elsewhere", () => {
    const elsewhere: SealBasis = { ...statementBasis(), lines: `${blockLines(101, 5)};${blockLines(102, 7)}` };
    const next = extendBasis(elsewhere, blockLines(103, 3));
    expect(basisLinesDigest(next)).toBe(linesDigest(next.lines));
    const after = extendBasis(next, blockLines(104, 2));
    expect(basisLinesDigest(after)).toBe(linesDigest(after.lines));
    expect(basisLinesDigest(elsewhere)).toBe(linesDigest(elsewhere.lines));
  });

  it("keeps two branches made from one basis apart", () => {
    const p = extendBasis(statementBasis(), blockLines(101, 40));
    const a = extendBasis(p, blockLines(102, 40));
    const b = extendBasis(p, blockLines(202, 39));
    const a2 = extendBasis(a, blockLines(103, 1));
    expect(basisLinesDigest(a)).toBe(linesDigest(a.lines));
    expect(basisLinesDigest(b)).toBe(linesDigest(b.lines));
    expect(basisLinesDigest(a2)).toBe(linesDigest(a2.lines));
    expect(basisLinesDigest(p)).toBe(linesDigest(p.lines));
    expect(basisLinesDigest(a)).not.toBe(basisLinesDigest(b));
  });
});
