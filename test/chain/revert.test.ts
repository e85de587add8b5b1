import { keccak256, toHex } from "viem";
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

  it("returns null for an unknown selector", () => {
    expect(decodeRevert(selectorOf("NoSuchProtocolError"))).toBeNull();
  });
});
