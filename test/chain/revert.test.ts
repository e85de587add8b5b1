import { keccak256, toHex } from "viem";
import { describe, expect, it } from "vitest";
import { PUBLISHED_ERROR_NAMES } from "../../abis/Errors";
import { decodeRevert } from "../../api/chain/revert";

/** keccak256("Name()")[0:4], computed independently of the ABI under test. */
const selectorOf = (name: string) => keccak256(toHex(`${name}()`)).slice(0, 10);

describe("decodeRevert names every published error (protocol.md §8)", () => {
  it("decodes each published no-arg error from its selector", () => {
    expect(PUBLISHED_ERROR_NAMES.length).toBe(38);
    for (const name of PUBLISHED_ERROR_NAMES) {
      expect(decodeRevert(selectorOf(name))).toEqual({ name, args: [] });
    }
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
