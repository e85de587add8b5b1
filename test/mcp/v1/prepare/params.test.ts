import { describe, expect, it } from "vitest";
import { BadParamsError } from "../../../../api/http/errors";
import { ACTIONS } from "../../../../api/mcp/v1/prepare";
import type { PrepareAction } from "../../../../api/mcp/v1/prepare/pipeline";

// The parse stage of every action (no I/O): what the contracts would certainly revert is BAD_PARAMS
// naming the parameter, and the documented defaults and names hold (protocol.md §5).

const U = "0x70997970C51812dc3a010c7d01b50E9D17DC79C8";
const E18 = 10n ** 18n;
const byName = new Map(ACTIONS.map((a) => [a.action, a as PrepareAction & { parse(url: string): unknown }]));
const parse = (action: string, q: string) => byName.get(action)!.parse(`http://x/api/mcp/v1/prepare/${action}?${q}`);

function badParam(action: string, q: string): string {
  try {
    parse(action, q);
  } catch (error) {
    expect(error).toBeInstanceOf(BadParamsError);
    const e = error as BadParamsError;
    expect(e.status).toBe(400);
    expect(e.code).toBe("BAD_PARAMS");
    return (e.detail as { param: string }).param;
  }
  throw new Error(`${action}?${q} was accepted`);
}

describe("prepare parameters", () => {
  it.each([
    // collect: only modes 0 and 1 exist on chain; mode 1 locks, so minVeOut > 0 and the lock rules apply
    ["collect-all", "mode=2", "mode"],
    ["collect-royalties", "mode=2", "mode"],
    ["collect-all", "mode=255", "mode"],
    ["collect-all", "mode=1&durationSeconds=604800", "minVeOutWei"],
    ["collect-royalties", "mode=1&durationSeconds=604800&minVeOutWei=0", "minVeOutWei"],
    ["collect-all", "mode=1&minVeOutWei=1", "durationSeconds"],
    ["collect-all", "mode=1&minVeOutWei=1&durationSeconds=604799", "durationSeconds"],
    ["collect-all", "mode=1&minVeOutWei=1&durationSeconds=31536001", "durationSeconds"],
    ["collect-all", "mode=1&minVeOutWei=1&durationSeconds=604800&createAutoMax=true", "createAutoMax"],
    ["collect-all", "mode=1&minVeOutWei=1&targetTokenId=3&createAutoMax=true", "createAutoMax"],
    ["collect-all", "mode=01", "mode"],
    ["collect-all", "mode=0&mode=0", "mode"],
    // collect mode 0 pays out: lock parameters given with it are refused, not dropped (as harvest without compound);
    // at their defaults (0, false) they ask for nothing and are taken (pendingEntry.test.ts)
    ["collect-all", "mode=0&durationSeconds=5&createAutoMax=true", "durationSeconds"],
    ["collect-all", "durationSeconds=31536000&createAutoMax=true&minVeOutWei=9", "durationSeconds"],
    ["collect-royalties", "mode=0&targetTokenId=4", "targetTokenId"],
    ["collect-royalties", "minVeOutWei=1", "minVeOutWei"],
    ["collect-all", "createAutoMax=true", "createAutoMax"],
    // collect mode 1: slippageBps applies only where the service quotes minVeOut (user given, minVeOutWei omitted)
    ["collect-all", `mode=1&durationSeconds=604800&minVeOutWei=5&user=${U}&slippageBps=10`, "slippageBps"],
    ["collect-royalties", "slippageBps=10", "slippageBps"],
    ["collect-all", `mode=1&durationSeconds=604800&user=${U}&slippageBps=10001`, "slippageBps"],
    ["collect-all", "mode=1&durationSeconds=604800&user=0x1", "user"],
    // harvest: lock parameters only with compound=true, and then minVeOut > 0
    ["harvest-rewards", "durationSeconds=604800", "durationSeconds"],
    ["harvest-rewards", "compound=false&minVeOutWei=5", "minVeOutWei"],
    ["harvest-rewards", "compound=false&targetTokenId=3", "targetTokenId"],
    ["harvest-rewards", "compound=false&createAutoMax=true", "createAutoMax"],
    ["harvest-rewards", "compound=true&durationSeconds=604800", "minVeOutWei"],
    ["harvest-rewards", "compound=true&durationSeconds=604800&minVeOutWei=0", "minVeOutWei"],
    ["harvest-rewards", "compound=true&minVeOutWei=1", "durationSeconds"],
    ["harvest-rewards", "compound=1", "compound"],
    ["harvest-rewards", "compound=TRUE", "compound"],
    // withdraw-lp takes nothing
    ["withdraw-lp", `user=${U}`, "user"],
    ["withdraw-lp", "x", "x"],
    // lock-via-furnace
    ["lock-via-furnace", "claimAmountWei=1", "user"],
    ["lock-via-furnace", `user=${U}`, "claimAmountWei"],
    ["lock-via-furnace", `user=${U}&claimAmountWei=0&durationSeconds=604800`, "claimAmountWei"],
    ["lock-via-furnace", `user=${U}&claimAmountWei=1`, "durationSeconds"],
    ["lock-via-furnace", `user=${U}&claimAmountWei=1&durationSeconds=604800&slippageBps=10001`, "slippageBps"],
    ["lock-via-furnace", `user=${U}&claimAmountWei=1&targetTokenId=2&createAutoMax=true`, "createAutoMax"],
    ["lock-via-furnace", `user=${U}&claimAmountWei=1&minVeOutWei=1`, "minVeOutWei"],
    ["lock-via-furnace", `user=0x70997970C51812dc3a010c7d01b50E9D17DC79c8&claimAmountWei=1`, "user"],
    // stake / unbond
    ["stake-lp", `user=${U}&amountWei=0`, "amountWei"],
    ["stake-lp", `user=${U}&amountWei=999999999999999`, "amountWei"],
    ["stake-lp", "amountWei=1000000000000000", "user"],
    ["unbond-lp", "amountWei=0", "amountWei"],
    ["unbond-lp", "", "amountWei"],
    ["unbond-lp", `user=${U}&amountWei=1`, "user"],
    // lock: note durationSecs, not durationSeconds
    ["lock", `user=${U}&amountWei=${1000n * E18}&durationSeconds=604800`, "durationSeconds"],
    ["lock", `user=${U}&amountWei=${1000n * E18 - 1n}&durationSecs=604800`, "amountWei"],
    ["lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=604799`, "durationSecs"],
    ["lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=31536001`, "durationSecs"],
    ["lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=31535999&autoMax=true`, "autoMax"],
    ["lock", `user=${U}&amountWei=${1000n * E18}`, "durationSecs"],
    // topup / extend
    ["topup", `user=${U}&tokenId=1&amountWei=${E18 - 1n}`, "amountWei"],
    ["topup", `user=${U}&tokenId=0&amountWei=${E18}`, "tokenId"],
    ["topup", `user=${U}&amountWei=${E18}`, "tokenId"],
    ["extend", `user=${U}&tokenId=1&newEnd=0`, "newEnd"],
    ["extend", `user=${U}&tokenId=0&newEnd=5`, "tokenId"],
    ["extend", `user=${U}&tokenId=1`, "newEnd"],
    ["extend", `user=${U}&tokenId=1&newEnd=1e9`, "newEnd"],
    ["extend", `user=${U}&tokenId=1&newEnd=${2n ** 256n}`, "newEnd"],
  ])("%s?%s → BAD_PARAMS naming %s", (action, q, param) => {
    expect(badParam(action, q)).toBe(param);
  });

  it("an unknown parameter's detail lists the accepted names", () => {
    try {
      parse("lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=604800&duration=1`);
      throw new Error("accepted");
    } catch (error) {
      expect((error as BadParamsError).detail).toEqual({
        param: "duration",
        accepted: ["user", "amountWei", "durationSecs", "autoMax"],
      });
    }
  });

  it("documented defaults", () => {
    expect(parse("collect-all", "")).toEqual({
      mode: 0,
      targetTokenId: 0n,
      durationSeconds: 0n,
      createAutoMax: false,
      // omitted: encoded as 0 with mode 0; with mode 1 quoted from user's pending royalties
      minVeOutWei: undefined,
      user: undefined,
      slippageBps: 50n,
    });
    expect(parse("harvest-rewards", "")).toEqual({ compound: false });
    expect(parse("withdraw-lp", "")).toBe(null);
    expect(parse("lock-via-furnace", `user=${U}&claimAmountWei=5&targetTokenId=7`)).toEqual({
      user: U,
      claimAmountWei: 5n,
      targetTokenId: 7n,
      durationSeconds: 0n,
      createAutoMax: false,
      slippageBps: 50n,
    });
    expect(parse("lock", `user=${U.toLowerCase()}&amountWei=${1000n * E18}&durationSecs=31536000`)).toEqual({
      user: U,
      amountWei: 1000n * E18,
      durationSecs: 31_536_000n,
      autoMax: false,
    });
  });

  it("a compound into an existing lock still names a duration the published vault accepts", () => {
    // LpStakingVault7D.claimRewardsAndLock checks durationSeconds in [7 d, 365 d] before any lock, top-ups included.
    for (const d of ["", "&durationSeconds=0", "&durationSeconds=604799", "&durationSeconds=31536001"]) {
      expect(() => parse("harvest-rewards", `compound=true&targetTokenId=9&minVeOutWei=1${d}`), d).toThrow(
        /durationSeconds must be between 604800 \(7 days\) and 31536000 \(365 days\) for a top-up through the vault/,
      );
    }
  });

  it("the boundaries the contracts accept are accepted", () => {
    expect(() => parse("lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=604800`)).not.toThrow();
    expect(() => parse("lock", `user=${U}&amountWei=${1000n * E18}&durationSecs=31536000&autoMax=true`)).not.toThrow();
    expect(() => parse("topup", `user=${U}&tokenId=1&amountWei=${E18}`)).not.toThrow();
    expect(() => parse("stake-lp", `user=${U}&amountWei=1000000000000000`)).not.toThrow();
    expect(() => parse("unbond-lp", "amountWei=1")).not.toThrow();
    expect(() => parse("collect-all", "mode=1&minVeOutWei=1&targetTokenId=4")).not.toThrow();
    expect(() =>
      parse("harvest-rewards", "compound=true&targetTokenId=9&durationSeconds=604800&minVeOutWei=1"),
    ).not.toThrow();
    expect(() =>
      parse("lock-via-furnace", `user=${U}&claimAmountWei=1&durationSeconds=604800&slippageBps=10000`),
    ).not.toThrow();
  });
});
