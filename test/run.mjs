#!/usr/bin/env node
// The README's test command (`npm test`). Runs the whole vitest suite once (the indexer on PGlite),
// then the indexer suite again on Postgres, and prints one plain `N passed, N failed, N skipped` line with
// the real counts from vitest's JSON reporter (CI reads that line).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { tsImport } from "tsx/esm/api";

// URLs as every production process prints them (scheme and host; user info, path and query masked): a CI log
// must not carry TEST_DATABASE_URL's or TEST_REDIS_URL's password.
const { redactUrl } = await tsImport("../api/redact.ts", import.meta.url);

const pgUrl = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const extra = process.argv.slice(2);

// Many suites need a real Postgres and Redis; without them vitest would print dozens of ECONNREFUSED
// failures that hide the cause. Check both up front (TCP connect, 1 s each) and say what is missing.
function reachable(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const port = Number(u.port) || (u.protocol.startsWith("redis") ? 6379 : 5432);
    const socket = net.connect({ host: u.hostname, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
const missing = [];
if (!(await reachable(pgUrl)))
  missing.push(`Postgres at ${redactUrl(pgUrl)} (set TEST_DATABASE_URL, or start one: trust auth, user postgres)`);
if (!(await reachable(redisUrl)))
  missing.push(`Redis at ${redactUrl(redisUrl)} (set TEST_REDIS_URL, or start redis-server on 127.0.0.1:6379)`);
if (missing.length > 0) {
  console.error(`Tests need services that are not reachable:\n${missing.map((m) => `  - ${m}`).join("\n")}`);
  console.error("0 passed, 1 failed, 0 skipped");
  process.exit(1);
}
const out = mkdtempSync(path.join(tmpdir(), "vitest-json-"));

function run(label, args, env) {
  const file = path.join(out, `${label}.json`);
  console.log(`\n=== ${label}: vitest run ${args.join(" ")}`);
  const res = spawnSync(
    process.execPath,
    [
      "node_modules/vitest/vitest.mjs",
      "run",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${file}`,
      ...args,
    ],
    { stdio: "inherit", env: { ...process.env, NO_COLOR: "1", PONDER_TELEMETRY_DISABLED: "true", ...env } },
  );
  if (!existsSync(file)) {
    console.error(`${label}: vitest wrote no report (exit ${res.status}); counting the run as one failure`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  let failed = report.numFailedTests;
  let skipped = report.numPendingTests + report.numTodoTests;
  // A file can fail outside any test: it does not load, or a beforeAll/afterAll hook throws. vitest then
  // reports the tests it never ran as skipped; here they count as failed (at least one per such file).
  for (const f of report.testResults) {
    if (f.status !== "failed" || f.assertionResults.some((a) => a.status === "failed")) continue;
    const unrun = f.assertionResults.filter((a) => a.status !== "passed").length;
    failed += Math.max(1, unrun);
    skipped -= unrun;
  }
  return { passed: report.numPassedTests, failed, skipped };
}

const runs = [];
if (extra.length > 0) {
  runs.push(run("selected", extra, { TEST_REDIS_URL: redisUrl, TEST_DATABASE_URL: pgUrl }));
} else {
  runs.push(run("all (PGlite)", [], { TEST_REDIS_URL: redisUrl, TEST_DATABASE_URL: pgUrl }));
  if (existsSync("test/indexer")) {
    runs.push(
      run("indexer (Postgres)", ["test/indexer"], {
        TEST_REDIS_URL: redisUrl,
        TEST_DATABASE_URL: pgUrl,
        DATABASE_URL: pgUrl,
      }),
    );
  }
}
rmSync(out, { recursive: true, force: true });

const total = runs.reduce(
  (a, r) => ({ passed: a.passed + r.passed, failed: a.failed + r.failed, skipped: a.skipped + r.skipped }),
  {
    passed: 0,
    failed: 0,
    skipped: 0,
  },
);
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed > 0 || total.passed === 0 ? 1 : 0);
