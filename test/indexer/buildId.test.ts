/**
 * Ponder's build id hashes the files under src/ (and the config and schema objects), not the indexer/ files the rules
 * live in: src/index.ts carries the hash of the indexer/ files it imports (what shapes the stored rows; not the RPC
 * transport or the settings, whose change needs no re-index) in a line of its own, so a change to a rule changes the
 * build id, and `ponder start` on a schema written by the old rules refuses it (a redeploy takes a new
 * DATABASE_SCHEMA) instead of resuming with two rules in one table.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/ponder";

/** The indexer/ modules src/index.ts imports, hashed by name and content in name order. */
function indexerRulesHash(source: string): string {
  const names = [...new Set([...source.matchAll(/from "\.\.\/indexer\/([\w-]+)"/g)].map((m) => m[1] as string))].sort();
  expect(names.length).toBeGreaterThan(0);
  const hash = createHash("sha256");
  for (const name of names) {
    hash.update(`${name}.ts\n`).update(readFileSync(path.join(REPO_ROOT, "indexer", `${name}.ts`)));
  }
  return hash.digest("hex");
}

describe("the indexer's build id covers its rules", () => {
  it("src/index.ts carries the hash of the indexer/ modules it imports", () => {
    const source = readFileSync(path.join(REPO_ROOT, "src", "index.ts"), "utf8");
    const recorded = /indexer rules: sha256 ([0-9a-f]{64})/.exec(source)?.[1];
    const now = indexerRulesHash(source);
    expect(
      recorded,
      `the rules changed: set the line "indexer rules: sha256 ${now}" in src/index.ts (a new build id)`,
    ).toBe(now);
  });
});
