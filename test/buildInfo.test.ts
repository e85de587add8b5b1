/**
 * One version (issue 29 item 4): package.json's `version` is what /health, `api_build_info`, the OpenAPI document's
 * `info.version` and MCP's `serverInfo.version` say — in process (the sources) and on the API process as operators
 * run it (the bundle, stamped by `npm run build`) — and the commit is the one the code came from, or "unknown",
 * never another (api/sourceStamp.mjs).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../api/app";
import { buildInfo } from "../api/buildInfo";
import { loadConfig } from "../api/config";
import { silentLogger } from "../api/observability/logger";
import { checkoutCommit, packageVersion, sourceStamp } from "../api/sourceStamp.mjs";
import { indexlessApiPerFile } from "./support/indexlessApi";
import { REPO_ROOT } from "./support/ponder";

const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** Everything a process says about its build, asked over `fetch` (the app's request, or a served process's). */
async function whatItSays(request: (path: string, init?: RequestInit) => Promise<Response>) {
  const health = (await (await request("/health")).json()) as { version?: string };
  const metrics = await (await request("/api/metrics")).text();
  const openapi = (await (await request("/api/mcp/v1/openapi.json")).json()) as { info: { version: string } };
  const mcp = await request("/api/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "build-info", version: "1" } },
    }),
  });
  const serverInfo = ((await mcp.json()) as { result: { serverInfo: { version: string } } }).result.serverInfo;
  const gauge = metrics.split("\n").filter((l) => l.startsWith("api_build_info"));
  return { health: health.version, gauge, openapi: openapi.info.version, mcp: serverInfo.version };
}

const gaugeLine = (commit: string) =>
  `api_build_info{version="${VERSION}",commit="${commit}",node="${process.version}"} 1`;

describe("package.json's version", () => {
  it("is a release's semver and has its entry, with a date, in CHANGELOG.md", () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(packageVersion(REPO_ROOT)).toBe(VERSION);
    const changelog = readFileSync(path.join(REPO_ROOT, "CHANGELOG.md"), "utf8");
    expect(changelog).toMatch(new RegExp(`^## \\[${VERSION.replace(/\./g, "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m"));
    // Its lockfile says the same (npm version writes both).
    const lock = JSON.parse(readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8"));
    expect([lock.version, lock.packages[""].version]).toEqual([VERSION, VERSION]);
  });
});

describe("the commit of a checkout (api/sourceStamp.mjs)", () => {
  let dir: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "stamp-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the HEAD commit when the tree is the commit's, -dirty when a file differs or is new, unknown outside git", () => {
    const repo = path.join(dir, "repo");
    mkdirSync(repo);
    writeFileSync(path.join(repo, "package.json"), JSON.stringify({ version: "1.2.3" }));
    expect(sourceStamp(repo)).toEqual({ version: "1.2.3", commit: "unknown" }); // no repository at all
    git(repo, "init", "-q");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "one");
    const head = git(repo, "rev-parse", "HEAD").trim();
    expect(checkoutCommit(repo)).toBe(head);
    writeFileSync(path.join(repo, "package.json"), JSON.stringify({ version: "1.2.4" }));
    expect(checkoutCommit(repo)).toBe(`${head}-dirty`);
    git(repo, "checkout", "-q", "package.json");
    writeFileSync(path.join(repo, "new.ts"), "export {};\n");
    expect(checkoutCommit(repo)).toBe(`${head}-dirty`);
  });

  it("a folder inside another repository is not that repository's commit: unknown", () => {
    const inner = path.join(dir, "repo", "vendor", "copy");
    mkdirSync(inner, { recursive: true });
    expect(checkoutCommit(inner)).toBe("unknown");
  });

  it("a version that is not semver stops the build", () => {
    const bad = path.join(dir, "bad");
    mkdirSync(bad);
    writeFileSync(path.join(bad, "package.json"), JSON.stringify({ version: "v1" }));
    expect(() => packageVersion(bad)).toThrow(/not a semver/);
  });
});

describe("in process (the sources)", () => {
  it("/health, api_build_info, OpenAPI info.version and MCP serverInfo.version say package.json's version", async () => {
    const app = createApp({ config: loadConfig({ NETWORK: "base" }), rpc: null, logger: silentLogger });
    const said = await whatItSays(async (p, init) => app.request(p, init));
    expect(said).toEqual({
      health: VERSION,
      gauge: [gaugeLine(checkoutCommit(REPO_ROOT))],
      openapi: VERSION,
      mcp: VERSION,
    });
    expect(buildInfo()).toEqual({ version: VERSION, commit: checkoutCommit(REPO_ROOT), node: process.version });
  });
});

describe("the API process (the bundle npm run build stamped)", () => {
  const api = indexlessApiPerFile();

  it("says the same version everywhere, and the commit this checkout is at (the build ran on it, globalSetup)", async () => {
    const said = await whatItSays((p, init) => fetch(`${api().url}${p}`, init));
    expect(said).toEqual({
      health: VERSION,
      gauge: [gaugeLine(checkoutCommit(REPO_ROOT))],
      openapi: VERSION,
      mcp: VERSION,
    });
  });

  it("the bundle carries its stamp: GIT_COMMIT when given (a container build), refused when not a commit", () => {
    const build = (env: Record<string, string>) =>
      spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build.mjs")], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
    const bundle = () => readFileSync(path.join(REPO_ROOT, "dist", "server", "main.js"), "utf8");
    const bad = build({ GIT_COMMIT: "main; rm -rf /" });
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringMatching(/is not a commit/)]);
    try {
      const given = build({ GIT_COMMIT: "0123456789abcdef0123456789abcdef01234567" });
      expect(given.status, given.stderr).toBe(0);
      expect(given.stdout).toContain(`(${VERSION}, commit 0123456789abcdef0123456789abcdef01234567)`);
      expect(bundle()).toContain(`{ version: "${VERSION}", commit: "0123456789abcdef0123456789abcdef01234567" }`);
    } finally {
      const again = build({ GIT_COMMIT: "" });
      expect(again.status, again.stderr).toBe(0);
      expect(bundle()).toContain(`commit: "${checkoutCommit(REPO_ROOT)}"`);
    }
  });
});
