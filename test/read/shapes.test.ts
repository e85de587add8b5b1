import { describe, expect, it } from "vitest";
import type { LockEventState } from "../../api/read/contract";
import { eventJson } from "../../api/read/shapes";

const E18 = 10n ** 18n;
const YEAR = 31_536_000n;

/** A listing of lock 5 at block 143: the row keeps the end stored at block 57, when AutoMax was set. */
const listing: LockEventState = {
  kind: "list",
  tokenId: 5n,
  account: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  amount: null,
  lockEnd: 1_829_851_290n,
  autoMax: true,
  fromTokenId: null,
  recipient: null,
  owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  lockAmount: 11_000n * E18,
  listed: true,
  burned: false,
  blockNumber: 143n,
  blockTime: 1_799_007_913n,
  txHash: `0x${"ab".repeat(32)}`,
  logIndex: 0,
};

describe("eventJson: a lock event's end is getLockInfo's at the event's block (protocol.md §8)", () => {
  it("an AutoMax lock ends the event block's time + 365 days, not the stored end", () => {
    expect(eventJson(listing).lockEnd).toBe("1830543913");
    expect(eventJson({ ...listing, kind: "transfer", blockTime: listing.blockTime + 60n }).lockEnd).toBe(
      String(listing.blockTime + 60n + YEAR),
    );
  });

  it("any other lock its stored end; a burned one 0", () => {
    expect(eventJson({ ...listing, autoMax: false }).lockEnd).toBe("1829851290");
    const burned = { ...listing, kind: "unlock", owner: null, lockAmount: 0n, lockEnd: 0n, autoMax: false };
    expect(eventJson({ ...burned, burned: true }).lockEnd).toBe("0");
  });
});
