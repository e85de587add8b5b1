import { defineConfig } from "vitest/config";
import vite from "./vite.config.js";

export default defineConfig({
  // One graphql realm for tests as for Ponder's build (see vite.config.ts).
  resolve: vite.resolve,
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: "forks",
  },
});
