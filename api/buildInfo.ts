/**
 * What this process runs: the release (package.json's `version`), the commit its code came from and Node's
 * version. One value per process, read by /health (`version`), the `api_build_info` gauge, the OpenAPI
 * document's `info.version` and MCP's `serverInfo.version`.
 *
 * The bundle (`npm run build`) carries the release and commit it was built from, stamped by scripts/build.mjs
 * (esbuild's `define`), so the built process reads no package.json and needs no git. Run from the sources (tsx,
 * Ponder's `npm start`, the tests), the checkout is asked once, when first needed (api/sourceStamp.mjs).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type SourceStamp, sourceStamp } from "./sourceStamp.mjs";

export type BuildInfo = SourceStamp & { node: string };

/** Replaced by scripts/build.mjs with the stamp of the build; undeclared when the sources run as they are. */
declare const __BUILD_STAMP__: SourceStamp | undefined;

let info: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  info ??= {
    ...(typeof __BUILD_STAMP__ === "object" ? __BUILD_STAMP__ : sourceStamp(repoRoot())),
    node: process.version,
  };
  return info;
}

const repoRoot = () => path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
