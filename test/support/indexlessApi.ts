/**
 * An API process (dist/server/main.js, `npm run serve:api`) with no index and no Redis — no DATABASE_URL, no REDIS_URL
 * — over a fresh devnet: for the tests of what needs the process itself but no index (its probes, its build, its
 * sockets). Started before the tests of the file or `describe` that calls it, stopped after them.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startDevnet, type TestDevnet } from "./devnet";
import { writeManifest } from "./ponder";
import { type ServiceChild, spawnService } from "./replica";

/** The process once it answers /health; `env` is added to its environment (LOG_LEVEL is "error" unless given). */
export function indexlessApiPerFile(env: Record<string, string> = {}): () => ServiceChild {
  let devnet: TestDevnet | undefined;
  let manifestFile: string | undefined;
  let api: ServiceChild | undefined;
  beforeAll(async () => {
    devnet = await startDevnet();
    manifestFile = writeManifest(devnet.deployment.manifest);
    api = await spawnService({
      command: "api",
      rpcUrl: devnet.rpcUrl,
      manifestFile,
      schema: "unused",
      env: { LOG_LEVEL: "error", REDIS_URL: "", ...env },
    });
    await api.waitFor200("/health", 60_000);
  }, 120_000);
  afterAll(async () => {
    await api?.stop("SIGKILL");
    await devnet?.stop();
    if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
  });
  return () => {
    if (!api) throw new Error("the API process has not started");
    return api;
  };
}
