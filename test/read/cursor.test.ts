/**
 * The page cursors' key without CURSOR_SECRET (api/read/cursor.ts cursorKey), from the configuration as the API process
 * loads it: replicas of one deployment whose DATABASE_URL differs only in how it reaches the database agree on each
 * other's cursors; another database, schema, chain or password is another key.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../api/config";
import { CursorCodec, cursorKey, cursorList } from "../../api/read/cursor";

const BASE = "postgresql://app:s3cret@db.internal:5432/asset";
const codec = (env: Record<string, string>) =>
  new CursorCodec(
    cursorKey(loadConfig({ NETWORK: "base", DATABASE_SCHEMA: "asset_v3", DATABASE_VIEWS_SCHEMA: "asset", ...env })),
  );
const cursor = {
  kind: "board",
  list: cursorList.ve,
  block: 123n,
  seal: null,
  after: { ve: 10n ** 18n, address: "0x00000000000000000000000000000000000000aa" },
} as const;
/** Whether a cursor handed out by a replica with `a` is taken by one with `b`. */
const agree = (a: Record<string, string>, b: Record<string, string>) => {
  const raw = codec(a).encode(cursor);
  try {
    codec(b).decode(raw, "board", cursorList.ve);
    return true;
  } catch {
    return false;
  }
};

describe("the derived cursor key (no CURSOR_SECRET)", () => {
  it.each([
    ["postgres:// for postgresql://", "postgres://app:s3cret@db.internal:5432/asset"],
    ["query parameters", `${BASE}?application_name=replica2&sslmode=require`],
    ["another host (an alias, a pooler per zone)", "postgresql://app:s3cret@pgbouncer-b.internal:6432/asset"],
    ["the default port left out", "postgresql://app:s3cret@db.internal/asset"],
    ["another user with the same password", "postgresql://reader:s3cret@db.internal:5432/asset"],
    ["percent-escapes in the name", "postgresql://app:s3cr%65t@db.internal:5432/%61sset"],
  ])("replicas agree across %s", (_what, other) => {
    expect(agree({ DATABASE_URL: BASE }, { DATABASE_URL: other })).toBe(true);
    expect(agree({ DATABASE_URL: other }, { DATABASE_URL: BASE })).toBe(true);
  });

  it.each([
    ["another database", { DATABASE_URL: "postgresql://app:s3cret@db.internal:5432/asset2" }],
    ["another password", { DATABASE_URL: "postgresql://app:other@db.internal:5432/asset" }],
    ["another schema read", { DATABASE_URL: BASE, DATABASE_VIEWS_SCHEMA: "asset_b" }],
    ["another chain", { DATABASE_URL: BASE, NETWORK: "base-sepolia" }],
  ])("%s is another key", (_what, env) => {
    expect(agree({ DATABASE_URL: BASE }, env)).toBe(false);
  });

  it("CURSOR_SECRET set: the database URL plays no part", () => {
    const secret = "x".repeat(40);
    expect(
      agree(
        { DATABASE_URL: BASE, CURSOR_SECRET: secret },
        { DATABASE_URL: "postgres://other:pw@elsewhere/db", CURSOR_SECRET: secret },
      ),
    ).toBe(true);
  });
});

describe("a board cursor carrying its ranking's basis (contract.ts CarriedSeal)", () => {
  const c = codec({ DATABASE_URL: BASE });
  const lines = "AAAAAAAAAAAAAAAA";
  const decoded = (value: object, kind: "board" | "events" = "board", list: string = cursorList.ve) => {
    // biome-ignore lint/suspicious/noExplicitAny: a cursor object this API would never make, to see it refused.
    const raw = c.encode(value as any);
    try {
      return c.decode(raw, kind, list);
    } catch {
      return null;
    }
  };

  it("goes and comes back as it was, with and without the basis's seal", () => {
    for (const seal of [
      { basis: 120n, seal: null, lines },
      { basis: 120n, seal: { from: 64n, digest: "abcdefghijklmnop" }, lines },
    ]) {
      expect(decoded({ ...cursor, seal })).toEqual({ ...cursor, seal });
    }
  });

  it("is refused where this API never writes one", () => {
    const seal = { basis: 120n, seal: { from: 64n, digest: "abcdefghijklmnop" }, lines };
    // Its basis at or above the cursor's block; the basis's seal starting at or above the basis; a digest of another
    // shape; on a history's cursor.
    expect(decoded({ ...cursor, seal: { ...seal, basis: 123n } })).toBeNull();
    expect(decoded({ ...cursor, seal: { ...seal, seal: { from: 120n, digest: seal.seal.digest } } })).toBeNull();
    expect(decoded({ ...cursor, seal: { ...seal, lines: "short" } })).toBeNull();
    const events = {
      kind: "events",
      list: cursorList.lock(4n),
      block: 123n,
      seal,
      after: { block: 100n, logIndex: 1 },
    };
    expect(decoded(events, "events", cursorList.lock(4n))).toBeNull();
    expect(decoded({ ...events, seal: seal.seal }, "events", cursorList.lock(4n))).not.toBeNull();
  });
});
