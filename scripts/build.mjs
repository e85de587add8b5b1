#!/usr/bin/env node
/**
 * `npm run build`: what production runs, built once so no transpiler runs in production.
 *
 * - dist/server/main.js: the API process (api/server/main.ts) as one ES module with the packages it uses bundled
 *   in (issue 33: resolving and loading ~2,000 modules from 83 packages took most of its start-up; one file starts
 *   ~2.5× sooner and idles ~25 MB lower, and holds one copy of each package, graphql included). What cannot be
 *   bundled stays external and is listed in dist/server/externals.json (pg's optional native binding). A source map
 *   beside it (for mapping a logged stack back to the sources: docs/operations.md). CommonJS packages in the bundle get Node's `require` from the banner. It carries the release
 *   (package.json's version) and the commit it was built from (api/buildInfo.ts): GIT_COMMIT when given (the
 *   container's build has no .git: `--build-arg GIT_COMMIT=$(git rev-parse HEAD)`), else the checkout's own
 *   (`-dirty` when the tree differs from it), else "unknown" (api/sourceStamp.mjs).
 * - dist/deployments/: the manifests the API reads (api/manifest.ts resolves them beside the bundle).
 * - dist/static/: the docs UI's assets under content-hashed names, each beside its brotli and gzip forms,
 *   and manifest.json naming them (api/http/staticAssets.ts serves from it). The Scalar bundle comes
 *   from the pinned @scalar/api-reference, a devDependency: the 170 MB package stays out of production.
 *
 * Compression (brotli 11 takes ~8 s on this bundle) is skipped when the hashed file is already there, so a
 * rebuild takes about a second. `--check` exits 1 when dist/ is missing what a build makes (used by the tests).
 */
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { COMMIT_PATTERN, checkoutCommit, packageVersion } from "../api/sourceStamp.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const staticDir = path.join(dist, "static");
const require = createRequire(import.meta.url);

/** The static assets: the name the app asks for → where its bytes come from. */
const ASSETS = {
  "scalar.js": () =>
    path.join(path.dirname(require.resolve("@scalar/api-reference/style.css")), "browser", "standalone.js"),
  "docs-init.js": () => path.join(root, "api", "openapi", "assets", "docs-init.js"),
};
const TYPES = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8" };

/**
 * The build's tools are dev dependencies (esbuild; the Scalar package whose browser bundle is copied), absent from a
 * production install (`npm ci --omit=dev`): say so before writing anything, instead of failing half-way.
 */
function checkTools() {
  const missing = ["esbuild", "@scalar/api-reference/style.css"].filter((id) => {
    try {
      require.resolve(id);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  console.error(
    `npm run build needs the dev dependencies (missing: ${missing.join(", ")}); this looks like a production ` +
      "install (npm ci --omit=dev). Build where `npm ci` installed everything, then ship dist/ with the checkout " +
      "(docs/operations.md, Bare metal).",
  );
  process.exit(1);
}

/** The release and commit the bundle says it is (api/buildInfo.ts reads them as __BUILD_STAMP__). */
function buildStamp() {
  const given = process.env.GIT_COMMIT?.trim();
  if (given && !COMMIT_PATTERN.test(given)) {
    console.error(`GIT_COMMIT=${given} is not a commit (7-40 hex digits, optionally -dirty, or unknown)`);
    process.exit(1);
  }
  return { version: packageVersion(root), commit: given || checkoutCommit(root) };
}

const OPTIONAL_BINDINGS = ["pg-native", "bufferutil", "utf-8-validate"];
const builtin = (id) => id.startsWith("node:") || builtinModules.includes(id.split("/")[0]);

async function buildServer(stamp) {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: { "server/main": path.join(root, "api", "server", "main.ts") },
    outdir: dist,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    // Optional bindings their packages require inside a try (pg's native client, which we never ask for; ws's
    // native helpers): absent from the install, so they stay external and the packages fall back.
    external: OPTIONAL_BINDINGS,
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    legalComments: "linked",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    define: { __BUILD_STAMP__: JSON.stringify(stamp) },
  });
  asciiOnly(path.join(dist, "server", "main.js"));
  const externals = new Set();
  // (esbuild lists a `define` as an import of its own, `<define:NAME>`: not a package.)
  for (const input of Object.values(result.metafile.inputs))
    for (const i of input.imports) if (i.external && !builtin(i.path) && !i.path.startsWith("<")) externals.add(i.path);
  writeFileSync(path.join(dist, "server", "externals.json"), `${JSON.stringify([...externals].sort(), null, 2)}\n`);
}

/**
 * V8 keeps each module's source for the process's life, as one string: one-byte when every character is Latin-1,
 * else two bytes per character. esbuild escapes what it prints of strings, templates and regular expressions
 * (`charset: "ascii"`, its default) but keeps the comments it preserves as written, and ~80 non-ASCII characters in
 * them (—, ≤, §) made the 5.4 MB bundle a 10.4 MB string in every API process (a heap snapshot at rest, issue 33).
 * Each non-ASCII UTF-16 unit left is written as a `\uXXXX` escape: in a comment it is text, in code it means the
 * same character (what esbuild itself writes). Columns after it on its line move in the source map.
 */
function asciiOnly(file) {
  const text = readFileSync(file, "utf8");
  if (!/[\u0080-\uffff]/.test(text)) return;
  writeFileSync(
    file,
    text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  );
}

function copyDeployments() {
  const out = path.join(dist, "deployments");
  rmSync(out, { recursive: true, force: true });
  cpSync(path.join(root, "deployments"), out, { recursive: true });
}

function buildStatic() {
  mkdirSync(staticDir, { recursive: true });
  const manifest = {};
  const keep = new Set(["manifest.json"]);
  for (const [name, source] of Object.entries(ASSETS)) {
    const bytes = readFileSync(source());
    const hash = createHash("sha256").update(bytes).digest("base64url").slice(0, 16);
    const ext = path.extname(name);
    const file = `${path.basename(name, ext)}.${hash}${ext}`;
    const forms = { identity: file, br: `${file}.br`, gzip: `${file}.gz` };
    const target = (f) => path.join(staticDir, f);
    if (!existsSync(target(forms.br)) || !existsSync(target(forms.gzip)) || !existsSync(target(file))) {
      writeFileSync(target(file), bytes);
      writeFileSync(target(forms.gzip), gzipSync(bytes, { level: 9 }));
      writeFileSync(
        target(forms.br),
        brotliCompressSync(bytes, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          },
        }),
      );
    }
    for (const f of Object.values(forms)) keep.add(f);
    manifest[name] = { file, hash, type: TYPES[ext] ?? "application/octet-stream", encodings: forms };
  }
  // Files of earlier builds (other hashes) go: the image ships only what manifest.json names.
  for (const f of readdirSync(staticDir)) if (!keep.has(f)) rmSync(path.join(staticDir, f));
  writeFileSync(path.join(staticDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

if (process.argv.includes("--check")) {
  const need = ["server/main.js", "deployments", "static/manifest.json"].map((f) => path.join(dist, f));
  const missing = need.filter((f) => !existsSync(f));
  if (missing.length) {
    console.error(`not built (run npm run build): ${missing.join(", ")}`);
    process.exit(1);
  }
  process.exit(0);
}

const started = performance.now();
checkTools();
const stamp = buildStamp();
await buildServer(stamp);
copyDeployments();
buildStatic();
console.log(`built dist/ (${stamp.version}, commit ${stamp.commit}) in ${Math.round(performance.now() - started)} ms`);
