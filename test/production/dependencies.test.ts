/**
 * A production install (`npm install --omit=dev`) must run what the README tells operators to run: the API
 * process (`npm run serve:api`) and the indexer (`npm run serve:indexer`). So every package their code imports
 * — api/, src/, ponder.config.ts, ponder.schema.ts — and every tool their scripts start is in `dependencies`,
 * not `devDependencies` (@hono/node-server, drizzle-orm and tsx once were). The API process runs the bundle
 * `npm run build` makes: no transpiler at run time, and the build's tools (esbuild, tsx, the Scalar package
 * whose browser bundle the build copies) stay dev-only.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildOnce } from "../support/build";
import { REPO_ROOT } from "../support/ponder";

const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

const builtin = (specifier: string) => specifier.startsWith("node:") || builtinModules.includes(specifier);

describe("what the production processes need is a runtime dependency", () => {
  const files = [
    ...sourceFiles("api"),
    ...sourceFiles("src"),
    path.join(REPO_ROOT, "ponder.config.ts"),
    path.join(REPO_ROOT, "ponder.schema.ts"),
  ];

  it("every package imported by api/, src/ and Ponder's config and schema", () => {
    const imported = new Map<string, string>();
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/(?<![\w"])(?:from|import)\s*\(?\s*"([^"./][^"]*)"/g)) {
        const specifier = m[1]!;
        // Ponder's virtual modules (ponder:api, ponder:registry, ponder:schema) come with ponder itself.
        if (builtin(specifier) || specifier.startsWith("ponder:")) continue;
        imported.set(packageOf(specifier), path.relative(REPO_ROOT, file));
      }
    }
    expect(imported.size).toBeGreaterThan(5);
    const missing = [...imported].filter(([name]) => !(name in pkg.dependencies));
    expect(missing).toEqual([]);
  });

  it("every tool the serving scripts start, and no transpiler: the API process is the built bundle", () => {
    expect(pkg.scripts["serve:api"]).toBe(
      "exec env LD_PRELOAD=libjemalloc.so.2 MALLOC_CONF=background_thread:true,muzzy_decay_ms:0 NODE_COMPILE_CACHE=.cache/node-compile-cache node --min-semi-space-size=16 --max-semi-space-size=16 --no-allocation-site-pretenuring --heap-growing-percent=50 --v8-pool-size=1 dist/server/main.js",
    );
    // The container runs the same command without npm (docs/operations.md): same allocator, same flags, same file.
    const dockerfile = readFileSync(path.join(REPO_ROOT, "Dockerfile"), "utf8");
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];
    expect(`exec ${cmd.join(" ")}`).toBe(pkg.scripts["serve:api"]);
    for (const transpiler of ["tsx", "ts-node", "esbuild", "typescript", "@swc/core", "@scalar/api-reference"])
      expect(pkg.dependencies).not.toHaveProperty(transpiler);
    expect(pkg.scripts["serve:indexer"]).toMatch(/^exec ponder start/);
    expect(pkg.dependencies).toHaveProperty("ponder");
  });

  it("a script that runs a long-lived process execs it: a process manager's SIGTERM to npm reaches it", () => {
    // npm runs a script under `sh -c`; without exec the shell sits between npm and the process, and a SIGTERM to
    // npm stopped npm and sh while `ponder start` ran on, reparented (docs/operations.md stops the indexer so).
    const longLived = ["start", "serve:api", "serve:indexer", "dev:api", "devnet:up", "bench", "bench:soak"];
    longLived.push("bench:boards", "bench:boards:history");
    for (const name of longLived) {
      const script = pkg.scripts[name];
      expect(script, name).toBeDefined();
      // The last command of the script (after a build step's &&) is the one left running.
      const last = script!.split("&&").pop()!.trim();
      expect(last, name).toMatch(/^exec /);
      expect(last, name).not.toMatch(/[;|&]/);
    }
  });

  it("the bundle leaves out only optional native bindings its packages require inside a try (npm run build lists them)", () => {
    buildOnce();
    const externals = JSON.parse(readFileSync(path.join(REPO_ROOT, "dist", "server", "externals.json"), "utf8"));
    expect(externals).toEqual(["bufferutil", "pg-native", "utf-8-validate"]);
    // None is installed: the bundle must not count on them.
    for (const name of externals as string[])
      expect(existsSync(path.join(REPO_ROOT, "node_modules", name))).toBe(false);
  });

  it("the bundle is ASCII: V8 holds its source one byte per character (scripts/build.mjs escapes what esbuild keeps)", () => {
    buildOnce();
    const bundle = readFileSync(path.join(REPO_ROOT, "dist", "server", "main.js"), "utf8");
    expect(bundle.length).toBeGreaterThan(1_000_000);
    expect(bundle.match(/[\u0080-\uffff]/g) ?? []).toEqual([]);
  });
});
