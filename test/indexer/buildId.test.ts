/**
 * Ponder's build id hashes the files under src/ (and the config and schema objects), not the indexer/ files the rules
 * live in: src/index.ts carries their hash in a line of its own, so a change to a rule changes the build id, and
 * `ponder start` on a schema written by the old rules refuses it (a redeploy takes a new DATABASE_SCHEMA) instead of
 * resuming with two rules in one table.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/ponder";

function indexerRulesHash(): string {
  const dir = path.join(REPO_ROOT, "indexer");
  const hash = createHash("sha256");
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith(".ts"))
    .sort()) {
    hash.update(`${name}\n`).update(readFileSync(path.join(dir, name)));
  }
  return hash.digest("hex");
}

describe("the indexer's build id covers its rules", () => {
  it("src/index.ts carries the hash of indexer/*.ts", () => {
    const source = readFileSync(path.join(REPO_ROOT, "src", "index.ts"), "utf8");
    const recorded = /indexer rules: sha256 ([0-9a-f]{64})/.exec(source)?.[1];
    expect(
      recorded,
      `indexer/ changed: set the line "indexer rules: sha256 ${indexerRulesHash()}" in src/index.ts (a new build id)`,
    ).toBe(indexerRulesHash());
  });
});
