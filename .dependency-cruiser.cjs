/**
 * The import rules of the house (`npm run lint:deps`, run by CI). The graph reads
 * app → routes → features → platform; type imports count (tsPreCompilationDeps), so a types-only
 * cycle is still a cycle.
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No module may reach itself through its imports (type imports included).",
      from: {},
      to: { circular: true },
    },
    {
      name: "nothing-imports-the-app",
      severity: "error",
      comment:
        "api/app.ts assembles the routes; features take their dependencies' shape from api/deps.ts. " +
        "Only entry points (the server, Ponder's API file) import the app.",
      from: { path: "^api/", pathNot: ["^api/app\\.ts$", "^api/server/"] },
      to: { path: "^api/app\\.ts$" },
    },
    {
      name: "indexer-stays-out-of-http",
      severity: "error",
      comment: "The indexer (indexer/, src/ outside src/api, ponder.config.ts) never imports the HTTP service.",
      from: { path: ["^indexer/", "^src/(?!api/)", "^ponder\\.config\\.ts$"] },
      to: { path: "^api/(http|mcp|supply|openapi|observability|ratelimit|cache|server|startup)/" },
    },
    {
      name: "only-public-package-paths",
      severity: "error",
      comment:
        "Only what a package exports is ours to import (issue 22 item 7): its entry points and the subpaths its " +
        "package.json `exports` lists. Resolution honours `exports` (options below), so a private file of a " +
        "package — viem/_cjs/…, ponder/dist/esm/internal/…, any path its exports map leaves out — does not " +
        "resolve and is refused here, as is a package that is not installed. test/production/publicApis.test.ts " +
        "holds the same line for what this cannot see: require(), createRequire(…)(…) and require.resolve().",
      from: { path: ["^(api|src|indexer|devnet)/", "^ponder\\.config\\.ts$"] },
      // Ponder's virtual modules exist only inside `ponder start|serve`.
      to: { couldNotResolve: true, pathNot: "^ponder:(api|registry|schema)$" },
    },
    {
      name: "production-code-never-imports-tests",
      severity: "error",
      from: { path: "^(api|src|indexer|devnet)/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^ponder-env\\.d\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".js", ".mjs", ".json"],
      // As Node resolves a package: through its `exports` map when it has one (only-public-package-paths).
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
  },
};
