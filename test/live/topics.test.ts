/**
 * The stream's topics (api/live/topics.ts) from a query: the duration boards with their window (from
 * `window=` or `board=key:window`), the activity feed with its kinds (from `kind=` or `activity=kinds`), what change
 * each follows, and every bad value a BAD_PARAMS naming its parameter — judged before a stream opens.
 */
import { describe, expect, it } from "vitest";
import { BadParamsError } from "../../api/http/errors";
import { parseTopics, TOPIC_KINDS } from "../../api/live/topics";
import type { BlockChange } from "../../api/read/contract";

const topics = (query: string) => parseTopics(`http://x/stream?${query}`);
const change = (over: Partial<BlockChange>): BlockChange => ({
  block: 1n,
  tokenIds: [],
  accounts: [],
  kind: null,
  lock: false,
  exit: null,
  ...over,
});

describe("stream topics", () => {
  it("duration boards: window from the parameter, the value, or 7d; ve takes none", () => {
    expect(topics("board=takeovers&board=royalties:24h&window=30d").map((t) => [t.key, t.path, t.exits])).toEqual([
      ["board:takeovers:30d", "/leaderboards/takeovers?window=30d", true],
      ["board:royalties:24h", "/leaderboards/royalties?window=24h", true],
    ]);
    expect(topics("board=furnace-eth")[0]?.path).toBe("/leaderboards/furnace-eth?window=7d");
    expect(topics("board=longest-reign:lifetime")[0]?.exits).toBe(false);
    expect(TOPIC_KINDS.board?.parse("takeovers:24h").key).toBe("board:takeovers:24h");
    expect(TOPIC_KINDS.board?.parse("ve").path).toBe("/leaderboards/ve");
  });

  it("a duration board changes with its source kind or an exit of its own window, nothing else", () => {
    const [t] = topics("board=takeover-eth:24h");
    expect(t?.concerns(change({ kind: "takeover", accounts: ["0x1" as never] }))).toBe(true);
    expect(t?.concerns(change({ kind: "royalty-claim" }))).toBe(false);
    expect(t?.concerns(change({ kind: "create", lock: true, tokenIds: [1n] }))).toBe(false);
    expect(t?.concerns(change({ exit: { board: "takeover-eth", window: "24h" } }))).toBe(true);
    expect(t?.concerns(change({ exit: { board: "takeover-eth", window: "7d" } }))).toBe(false);
    expect(t?.concerns(change({ exit: { board: "takeovers", window: "24h" } }))).toBe(false);
    // ve and stats follow the lock events alone.
    const [ve, stats] = topics("board=ve&stats");
    for (const x of [ve, stats]) {
      expect(x?.concerns(change({ kind: "takeover" }))).toBe(false);
      expect(x?.concerns(change({ kind: "topup", lock: true, tokenIds: [2n] }))).toBe(true);
    }
  });

  it("activity: all kinds, or those of kind= / the value; the account topic hears protocol events naming it", () => {
    const [all] = topics("activity");
    expect([all?.path, all?.concerns(change({ kind: "unlock" })), all?.concerns(change({}))]).toEqual([
      "/activity",
      true,
      false,
    ]);
    const [some] = topics("activity&kind=takeover,reign-finalized");
    expect(some?.path).toBe("/activity?kind=reign-finalized,takeover");
    expect(some?.concerns(change({ kind: "takeover" }))).toBe(true);
    expect(some?.concerns(change({ kind: "create", lock: true }))).toBe(false);
    expect(topics("activity=royalty-claim")[0]?.path).toBe("/activity?kind=royalty-claim");
    const address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const [account] = topics(`account=${address}`);
    expect(account?.concerns(change({ kind: "takeover", accounts: [address.toLowerCase() as never] }))).toBe(true);
  });

  it("activity's kinds in any order, repeated or not, are one topic (one read per block for all its streams)", () => {
    const keys = [
      "activity=takeover,unlock",
      "activity=unlock,takeover",
      "activity=unlock,takeover,unlock",
      "activity&kind=unlock,takeover",
    ].map((q) => topics(q).map((t) => [t.key, t.path]));
    expect(new Set(keys.map((k) => JSON.stringify(k)))).toEqual(
      new Set([JSON.stringify([["activity:takeover,unlock", "/activity?kind=takeover,unlock"]])]),
    );
    expect(topics("activity=takeover,unlock&activity=unlock,takeover")).toHaveLength(1);
  });

  it("in a query a name with an empty value is the name alone (docs/api.md): stats= is stats, activity= is activity", () => {
    const keys = (query: string) => topics(query).map((t) => [t.key, t.path]);
    expect(keys("stats=")).toEqual(keys("stats"));
    expect(keys("activity=")).toEqual(keys("activity"));
    expect(keys("activity=&kind=unlock")).toEqual(keys("activity&kind=unlock"));
  });

  it("a lock id is a uint256: 2^256 - 1 is a topic, 2^256 is BAD_PARAMS as GET /locks/{tokenId} answers", () => {
    expect(topics(`lock=${2n ** 256n - 1n}`)[0]?.key).toBe(`lock:${2n ** 256n - 1n}`);
    expect(() => topics(`lock=${2n ** 256n}`)).toThrow(/uint256/);
    expect(() => TOPIC_KINDS.lock?.parse(String(2n ** 256n))).toThrow(BadParamsError);
  });

  it("an account in any one case, or checksummed, is the same topic", () => {
    const keys = [
      "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
      "0x70997970C51812DC3A010C7D01B50E0D17DC79C8",
      "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    ].map((a) => topics(`account=${a}`)[0]?.key);
    expect(new Set(keys)).toEqual(new Set(["account:0x70997970c51812dc3a010c7d01b50e0d17dc79c8"]));
  });

  it("bad values are BAD_PARAMS naming the parameter", () => {
    for (const [query, param] of [
      ["board=nope", "board"],
      ["board=ve:7d", "board"],
      ["board=takeovers:1h", "board"],
      ["board=takeovers&window=1h", "window"],
      ["board=ve&window=7d", "window"],
      ["board=takeovers:24h&window=7d", "window"],
      ["stats&window=7d", "window"],
      ["board=takeovers&window=7d&window=24h", "window"],
      ["activity&kind=nope", "kind"],
      ["activity=create,nope", "activity"],
      ["stats&kind=create", "kind"],
      ["activity=create&kind=unlock", "kind"],
      ["window=7d", "window"],
      // A mixed-case address that is not its own EIP-55 checksum (the right one: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8).
      ["account=0x70997970c51812DC3A010C7d01b50e0d17dc79C8", "account"],
    ] as const) {
      let error: unknown;
      try {
        topics(query);
      } catch (e) {
        error = e;
      }
      expect(error, query).toBeInstanceOf(BadParamsError);
      expect((error as BadParamsError).detail, query).toMatchObject({ param });
    }
  });
});
