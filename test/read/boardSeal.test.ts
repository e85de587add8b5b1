/**
 * A board page's next-cursor seal (api/read/cursorSeal.ts boardSeal), its cases apart from any index: a final block's
 * none; a ranking read by a statement of its own that statement's seal; a carried ranking's basis, made once per
 * basis; and none from an index that cannot read a seal (its next page could not check a carried basis and would be
 * refused). The seals' checks against a real index, across reorgs, are test/read/cursorSeal.test.ts's.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { SealBasis } from "../../api/read/contract";
import { boardSeal, type SealedRanking } from "../../api/read/cursorSeal";
import type { IndexRuntime } from "../../api/read/runtime";

/** A runtime as boardSeal reads it: only whether its index reads seals. */
const runtime = (seals: boolean) =>
  ({ index: seals ? { seal: async () => ({ value: null, inRange: true }) } : {} }) as unknown as IndexRuntime;

const basis: SealBasis = {
  block: 90n,
  seal: { from: 80n, digest: "AAAAAAAAAAAAAAAA" },
  lines: "lock 7 at 91\nlock 9 at 92\n",
};
const carried: SealedRanking = { block: 93n, time: 1_000n, sealing: { basis } };

describe("boardSeal", () => {
  it("a block at or below the finalized one: no seal", () => {
    expect(boardSeal(runtime(true), carried, 93n)).toBeNull();
    expect(boardSeal(runtime(true), { ...carried, sealing: { seal: basis.seal } }, 100n)).toBeNull();
  });

  it("a ranking read by its own statement: that statement's seal, as it is", () => {
    const seal = { from: 85n, digest: "BBBBBBBBBBBBBBBB" };
    expect(boardSeal(runtime(true), { block: 93n, time: 1_000n, sealing: { seal } }, 50n)).toBe(seal);
    expect(boardSeal(runtime(true), { block: 93n, time: 1_000n, sealing: { seal: null } }, 50n)).toBeNull();
  });

  it("a carried ranking: its basis and a 96-bit digest of the carried lines, made once per basis", () => {
    const seal = boardSeal(runtime(true), carried, 50n);
    const digest = createHash("md5").update(basis.lines).digest().subarray(0, 12).toString("base64url");
    expect(seal).toEqual({ basis: 90n, seal: basis.seal, lines: digest });
    expect(digest).toHaveLength(16);
    expect(boardSeal(runtime(true), { ...carried }, 50n), "the same basis: the same seal object").toBe(seal);
    const other = boardSeal(
      runtime(true),
      { ...carried, sealing: { basis: { ...basis, lines: "lock 7 at 91\n" } } },
      50n,
    );
    expect(other).not.toEqual(seal);
  });

  it("an index that cannot read a seal hands none out for a carried ranking", () => {
    expect(boardSeal(runtime(false), carried, 50n)).toBeNull();
  });

  it("a ranking made ahead and not yet sealed is never paged", () => {
    expect(() => boardSeal(runtime(true), { ...carried, sealing: undefined }, 50n)).toThrow(/not sealed yet/);
  });
});
