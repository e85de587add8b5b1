/**
 * What the API process (the built dist/server/main.js, `npm run serve:api`) logs at start-up, as an operator reads
 * it: `api configured` names the schema the process reads its index from (DATABASE_VIEWS_SCHEMA when set) beside
 * DATABASE_SCHEMA, which it only checks; and every line on stdout is a log line with `time` and `level`, the
 * `listening` line included — printed whatever LOG_LEVEL says, since supervisors and tests wait for it.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevnet, type TestDevnet } from "../support/devnet";
import { createTestDatabase, type TestDatabase, writeManifest } from "../support/ponder";
import { type ServiceChild, spawnService } from "../support/replica";

const PG_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

let devnet: TestDevnet;
let database: TestDatabase;
let manifestFile: string;
const started: ServiceChild[] = [];

beforeAll(async () => {
  devnet = await startDevnet();
  database = await createTestDatabase(PG_URL);
  manifestFile = writeManifest(devnet.deployment.manifest);
}, 120_000);
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop("SIGKILL")));
  await database?.drop();
  await devnet?.stop();
  if (manifestFile) rmSync(path.dirname(manifestFile), { recursive: true, force: true });
});

/** The API process on views schema `asset` over DATABASE_SCHEMA `asset_v3`; its stdout lines once it listens. */
async function startupLines(logLevel: string, redisUrl = ""): Promise<Record<string, unknown>[]> {
  const api = await spawnService({
    command: "api",
    rpcUrl: devnet.rpcUrl,
    manifestFile,
    databaseUrl: (database.forPonder("asset_v3") as { url: string }).url,
    schema: "asset_v3",
    viewsSchema: "asset",
    env: { LOG_LEVEL: logLevel, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `startuplog:${randomUUID().slice(0, 8)}:` },
  });
  started.push(api);
  await api.waitFor200("/health", 60_000);
  const deadline = Date.now() + 10_000;
  while (!api.log().includes('"msg":"listening"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await api.stop();
  // stderr carries nothing at these levels but Node's own lines; stdout is the log.
  return api
    .log()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("the API process's start-up log", () => {
  it("`api configured` names the schema it reads (the views) and DATABASE_SCHEMA; every line has time and level", async () => {
    const lines = await startupLines("info");
    const configured = lines.find((l) => l.msg === "api configured");
    expect(configured?.config).toEqual(expect.stringContaining("indexSchema=asset viewsSchema=asset schema=asset_v3"));
    const listening = lines.find((l) => l.msg === "listening");
    expect(listening).toMatchObject({ level: "info", listening: { port: expect.any(Number), host: "127.0.0.1" } });
    for (const line of lines) {
      expect(line, JSON.stringify(line)).toMatchObject({ time: expect.any(String), level: expect.any(String) });
    }
  });

  it("`api configured` shows REDIS_URL's scheme, host and port, with or without a password (never the password)", async () => {
    // A port nothing listens on (this file's own): Redis refused is an outage, the process starts degraded.
    for (const [url, shown] of [
      ["redis://127.0.0.1:46300", "redis=redis://127.0.0.1:46300 "],
      ["redis://:hunter22pw@127.0.0.1:46300", "redis=redis://127.0.0.1:46300/*** "],
    ] as const) {
      const lines = await startupLines("info", url);
      const configured = lines.find((l) => l.msg === "api configured");
      expect(configured?.config, url).toEqual(expect.stringContaining(shown));
      expect(JSON.stringify(lines)).not.toContain("hunter22pw");
    }
  });

  it("LOG_LEVEL=error still prints the listening line, as a log line", async () => {
    const lines = await startupLines("error");
    expect(lines.filter((l) => l.msg === "listening")).toEqual([
      {
        time: expect.any(String),
        level: "info",
        msg: "listening",
        listening: expect.objectContaining({ host: "127.0.0.1" }),
      },
    ]);
  });
});
