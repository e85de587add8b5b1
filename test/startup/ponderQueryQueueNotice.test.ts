/**
 * api/startup/ponderQueryQueueNotice.ts in a child process (it replaces process.emitWarning for the whole process):
 * pg's "already executing a query" deprecation, raised the way Ponder's realtime sync raises it, is not printed;
 * every other warning still is.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "../support/ponder";

const SCRIPT = `
import pg from "pg";
import { dropPonderQueryQueueNotice } from ${JSON.stringify(path.join(REPO_ROOT, "api/startup/ponderQueryQueueNotice.ts"))};
if (process.env.DROP === "1") dropPonderQueryQueueNotice();
const client = new pg.Client({ connectionString: process.env.PG_URL });
await client.connect();
await client.query("BEGIN");
// Statements at once on one transaction's client, as Ponder's finalize_block_range sends its inserts (pg warns
// from the second one waiting behind the running one).
await Promise.all([client.query("SELECT 1"), client.query("SELECT 2"), client.query("SELECT 3")]);
await client.query("COMMIT");
await client.end();
process.emitWarning("another deprecation", "DeprecationWarning");
`;

const run = (drop: boolean) =>
  spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DROP: drop ? "1" : "0",
      PG_URL: process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
    },
    encoding: "utf8",
    timeout: 30_000,
  });

it("drops pg's query-queue deprecation and nothing else", () => {
  const dropped = run(true);
  expect(dropped.status, dropped.stderr).toBe(0);
  expect(dropped.stderr).not.toContain("already executing a query");
  expect(dropped.stderr).toMatch(/DeprecationWarning: another deprecation/);
  // The same script without it: pg prints the notice (so the check above can see it).
  const printed = run(false);
  expect(printed.status, printed.stderr).toBe(0);
  expect(printed.stderr).toContain("already executing a query");
});
