import { getAddress, zeroAddress } from "viem";
import { describe, expect, it } from "vitest";
import {
  autoMaxSet,
  type BlockRef,
  type LockRow,
  LockRuleError,
  listingSet,
  lockAmountIncreased,
  lockCreated,
  lockEventRow,
  lockExtended,
  lockMerged,
  lockTransferred,
  lockUnlocked,
  MAX_LOCK_DURATION,
  transferKind,
} from "../../indexer/rules";

const alice = getAddress("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
const bob = getAddress("0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc");
const furnace = getAddress("0x5f4dabb335d2609c88d3f77e15d5db4310270ad6");
const E18 = 10n ** 18n;
const DAY = 86_400n;

const b0: BlockRef = { number: 10n, timestamp: 1_700_000_000n };
const later = (days: bigint, blocks = 5n): BlockRef => ({
  number: b0.number + blocks,
  timestamp: b0.timestamp + days * DAY,
});

const created = (
  over: Partial<{ tokenId: bigint; amount: bigint; days: bigint; autoMax: boolean; user: typeof alice }> = {},
) =>
  lockCreated(
    {
      user: over.user ?? alice,
      tokenId: over.tokenId ?? 1n,
      amount: over.amount ?? 5_000n * E18,
      lockEnd: b0.timestamp + (over.days ?? 30n) * DAY,
      autoMax: over.autoMax ?? false,
    },
    b0,
  );

describe("lockCreated", () => {
  it("creates the row from the event, stamped with the block", () => {
    expect(created()).toEqual({
      tokenId: 1n,
      owner: alice,
      amount: 5_000n * E18,
      lockEnd: b0.timestamp + 30n * DAY,
      autoMax: false,
      listed: false,
      burned: false,
      createdBlock: 10n,
      createdTime: b0.timestamp,
      updatedBlock: 10n,
      updatedTime: b0.timestamp,
    } satisfies LockRow);
  });
});

describe("lockAmountIncreased", () => {
  it("adds the amount and keeps lockEnd on a plain lock", () => {
    const next = lockAmountIncreased(created(), { user: alice, amountAdded: 500n * E18 }, later(3n));
    expect(next.amount).toBe(5_500n * E18);
    expect(next.lockEnd).toBe(b0.timestamp + 30n * DAY);
    expect(next.updatedBlock).toBe(15n);
    expect(next.createdBlock).toBe(10n);
  });

  it("silently refreshes an AutoMax lock's end to block time + 365 days", () => {
    const row = created({ autoMax: true, days: 365n });
    const at = later(40n);
    const next = lockAmountIncreased(row, { user: alice, amountAdded: 1n * E18 }, at);
    expect(next.lockEnd).toBe(at.timestamp + MAX_LOCK_DURATION);
    expect(next.lockEnd).not.toBe(row.lockEnd);
    expect(next.autoMax).toBe(true);
  });

  it("compares owners case-insensitively (Ponder stores hex lower-case)", () => {
    const row = { ...created(), owner: alice.toLowerCase() as typeof alice };
    expect(lockAmountIncreased(row, { user: alice, amountAdded: 1n }, later(1n)).amount).toBe(row.amount + 1n);
  });

  it("rejects a top-up by someone who does not own the lock, or of a burned lock", () => {
    expect(() => lockAmountIncreased(created(), { user: bob, amountAdded: 1n }, later(1n))).toThrow(LockRuleError);
    const burned = lockUnlocked(created(), { user: alice, amountReturned: 5_000n * E18 }, later(31n));
    expect(() => lockAmountIncreased(burned, { user: alice, amountAdded: 1n }, later(32n))).toThrow(/burned lock 1/);
  });
});

describe("lockExtended", () => {
  it("takes the end the event carries", () => {
    const row = created();
    const next = lockExtended(row, { user: alice, oldEnd: row.lockEnd, newEnd: row.lockEnd + 60n * DAY }, later(2n));
    expect(next.lockEnd).toBe(row.lockEnd + 60n * DAY);
    expect(next.amount).toBe(row.amount);
  });

  it("on AutoMax the event already carries now + 365 days", () => {
    const row = created({ autoMax: true, days: 365n });
    const at = later(10n);
    const next = lockExtended(row, { user: alice, oldEnd: row.lockEnd, newEnd: at.timestamp + MAX_LOCK_DURATION }, at);
    expect(next.lockEnd).toBe(at.timestamp + MAX_LOCK_DURATION);
  });

  it("detects a missed event: oldEnd must equal the indexed end", () => {
    const row = created();
    expect(() =>
      lockExtended(row, { user: alice, oldEnd: row.lockEnd - 1n, newEnd: row.lockEnd + DAY }, later(1n)),
    ).toThrow(/oldEnd/);
  });
});

describe("lockMerged", () => {
  const from = () => created({ tokenId: 1n, amount: 3_000n * E18, days: 60n });
  const into = () => created({ tokenId: 2n, amount: 4_000n * E18, days: 120n });

  it("burns the source and moves its amount; plain locks keep the later end", () => {
    const at = later(5n);
    const out = lockMerged(from(), into(), { user: alice, amountMoved: 3_000n * E18 }, at);
    expect(out.from).toMatchObject({ tokenId: 1n, owner: null, amount: 0n, lockEnd: 0n, autoMax: false, burned: true });
    expect(out.from.updatedBlock).toBe(at.number);
    expect(out.into).toMatchObject({ tokenId: 2n, owner: alice, amount: 7_000n * E18, autoMax: false, burned: false });
    expect(out.into.lockEnd).toBe(b0.timestamp + 120n * DAY);
  });

  it("takes the source's end when it is the later one", () => {
    const out = lockMerged(into(), from(), { user: alice, amountMoved: 4_000n * E18 }, later(1n));
    expect(out.into.lockEnd).toBe(b0.timestamp + 120n * DAY);
    expect(out.into.tokenId).toBe(1n);
  });

  it("ORs autoMax, and an AutoMax result ends at block time + 365 days (either side)", () => {
    const at = later(9n);
    const autoFrom = { ...from(), autoMax: true };
    const a = lockMerged(autoFrom, into(), { user: alice, amountMoved: 3_000n * E18 }, at);
    expect(a.into.autoMax).toBe(true);
    expect(a.into.lockEnd).toBe(at.timestamp + MAX_LOCK_DURATION);
    const autoInto = { ...into(), autoMax: true };
    const b = lockMerged(from(), autoInto, { user: alice, amountMoved: 3_000n * E18 }, at);
    expect(b.into.autoMax).toBe(true);
    expect(b.into.lockEnd).toBe(at.timestamp + MAX_LOCK_DURATION);
  });

  it("rejects a moved amount that differs from the indexed one, a self-merge, or a foreign lock", () => {
    expect(() => lockMerged(from(), into(), { user: alice, amountMoved: 1n }, later(1n))).toThrow(/moved 1/);
    expect(() => lockMerged(from(), from(), { user: alice, amountMoved: 3_000n * E18 }, later(1n))).toThrow(/itself/);
    const bobs = { ...into(), owner: bob };
    expect(() => lockMerged(from(), bobs, { user: alice, amountMoved: 3_000n * E18 }, later(1n))).toThrow(
      LockRuleError,
    );
  });
});

describe("lockUnlocked", () => {
  it("burns the lock: zeros, no owner (what getLockInfo / ownerOf say on chain)", () => {
    const at = later(31n);
    expect(lockUnlocked(created(), { user: alice, amountReturned: 5_000n * E18 }, at)).toEqual({
      ...created(),
      owner: null,
      amount: 0n,
      lockEnd: 0n,
      autoMax: false,
      burned: true,
      updatedBlock: at.number,
      updatedTime: at.timestamp,
    });
  });

  it("rejects a returned amount that differs from the indexed one", () => {
    expect(() => lockUnlocked(created(), { user: alice, amountReturned: 1n }, later(31n))).toThrow(/returned 1/);
  });
});

describe("autoMaxSet", () => {
  it("on: autoMax true, end = block time + 365 days", () => {
    const at = later(2n);
    const next = autoMaxSet(created(), { user: alice, autoMax: true }, at);
    expect(next).toMatchObject({ autoMax: true, lockEnd: at.timestamp + MAX_LOCK_DURATION });
  });

  it("off: autoMax false, end is still refreshed to block time + 365 days", () => {
    const at = later(20n);
    const next = autoMaxSet(created({ autoMax: true, days: 365n }), { user: alice, autoMax: false }, at);
    expect(next).toMatchObject({ autoMax: false, lockEnd: at.timestamp + MAX_LOCK_DURATION });
  });

  it("true → true refreshes the end", () => {
    const row = created({ autoMax: true, days: 365n });
    const at = later(100n);
    expect(autoMaxSet(row, { user: alice, autoMax: true }, at).lockEnd).toBe(at.timestamp + MAX_LOCK_DURATION);
  });
});

describe("Transfer", () => {
  it("classifies mint, burn and move", () => {
    expect(transferKind({ from: zeroAddress, to: alice })).toBe("mint");
    expect(transferKind({ from: alice, to: zeroAddress })).toBe("burn");
    expect(transferKind({ from: alice, to: furnace })).toBe("move");
  });

  it("a mint (before LockCreated) and a burn (before LockMerged / LockUnlocked) change nothing", () => {
    expect(lockTransferred(null, { from: zeroAddress, to: alice }, b0)).toBeNull();
    expect(lockTransferred(created(), { from: alice, to: zeroAddress }, later(1n))).toBeNull();
  });

  it("sell-back: the Furnace becomes the owner, the lock stays live; then its unlock burns it", () => {
    const sold = lockTransferred(created(), { from: alice, to: furnace }, later(1n));
    expect(sold).toMatchObject({ owner: furnace, amount: 5_000n * E18, burned: false });
    if (!sold) throw new Error("unreachable");
    // Transfer(Furnace → 0) changes nothing, LockUnlocked(Furnace, id, amount) burns.
    expect(lockTransferred(sold, { from: furnace, to: zeroAddress }, later(9n))).toBeNull();
    const burned = lockUnlocked(sold, { user: furnace, amountReturned: 5_000n * E18 }, later(9n));
    expect(burned).toMatchObject({ owner: null, amount: 0n, burned: true });
  });

  it("a move of an unknown lock, or from a non-owner, is an inconsistency", () => {
    expect(() => lockTransferred(null, { from: alice, to: furnace }, b0)).toThrow(/unknown lock/);
    expect(() => lockTransferred(created(), { from: bob, to: furnace }, b0)).toThrow(LockRuleError);
  });
});

describe("listingSet (MetadataUpdate + getLockInfo's listed at the event's block)", () => {
  it("a change of the flag is a new row; the same flag (an AutoMax switch's MetadataUpdate) is none", () => {
    const listed = listingSet(created(), true, later(1n));
    expect(listed).toMatchObject({ listed: true, updatedBlock: 15n, amount: 5_000n * E18, owner: alice });
    if (!listed) throw new Error("unreachable");
    expect(listingSet(listed, true, later(2n))).toBeNull();
    expect(listingSet(listed, false, later(2n))).toMatchObject({ listed: false });
    expect(listingSet(created(), false, later(1n))).toBeNull();
  });

  it("an unknown or burned lock is left alone", () => {
    expect(listingSet(null, true, b0)).toBeNull();
    const burned = lockUnlocked(created({ days: 7n }), { user: alice, amountReturned: 5_000n * E18 }, later(8n));
    expect(listingSet(burned, true, later(9n))).toBeNull();
  });

  it("a sell-back ends the listing; a burn clears it", () => {
    const listed = listingSet(created(), true, later(1n));
    if (!listed) throw new Error("unreachable");
    expect(lockTransferred(listed, { from: alice, to: furnace }, later(2n))).toMatchObject({
      owner: furnace,
      listed: false,
    });
  });
});

describe("lockEventRow", () => {
  it("records the event with the lock's state after it", () => {
    const row = created();
    const origin = { block: later(1n), txHash: `0x${"ab".repeat(32)}` as const, logIndex: 3 };
    expect(lockEventRow("merge", row, origin, { account: alice, amount: 7n, fromTokenId: 9n })).toEqual({
      id: `0x${"ab".repeat(32)}-3`,
      kind: "merge",
      tokenId: 1n,
      account: alice,
      amount: 7n,
      lockEnd: row.lockEnd,
      autoMax: false,
      owner: alice,
      lockAmount: 5_000n * E18,
      listed: false,
      burned: false,
      fromTokenId: 9n,
      recipient: null,
      blockNumber: 15n,
      blockTime: b0.timestamp + DAY,
      txHash: `0x${"ab".repeat(32)}`,
      logIndex: 3,
    });
  });
});
