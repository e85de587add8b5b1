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
