/**
 * Only public APIs of dependencies (issue 22 item 7): the code of the running processes and the devnet — api/, src/,
 * indexer/, devnet/, Ponder's config and schema — names a package only by its root, its package.json, or a subpath its
 * package.json `exports` lists. dependency-cruiser refuses static imports of anything else (`npm run lint:deps`, rule
 * only-public-package-paths); this test covers what it cannot see: require(), createRequire(…)(…),
 * require.resolve(), and a private directory spelled out in code (path.join(viemDir, "_cjs", …)).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/ponder";

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|mts|mjs|js)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

const FILES = [
  ...["api", "src", "indexer", "devnet"].flatMap(sourceFiles),
  path.join(REPO_ROOT, "ponder.config.ts"),
  path.join(REPO_ROOT, "ponder.schema.ts"),
];

/** The code without its comments (strings, template literals and regular expressions kept as they are). */
function withoutComments(text: string): string {
  let out = "";
  let i = 0;
  let quote: string | null = null;
  while (i < text.length) {
    const c = text[i]!;
    if (quote) {
      out += c;
      if (c === "\\") {
        out += text[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      quote = c;
      out += c;
      i++;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end === -1 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Every module specifier the code names: imports, dynamic imports, require(), createRequire(…)(…), resolve(). */
function specifiersIn(code: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*\(?\s*["']([^"']+)["']/g,
    /\brequire\s*\(\s*["']([^"']+)["']/g,
    /\)\s*\(\s*["']([^"']+)["']\s*\)/g, // createRequire(import.meta.url)("x")
    /\.resolve\s*\(\s*["']([^"']+)["']/g,
  ];
  for (const p of patterns) for (const m of code.matchAll(p)) found.push(m[1]!);
  return found;
}

const bare = (s: string) =>
  !s.startsWith(".") &&
  !s.startsWith("/") &&
  !s.startsWith("node:") &&
  !s.startsWith("ponder:") &&
  !builtinModules.includes(s) &&
  /^(@[a-z0-9._-]+\/)?[a-z0-9._-]+(\/.*)?$/i.test(s);

/** Whether `specifier` is something its package makes public (see the file comment). */
function isPublic(specifier: string): boolean {
  const parts = specifier.split("/");
  const name = parts.slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
  const sub = specifier.slice(name.length);
  if (sub === "" || sub === "/package.json") return true;
  const manifest = path.join(REPO_ROOT, "node_modules", name, "package.json");
  if (!existsSync(manifest)) return false;
  const exportsField = (JSON.parse(readFileSync(manifest, "utf8")) as { exports?: unknown }).exports;
  // Without an exports map a package declares no subpath public: only its root.
  if (typeof exportsField !== "object" || exportsField === null) return false;
  const wanted = `.${sub}`;
  return Object.keys(exportsField).some((key) => {
    if (!key.includes("*")) return key === wanted;
    const [head = "", tail = ""] = key.split("*");
    return wanted.startsWith(head) && wanted.endsWith(tail) && wanted.length >= head.length + tail.length;
  });
}

/** A package's private directory spelled out as a string (the shape of loading a file by its path). */
const PRIVATE_DIR =
  /["'`][^"'`\n]*\b(?:node_modules|_cjs|_esm|_types|dist\/(?:esm|cjs|types))\b[^"'`\n]*["'`]|\.resolve\.paths\s*\(/;

describe("only public APIs of dependencies", () => {
  it("the rules themselves: a private subpath is refused, an exported one accepted", () => {
    expect(isPublic("viem")).toBe(true);
    expect(isPublic("viem/accounts")).toBe(true);
    expect(isPublic("viem/package.json")).toBe(true);
    expect(isPublic("viem/_cjs/constants/contracts.js")).toBe(false);
    expect(isPublic("ponder/dist/esm/internal/metrics.js")).toBe(false);
    expect(isPublic("@modelcontextprotocol/sdk/server/index.js")).toBe(true);
    expect(isPublic("pg/lib/client.js")).toBe(true); // pg exports ./lib/*
    expect(isPublic("solc/wrapper")).toBe(false); // no exports map: only the root
    const code = withoutComments(`// require("viem/_cjs/x.js")
      const a = createRequire(import.meta.url)("viem/_cjs/constants/contracts.js"); /* import "nope/_esm/a" */
      const url = "http://127.0.0.1:8545"; // a URL is not a comment
      const b = require.resolve("@foundry-rs/anvil-linux-amd64/package.json");`);
    expect(specifiersIn(code)).toEqual([
      "viem/_cjs/constants/contracts.js",
      "@foundry-rs/anvil-linux-amd64/package.json",
    ]);
    expect(code).toContain('"http://127.0.0.1:8545"');
    expect(PRIVATE_DIR.test('path.join(viemDir, "_cjs", "constants")')).toBe(true);
    // A package's build folder found by walking Node's search paths: the exports map bypassed another way.
    expect(PRIVATE_DIR.test('import(ponderFile("dist/esm/graphql/index.js"))')).toBe(true);
    expect(PRIVATE_DIR.test('createRequire(import.meta.url).resolve.paths("ponder")')).toBe(true);
  });

  it("every specifier in api/, src/, indexer/, devnet/ and Ponder's config names a public part of its package", () => {
    const refused: string[] = [];
    let count = 0;
    for (const file of FILES) {
      for (const s of specifiersIn(withoutComments(readFileSync(file, "utf8")))) {
        if (!bare(s)) continue;
        count++;
        if (!isPublic(s)) refused.push(`${path.relative(REPO_ROOT, file)}: ${s}`);
      }
    }
    expect(count).toBeGreaterThan(50);
    expect(refused).toEqual([]);
  });

  it("no code spells out a package's private directory (node_modules, _cjs, _esm, _types, dist/esm…) or walks the search paths", () => {
    const found = FILES.flatMap((file) =>
      withoutComments(readFileSync(file, "utf8"))
        .split("\n")
        .filter((line) => PRIVATE_DIR.test(line))
        .map((line) => `${path.relative(REPO_ROOT, file)}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });
});
