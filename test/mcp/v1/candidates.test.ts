/**
 * The ids a state read tries in its first eth_call (api/mcp/v1/snapshot.ts candidatesOf): the user's, the next
 * SPECULATIVE_IDS after the answer's highest, and after the watermark's highest only when that is newer. (That the
 * answer is exact whatever is tried — the count proves the set — is test/mcp/v1/stateLag.test.ts's.)
 */
import { describe, expect, it } from "vitest";
import { candidatesOf, SPECULATIVE_IDS } from "../../../api/mcp/v1/snapshot";

const answer = { tokenIds: [3n, 7n], maxTokenId: 10n, indexedBlock: 500n };

describe("candidatesOf", () => {
  it("the user's ids and the next ones after the highest", () => {
    expect(SPECULATIVE_IDS).toBe(2n);
    expect(candidatesOf(answer)).toEqual([3n, 7n, 11n, 12n]);
  });

  it("with a newer watermark, the ids after its highest too", () => {
    expect(candidatesOf(answer, 14n)).toEqual([3n, 7n, 11n, 12n, 15n, 16n]);
    expect(candidatesOf(answer, 11n)).toEqual([3n, 7n, 11n, 12n, 13n]);
  });

  it("with a watermark behind the answer (a hint newer than a lagging index), nothing more", () => {
    expect(candidatesOf(answer, 6n)).toEqual([3n, 7n, 11n, 12n]);
    expect(candidatesOf(answer, 10n)).toEqual([3n, 7n, 11n, 12n]);
  });
});
