/**
 * `npm test`'s runner (test/run.mjs) before it starts vitest: a Postgres or Redis it cannot reach is named, with the
 * URL redacted as every production process prints one (api/redact.ts), so a CI log never carries its password.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { freePort } from "../devnet/anvil";
import { REPO_ROOT } from "./support/ponder";

it("names an unreachable Postgres and Redis without their passwords, and fails", async () => {
  const [pgPort, redisPort] = [await freePort(), await freePort()];
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, "test", "run.mjs")], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      TEST_DATABASE_URL: `postgresql://postgres:PWSECRET123@127.0.0.1:${pgPort}/postgres`,
      TEST_REDIS_URL: `redis://:REDISSECRET456@127.0.0.1:${redisPort}`,
    },
    encoding: "utf8",
    timeout: 30_000,
  });
  const printed = run.stdout + run.stderr;
  expect(run.status, printed).toBe(1);
  expect(printed).not.toMatch(/PWSECRET123|REDISSECRET456/);
  expect(run.stderr).toContain(`Postgres at postgresql://127.0.0.1:${pgPort}/*** (set TEST_DATABASE_URL`);
  expect(run.stderr).toContain(`Redis at redis://127.0.0.1:${redisPort}/*** (set TEST_REDIS_URL`);
  // The one last line the README promises, in the form of a run's (test/run.mjs's last line).
  expect(run.stderr.trim().split("\n").at(-1)).toBe("0 passed, 1 failed, 0 skipped");
  expect(readFileSync(path.join(REPO_ROOT, "README.md"), "utf8")).toContain(
    "`npm test` ends with one line `N passed, N failed, N skipped`",
  );
});
