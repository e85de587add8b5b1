/**
 * The API process runs as production runs it: the bundle `npm run build` makes (dist/server/main.js), under
 * plain Node. Tests and benches build first (about a second once the docs assets are compressed), so what
 * they spawn is the code of this checkout, never a stale dist/.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./ponder";

/**
 * `npm run serve:api`: `exec [env NAME=VALUE …] node <flags> dist/server/main.js`, the one place its environment and
 * Node's flags are written (the Dockerfile's CMD is the same command: test/production/dependencies.test.ts).
 */
const SERVE_API = (() => {
  const script: string = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).scripts["serve:api"];
  const m = /^exec (?:env((?: \w+=\S+)+) )?node((?: --[\w-]+(?:=\S+)?)*) dist\/server\/main\.js$/.exec(script);
  if (!m) throw new Error(`serve:api is not "exec [env NAME=VALUE …] node <flags> dist/server/main.js": ${script}`);
  const env: Record<string, string> = {};
  for (const pair of (m[1] ?? "").trim().split(" ").filter(Boolean)) {
    const at = pair.indexOf("=");
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { env, flags: m[2]!.trim().split(" ") };
})();

/** Node's flags in `npm run serve:api`. */
export const API_NODE_FLAGS: string[] = SERVE_API.flags;

/** The environment `npm run serve:api` sets for the process (the allocator's, docs/operations.md). */
export const API_PROCESS_ENV: Readonly<Record<string, string>> = SERVE_API.env;

/** `npm run serve:api` without npm: the same file under the same flags (spawned with API_PROCESS_ENV added). */
export const API_PROCESS_ARGS = [...API_NODE_FLAGS, path.join(REPO_ROOT, "dist", "server", "main.js")];

let built = false;

/** Runs scripts/build.mjs once per process; throws with its output when the build fails. */
export function buildOnce(): void {
  if (built) return;
  const res = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build.mjs")], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  if (res.status !== 0) throw new Error(`npm run build failed (exit ${res.status}):\n${res.stdout}${res.stderr}`);
  built = true;
}
