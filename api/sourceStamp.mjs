/**
 * Which release and which commit a checkout is: one definition for `npm run build`, which stamps it into the
 * bundle (scripts/build.mjs, under plain Node: hence JavaScript), and for the sources run as they are
 * (api/buildInfo.ts). The release is package.json's `version`, the one place it is written.
 *
 * The commit is `git rev-parse HEAD`, with `-dirty` when the work tree differs from it (tracked changes or new
 * files), so a build never claims a commit it was not made from; "unknown" when there is no git, or the folder is
 * not the top of its own work tree (a copy inside another repository would otherwise name that one's commit).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";

export const UNKNOWN_COMMIT = "unknown";

/** A commit as git names it (7 to 40 hex digits), `-dirty` when the tree differed, or "unknown". */
export const COMMIT_PATTERN = /^(?:[0-9a-f]{7,40}(?:-dirty)?|unknown)$/;

/** `root`'s package.json version and the commit its work tree is at. */
export function sourceStamp(root) {
  return { version: packageVersion(root), commit: checkoutCommit(root) };
}

export function packageVersion(root) {
  const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  if (typeof version !== "string" || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version))
    throw new Error(`package.json's version is not a semver version: ${JSON.stringify(version)}`);
  return version;
}

export function checkoutCommit(root) {
  const git = (...args) =>
    execFileSync("git", args, {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 5_000,
    }).trim();
  try {
    if (realpathSync(git("rev-parse", "--show-toplevel")) !== realpathSync(root)) return UNKNOWN_COMMIT;
    const head = git("rev-parse", "HEAD");
    return git("status", "--porcelain") === "" ? head : `${head}-dirty`;
  } catch {
    return UNKNOWN_COMMIT;
  }
}
