import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../../api/http/errors";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import { readAllowance } from "../../../../api/mcp/v1/prepare/approval";
import type { PrepareAction } from "../../../../api/mcp/v1/prepare/pipeline";
import { CLAIM_WORD } from "../../../support/narration";

// Narration (spec §4.3): each action carries its user-facing verb, and no user-facing text — verbs,
// descriptions, parameter docs, error messages — uses "claim" as a word. On-chain names (claimAll,
// claimAmountWei…) are identifiers, not words, and stay allowed in technical fields and parameter names.

const SPEC_VERBS: Record<string, string> = {
  "collect-all": "Collect",
  "collect-royalties": "Collect",
  "harvest-rewards": "Harvest",
  "withdraw-lp": "Withdraw",
  "lock-via-furnace": "Lock via Furnace",
  "stake-lp": "Stake",
  "unbond-lp": "Unbond",
  lock: "Lock",
  topup: "Top up",
  extend: "Extend",
};

describe("narration", () => {
  it("the detector flags the word and spares identifiers", () => {
    expect(CLAIM_WORD.test("Claim your rewards")).toBe(true);
    expect(CLAIM_WORD.test("rewards are claimed")).toBe(true);
    expect(CLAIM_WORD.test("the claimable ETH")).toBe(true);
    expect(CLAIM_WORD.test("claimAmountWei must be > 0")).toBe(false);
    expect(CLAIM_WORD.test("ClaimAllHelper.claimAll")).toBe(false);
    expect(CLAIM_WORD.test("enterWithClaim")).toBe(false);
  });

  it("the ten actions of spec §4.3, each with its user-facing verb, leading its description", () => {
    expect(Object.fromEntries(ACTIONS.map((a) => [a.action, a.verb]))).toEqual(SPEC_VERBS);
    for (const a of ACTIONS) expect(a.description.startsWith(`${a.verb}:`)).toBe(true);
  });

  it("no user-facing text in the action table uses claim as a word", () => {
    for (const a of ACTIONS) {
      const texts = [a.verb, a.description, ...Object.values(a.params).map((p) => p.description)];
      for (const t of texts) expect(t, `${a.action}: ${t}`).not.toMatch(CLAIM_WORD);
    }
  });

  it("no parse error message uses claim as a word (generated bad queries)", () => {
    const names = [...new Set(ACTIONS.flatMap((a) => Object.keys(a.params))), "x", "mode"];
    const value = fc.oneof(
      fc.constantFrom("0", "1", "2", "-1", "true", "false", "TRUE", "1e18", "0x01", "", "9".repeat(80)),
      fc.bigInt({ min: 0n, max: 2n ** 256n + 5n }).map(String),
    );
    const query = fc.array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 6 });
    let seen = 0;
    fc.assert(
      fc.property(fc.constantFrom(...ACTIONS), query, (action, pairs) => {
        const q = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
        try {
          (action as PrepareAction & { parse(url: string): unknown }).parse(`http://x/p?${q}`);
        } catch (error) {
          expect(error).toBeInstanceOf(ApiError);
          seen++;
          // The message may name a parameter (an identifier); it never narrates with the word.
          expect((error as ApiError).message).not.toMatch(CLAIM_WORD);
        }
      }),
      { numRuns: 3_000 },
    );
    expect(seen).toBeGreaterThan(1_000);
  });

  it("read failure messages do not use it either", async () => {
    const err = await readAllowance(
      { rpc: null },
      {
        token: "AssetToken",
        tokenAddress: "0x0000000000000000000000000000000000000001",
        owner: "0x0000000000000000000000000000000000000002",
        spender: "0x0000000000000000000000000000000000000003",
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).not.toMatch(CLAIM_WORD);
  });
});
