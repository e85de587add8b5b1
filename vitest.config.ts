import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 has no exports map: Node (the built API, tsx) loads its CommonJS main for every importer, but vite
    // would give our sources its "module" build while graphql-yoga gets the CommonJS one — two graphql realms, whose
    // types graphql refuses to mix. Resolve it as Node does.
    alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }],
  },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: "forks",
  },
});
