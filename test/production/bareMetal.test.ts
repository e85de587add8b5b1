/**
 * The bare-metal production path of docs/operations.md ("Bare metal"), done in an empty folder: the build machine is
 * this checkout (full install; vitest's globalSetup ran `npm run build`), what it ships is its files and `dist/`,
 * and the production host installs with `npm ci --omit=dev` (from npm's cache: `--prefer-offline`) and runs
 * `npm run serve:api`. On that install `npm run build` must refuse, saying why, and leave `dist/` alone.
 * The indexer from a production install (`ponder start`) is test/production/container.test.ts's: the image's
 * runtime stage is the same install.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkoutCommit, packageVersion } from "../../api/sourceStamp.mjs";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { REPO_ROOT, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

let host: string;
let devnet: TestDevnet | undefined;
let api: ServiceChild | undefined;
let installMs = 0;

/** What the checkout holds (tracked, and new files not ignored): the files `git archive` of this tree would ship. */
function checkoutFiles(): string[] {
  return execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  })
    .split("\n")
    .filter((f) => f && existsSync(path.join(REPO_ROOT, f)));
}

beforeAll(() => {
  expect(spawnSync(process.execPath, ["scripts/build.mjs", "--check"], { cwd: REPO_ROOT }).status).toBe(0);
  host = mkdtempSync(path.join(os.tmpdir(), "bare-metal-"));
  // Step 2: ship the checkout and dist/.
  for (const f of checkoutFiles()) {
    mkdirSync(path.dirname(path.join(host, f)), { recursive: true });
    copyFileSync(path.join(REPO_ROOT, f), path.join(host, f));
  }
  cpSync(path.join(REPO_ROOT, "dist"), path.join(host, "dist"), { recursive: true });
  // Step 3: the production install.
  const t0 = performance.now();
  const npm = spawnSync("npm", ["ci", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: host,
    encoding: "utf8",
    timeout: 300_000,
  });
  installMs = performance.now() - t0;
  expect(npm.status, `${npm.stdout}\n${npm.stderr}`).toBe(0);
  console.log(`npm ci --omit=dev --prefer-offline: ${(installMs / 1000).toFixed(1)} s`);
}, 360_000);

afterAll(async () => {
  await api?.stop("SIGKILL");
  await devnet?.stop();
  // ~260 MB of node_modules: removed in the background, so a busy disk cannot time the hook out.
  if (host) spawnSync("rm", ["-rf", host], { timeout: 60_000 });
});

describe("a production install from the shipped checkout and dist/", () => {
  it("holds no build tool: npm run build refuses, naming the documented path, and leaves dist/ as shipped", () => {
    for (const dev of ["tsx", "@scalar/api-reference", "vitest"])
      expect(existsSync(path.join(host, "node_modules", dev)), dev).toBe(false);
    const bundle = () => readFileSync(path.join(host, "dist", "server", "main.js"), "utf8");
    const before = bundle();
    const build = spawnSync("npm", ["run", "build"], { cwd: host, encoding: "utf8", timeout: 60_000 });
    expect(build.status).not.toBe(0);
    expect(build.stderr).toMatch(/needs the dev dependencies \(missing: esbuild, @scalar\/api-reference/);
    expect(build.stderr).toContain("ship dist/");
    expect(bundle()).toBe(before);
  });

  it("npm run serve:api runs the shipped bundle: /health names the release, api_build_info the build's commit; SIGTERM exits 0", async () => {
    devnet = await startDevnet();
    api = await spawnService({
      command: "api",
      rpcUrl: devnet.rpcUrl,
      manifestFile: writeManifest(devnet.deployment.manifest),
      schema: "none",
      env: { LOG_LEVEL: "warn", REDIS_URL: "" },
      install: { cwd: host, argv: ["npm", "run", "serve:api"] },
    });
    await api.waitFor200("/health", 30_000);
    const health = await (await fetch(`${api.url}/health`)).json();
    expect(health).toEqual({ ok: true, status: "up", version: packageVersion(REPO_ROOT) });
    // The stamp travelled with dist/: the host's folder is no git checkout, yet the commit is the build's.
    expect(checkoutCommit(host)).toBe("unknown");
    const metrics = await (await fetch(`${api.url}/api/metrics`)).text();
    expect(metrics).toContain(`commit="${checkoutCommit(REPO_ROOT)}"`);
    const docs = await fetch(`${api.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await api.stop("SIGTERM")).toEqual({ code: 0, signal: null });
  }, 120_000);
});
