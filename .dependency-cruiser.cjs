/**
 * The import rules of the house (`npm run lint:deps`, run by CI). The layers, top to bottom, as
 * docs/architecture.md orders them ("Layers"):
 *
 *   5 server        api/server/, src/api/            a serving process: socket guards, assembly, entry points
 *   4 composition   api/app.ts, api/routes.ts, api/openapi/   mounts the features; reads their route definitions
 *   3 features      api/supply/, api/mcp/, api/index/, api/graphql/   side by side, none imports another
 *     (live)        api/live/                        what the stream (api/index) and the webhooks share: topics,
 *                                                    their answers, block times; below both, above the read model
 *   2 read model    api/read/, api/deps.ts           the index's contract and runtime; what features are given
 *   1 edge          api/http/, api/route/            request middleware, errors, params, the route vocabulary
 *   0 platform      api/{chain,cache,ratelimit,observability,net,math,startup}/, api/*.ts, abis/, indexer/
 *
 * An import may only point down (or stay within its layer, without a cycle). Type imports count
 * (tsPreCompilationDeps), so a types-only cycle is still a cycle.
 */
const FEATURES = "^api/(supply|mcp|index|graphql)/";
const PLATFORM = [
  "^api/(chain|cache|ratelimit|observability|net|math|startup)/",
  "^api/(config|manifest|paths|redact|redis|buildInfo|launchPreflight)\\.ts$",
  "^abis/",
  "^indexer/",
];
const EDGE = "^api/(http|route)/";
const READ_MODEL = ["^api/read/", "^api/deps\\.ts$"];
const LIVE = "^api/live/";
const COMPOSITION = ["^api/(app|routes)\\.ts$", "^api/openapi/"];
const SERVER = ["^api/server/", "^src/api/"];
module.exports = {
  forbidden: [
    {
      name: "platform-imports-down-only",
      severity: "error",
      comment: "The platform (layer 0) knows nothing of requests, the read model, features or the server.",
      from: { path: PLATFORM },
      to: { path: [EDGE, ...READ_MODEL, LIVE, FEATURES, ...COMPOSITION, ...SERVER] },
    },
    {
      name: "edge-imports-down-only",
      severity: "error",
      comment: "The edge and the route vocabulary (layer 1) serve every feature and know none of them.",
      from: { path: EDGE },
      to: { path: [...READ_MODEL, LIVE, FEATURES, ...COMPOSITION, ...SERVER] },
    },
    {
      name: "read-model-below-features",
      severity: "error",
      comment:
        "REST, GraphQL and MCP reach the index through api/read (its contract and runtime); it knows none of them.",
      from: { path: READ_MODEL },
      to: { path: [LIVE, FEATURES, ...COMPOSITION, ...SERVER] },
    },
    {
      name: "live-below-the-stream-and-webhooks",
      severity: "error",
      comment:
        "api/live holds what the stream (api/index) and the webhooks share; it imports neither, nor any feature, " +
        "the composition root or the server.",
      from: { path: LIVE },
      to: { path: [FEATURES, "^api/webhooks/", ...COMPOSITION, ...SERVER] },
    },
    {
      name: "webhooks-never-import-the-index-routes",
      severity: "error",
      comment: "The webhooks reach the stream's topics and answers through api/live, never api/index.",
      from: { path: "^api/webhooks/" },
      to: { path: "^api/index/" },
    },
    {
      name: "index-routes-never-import-webhooks",
      severity: "error",
      comment:
        "The app (api/app.ts) mounts the webhook routes beside the index routes; api/index knows nothing of them.",
      from: { path: "^api/index/" },
      to: { path: "^api/webhooks/" },
    },
    {
      name: "features-never-import-each-other",
      severity: "error",
      comment: "Features sit side by side over the read model and the platform: what two share moves down a layer.",
      from: { path: FEATURES },
      to: { path: FEATURES, pathNot: "^api/$1/" },
    },
    {
      name: "features-import-down-only",
      severity: "error",
      comment: "A feature is given what it needs (api/deps.ts); it never reaches the composition root or the server.",
      from: { path: FEATURES },
      to: { path: [...COMPOSITION, ...SERVER] },
    },
    {
      name: "composition-below-the-server",
      severity: "error",
      comment: "The app and its route table are assembled into a process by api/server, never the other way.",
      from: { path: COMPOSITION },
      to: { path: SERVER },
    },
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
