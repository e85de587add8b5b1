import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * Read by Ponder's build (its vite-node runs ponder.config.ts, ponder.schema.ts and src/, so also the API that
 * `npm start` serves inside Ponder: src/api/index.ts) and by vitest (vitest.config.ts takes `resolve` from here).
 * graphql 16 has no exports map: Node (the built API process, tsx, and graphql-yoga / graphql-jit wherever they run)
 * loads its CommonJS main for every importer, but vite would give our sources its "module" build — two graphql
 * realms, whose types graphql refuses to mix ("Cannot use GraphQLNonNull … from another module or realm" on the
 * first compiled query). Resolve it as Node does.
 */
export default {
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }] },
};
