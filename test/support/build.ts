/**
 * The API process runs as production runs it: the bundle `npm run build` makes (dist/server/main.js), under
 * plain Node. Tests and benches build first (about a second once the docs assets are compressed), so what
 * they spawn is the code of this checkout, never a stale dist/.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./ponder";

/** Node's flags in `npm run serve:api` (`exec node <flags> dist/server/main.js`), the one place they are written. */
export const API_NODE_FLAGS: string[] = (() => {
  const script: string = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).scripts["serve:api"];
  const m = /^exec node((?: --[\w-]+(?:=\S+)?)*) dist\/server\/main\.js$/.exec(script);
  if (!m) throw new Error(`serve:api is not "exec node <flags> dist/server/main.js": ${script}`);
  return m[1]!.trim().split(" ");
})();

/** `npm run serve:api` without npm: the same file under the same flags. */
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
