import { encodeErrorResult, keccak256, parseAbi, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { PUBLISHED_ERROR_NAMES, PUBLISHED_LOCAL_ERROR_NAMES } from "../../abis/Errors";
import { decodeRevert } from "../../api/chain/revert";

/** keccak256("Name()")[0:4], computed independently of the ABI under test. */
const selectorOf = (name: string) => keccak256(toHex(`${name}()`)).slice(0, 10);

describe("decodeRevert names every published error (protocol.md §8)", () => {
  it("decodes each published no-arg error from its selector", () => {
    expect(PUBLISHED_ERROR_NAMES.length).toBe(39);
    for (const name of PUBLISHED_ERROR_NAMES) {
      expect(decodeRevert(selectorOf(name))).toEqual({ name, args: [] });
    }
  });

  it("decodes the errors a published contract declares itself: LpStakingVault7D's LockCooldown", () => {
    expect(PUBLISHED_LOCAL_ERROR_NAMES).toEqual(["LockCooldown"]);
    expect(selectorOf("LockCooldown")).toBe("0x39be4a63");
    expect(decodeRevert("0x39be4a63")).toEqual({ name: "LockCooldown", args: [] });
    // the Errors library's once-a-day name stays decodable too
    expect(decodeRevert("0x4da6338e")).toEqual({ name: "CadenceNotMet", args: [] });
  });

  it("decodes InvalidToken (a Furnace top-up or quote of a never-minted or burned lock)", () => {
    expect(selectorOf("InvalidToken")).toBe("0xc1ab6dc1");
    expect(decodeRevert("0xc1ab6dc1")).toEqual({ name: "InvalidToken", args: [] });
  });

  it("pins the selectors of the errors the lock flows meet", () => {
    expect(selectorOf("NotAuthorized")).toBe("0xea8e4eb5");
    expect(selectorOf("LockListedOrFrozen")).toBe("0x4f00e11b");
    expect(selectorOf("OnlyMineMarket")).toBe("0x7c816e82");
    expect(selectorOf("MarketMustTransferToFurnace")).toBe("0x92b39d64");
  });

  it("decodes the token's own OpenZeppelin v5 errors (ERC-6093) with their arguments: every Furnace entry pulls the token", () => {
    // Written here from the signatures, independently of abis/: the published ClaimToken is an OpenZeppelin v5
    // ERC20, whose transferFrom reverts these (allowance first, then balance), bubbled up by Furnace.enterWithClaim.
    const oz = parseAbi([
      "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
      "error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)",
    ]);
    const sender = "0x00000000000000000000000000000000DeaDBeef";
    const balance = encodeErrorResult({
      abi: oz,
      errorName: "ERC20InsufficientBalance",
      args: [sender, 5n, 1000n * 10n ** 18n],
    });
    expect(balance.slice(0, 10)).toBe("0xe450d38c");
    expect(decodeRevert(balance)).toEqual({
      name: "ERC20InsufficientBalance",
      args: [sender, "5", "1000000000000000000000"],
    });
    const spender = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const allowance = encodeErrorResult({
      abi: oz,
      errorName: "ERC20InsufficientAllowance",
      args: [spender, 0n, 2n ** 256n - 2n],
    });
    expect(allowance.slice(0, 10)).toBe("0xfb8f41b2");
    expect(decodeRevert(allowance)).toEqual({
      name: "ERC20InsufficientAllowance",
      args: [spender, "0", (2n ** 256n - 2n).toString()],
    });
    // the selector alone (no arguments) is not that error
    expect(decodeRevert("0xe450d38c")).toBeNull();
  });

  it("decodes the LP token's OpenZeppelin 4.x reasons (Aerodrome pool) as Error(reason)", () => {
    const reason = (text: string) =>
      encodeErrorResult({ abi: parseAbi(["error Error(string)"]), errorName: "Error", args: [text] });
    for (const text of ["ERC20: insufficient allowance", "ERC20: transfer amount exceeds balance"]) {
      expect(decodeRevert(reason(text))).toEqual({ name: "Error", args: [text] });
    }
  });

  it("returns null for an unknown selector", () => {
    expect(decodeRevert(selectorOf("NoSuchProtocolError"))).toBeNull();
  });
});
